import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WriteTurns } from '../../src/db/write-turns.js';

let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'anchorage-turns-'));
  file = join(dir, 'anchorage.sqlite');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A process that does not run (above Linux's largest pid). */
const ended = 999_999_999;

/** Another process's marker, as its `waiting()` leaves it: by default this one's parent, which runs. */
const otherWaits = (pid = process.ppid) => {
  const marker = join(dir, `anchorage.sqlite-waiting-${pid}`);
  writeFileSync(marker, '');
  return marker;
};

describe('turns at SQLite’s write lock between processes', () => {
  it('marks this process waiting while any of its statements waits, and unmarks it once the last stops', () => {
    const turns = new WriteTurns(file, 2_000);
    const first = turns.waiting();
    const second = turns.waiting();
    expect(readdirSync(dir)).toEqual([`anchorage.sqlite-waiting-${process.pid}`]);
    first();
    expect(readdirSync(dir)).toHaveLength(1);
    second();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('gives way while another process waits, until it has stopped', async () => {
    const turns = new WriteTurns(file, 5_000);
    const marker = otherWaits();
    setTimeout(() => rmSync(marker), 100);
    const started = performance.now();
    await turns.giveWay();
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(90);
    expect(waited).toBeLessThan(4_000);
  });

  it('gives way at most as long as a node’s write waits, to a process that keeps waiting', async () => {
    otherWaits();
    const started = performance.now();
    await new WriteTurns(file, 50).giveWay();
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('does not give way to itself, to a marker left by a process that ended, nor to another database’s', async () => {
    const turns = new WriteTurns(file, 2_000);
    turns.waiting();
    otherWaits(ended);
    writeFileSync(join(dir, `other.sqlite-waiting-${process.ppid}`), '');
    const started = performance.now();
    await turns.giveWay();
    expect(performance.now() - started).toBeLessThan(1_000);
    turns.close();
    expect(readdirSync(dir).sort()).toEqual([`anchorage.sqlite-waiting-${ended}`, `other.sqlite-waiting-${process.ppid}`]);
  });

  it('a directory it cannot write to only loses the process its turn', () => {
    const turns = new WriteTurns(join(dir, 'missing', 'anchorage.sqlite'), 2_000);
    expect(() => turns.waiting()()).not.toThrow();
  });
});
