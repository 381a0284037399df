import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { migrate } from '../../src/db/migrate.js';

// `anchorage import` started while another process held SQLite's write lock
// for longer than 5 s exited with "database is locked", whatever the CLI's own wait for the lock:
// opening the file (its `optimize`, which writes statistics) waited 5 s and gave up.

/** Another connection, in a thread of its own, holds the write lock for `holdMs` and lets it go. */
const holder = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.module);
const db = new SQLite(workerData.file);
db.exec('begin immediate');
parentPort.postMessage('locked');
setTimeout(() => {
  db.exec('rollback');
  db.close();
  parentPort.postMessage('released');
}, workerData.holdMs);
`;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('opening a SQLite database while another connection writes', () => {
  it('waits for the write lock as long as the connection is told to wait for it (the CLI: past the 5 s a serving node waits)', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anchorage-open-lock-'));
    dirs.push(dir);
    const migrated = connect(undefined, dir);
    await migrate(migrated);
    await migrated.kysely.destroy();
    const file = join(dir, 'anchorage.sqlite');

    const worker = new Worker(holder, {
      eval: true,
      workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), file, holdMs: 8_000 },
    });
    try {
      await expect(once(worker, 'message')).resolves.toEqual(['locked']);
      // Why opening needs the lock: `optimize` analyses the tables, empty ones every time.
      const probe = new SQLite(file);
      probe.pragma('busy_timeout = 0');
      expect(() => probe.pragma('optimize = 0x10002')).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));
      probe.close();

      const released = once(worker, 'message');
      // Synchronous: the lock is let go by the other thread while this one waits in SQLite.
      const db = connect(undefined, dir, { lockWaitMs: 60_000 });
      try {
        await expect(released).resolves.toEqual(['released']);
        const sites = await db.kysely.selectFrom('sites').select('id').execute();
        expect(sites).toEqual([]);
      } finally {
        await db.kysely.destroy();
      }
    } finally {
      await worker.terminate();
    }
  });
});
