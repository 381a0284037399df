import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { BackgroundCheckpoints } from '../../src/db/checkpoints.js';
import { connect, type Db } from '../../src/db/connect.js';
import { OffLoopRunner } from '../../src/db/off-loop.js';

// A serving node's SQLite connection leaves checkpoints (copying the write-ahead log into the
// database file) to the off-loop connection's thread (src/db/checkpoints.ts), so a commit never pays for them.

const opened: { db: Db; dir: string }[] = [];
afterEach(async () => {
  for (const { db, dir } of opened.splice(0)) {
    await db.kysely.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

function open(checkpointInBackground: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'anchorage-checkpoints-'));
  const db = connect(undefined, dir, { checkpointInBackground });
  opened.push({ db, dir });
  return { db, file: join(dir, 'anchorage.sqlite') };
}

const pragma = async (db: Db, name: string) => Object.values((await sql.raw(`pragma ${name}`).execute(db.kysely)).rows[0] as object)[0];

/** The salts of `file`'s write-ahead log (bytes 16–23 of its header), new at each restart of the log. */
const salts = (file: string) => {
  const header = Buffer.alloc(24);
  const fd = openSync(`${file}-wal`, 'r');
  readSync(fd, header, 0, 24, 0);
  closeSync(fd);
  return header.subarray(16).toString('hex');
};

/** Writes about 6 MB in one commit: past the 4 MB of log at which a checkpoint runs. */
const writeLarge = async (db: Db) => {
  await sql`create table t (x text)`.execute(db.kysely);
  await sql`insert into t values (${'x'.repeat(6_000_000)})`.execute(db.kysely);
};

describe('background checkpoints (SQLite)', () => {
  it('keep commits from checkpointing, and copy the log into the database file from the off-loop thread', async () => {
    const { db, file } = open(true);
    expect(await pragma(db, 'wal_autocheckpoint')).toBe(0);
    await writeLarge(db);
    expect(statSync(file).size).toBeLessThan(1_000_000);
    // The first of the file: the off-loop thread starts from the TypeScript sources, transpiled as
    // it loads them (the built service loads JavaScript), which on a busy machine takes seconds.
    await expect.poll(() => statSync(file).size, { timeout: 20_000, interval: 100 }).toBeGreaterThan(6_000_000);
    expect(await pragma(db, 'wal_autocheckpoint')).toBe(0);
    expect((await sql<{ n: number }>`select length(x) as n from t`.execute(db.kysely)).rows[0]!.n).toBe(6_000_000);
  });

  it('restart the log in the off-loop thread, so no commit of the event loop restarts it (and waits for the disk)', async () => {
    const { db, file } = open(true);
    await sql`create table t (x text)`.execute(db.kysely);
    const before = salts(file);
    await sql`insert into t values (${'x'.repeat(6_000_000)})`.execute(db.kysely);
    expect(salts(file)).toBe(before);
    // Copied into the database file and restarted, with no commit of ours.
    await expect.poll(() => salts(file), { timeout: 5_000, interval: 50 }).not.toBe(before);
    expect(statSync(file).size).toBeGreaterThan(6_000_000);
    const restarted = salts(file);
    // A log that holds only the restart is left alone at the next looks (every 250 ms): restarted
    // again, it would be restarted by the event loop's next commit once more, and every restart is
    // a commit this connection sees (`data_version`), which empties the keys and sites it keeps.
    const version = await pragma(db, 'data_version');
    await sleep(1_000);
    expect(salts(file)).toBe(restarted);
    expect(await pragma(db, 'data_version')).toBe(version);
    await sql`insert into t values ('a')`.execute(db.kysely);
    expect(salts(file)).toBe(restarted);
    // The restart's commit changed nothing: the header page's user version is as it was.
    expect(await pragma(db, 'user_version')).toBe(0);
    expect((await sql<{ n: number }>`select count(*) as n from t`.execute(db.kysely)).rows[0]!.n).toBe(2);
    // The thread's own commits leave the checkpoints to it too.
    expect(Object.values((await sql.raw('pragma wal_autocheckpoint').execute(db.offLoop!)).rows[0] as object)[0]).toBe(0);
  });

  it('let the event loop write again when the restart’s commit is refused, and restart the log at a later look', async () => {
    const { db, file } = open(true);
    await writeLarge(db);
    // Another process (the CLI) takes the write lock: the thread's copy of the log succeeds, and
    // its restart's commit finds the lock taken and is put off to a later look.
    // (Should the thread restart the log before the lock is taken, the salts read after it are
    // the restarted ones, and the test checks the next restart instead of a refused one.)
    const other = new SQLite(file);
    other.exec('begin immediate');
    const before = salts(file);
    await expect.poll(() => statSync(file).size, { timeout: 5_000, interval: 50 }).toBeGreaterThan(6_000_000);
    await sleep(6_000);
    expect(salts(file)).toBe(before);
    other.exec('rollback');
    other.close();
    // The thread let go of this process's write turn: the event loop writes, and a later look
    // restarts the log.
    await sql`insert into t values ('a')`.execute(db.kysely);
    await expect.poll(() => salts(file), { timeout: 8_000, interval: 50 }).not.toBe(before);
    expect((await sql<{ n: number }>`select count(*) as n from t`.execute(db.kysely)).rows[0]!.n).toBe(2);
    expect(await pragma(db, 'user_version')).toBe(0);
  }, 30_000);

  it('are not used by other connections (the CLI), which checkpoint in their commits', async () => {
    const { db, file } = open(false);
    // 4 MB of log, in pages of 16 KiB.
    expect(await pragma(db, 'page_size')).toBe(16_384);
    expect(await pragma(db, 'wal_autocheckpoint')).toBe(250);
    await writeLarge(db);
    expect(statSync(file).size).toBeGreaterThan(6_000_000);
  });

  it('run at 4 MB of log in a database made with 4 KiB pages, which keeps them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anchorage-checkpoints-'));
    const made = new SQLite(join(dir, 'anchorage.sqlite'));
    made.pragma('page_size = 4096');
    made.pragma('journal_mode = WAL');
    made.exec('create table t (x text)');
    made.close();
    const db = connect(undefined, dir);
    opened.push({ db, dir });
    expect(await pragma(db, 'page_size')).toBe(4096);
    expect(await pragma(db, 'wal_autocheckpoint')).toBe(1000);
  });

  it('fall back to checkpointing in commits when their thread keeps failing, and say so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anchorage-checkpoints-'));
    const database = new SQLite(join(dir, 'anchorage.sqlite'));
    database.pragma('journal_mode = WAL');
    // The off-loop thread opens its own connection to this file, in a directory that does not exist: it fails.
    const offLoop = new OffLoopRunner({ file: join(dir, 'missing', 'anchorage.sqlite'), walAutocheckpoint: 0, pageCacheKib: 2_000 });
    const warnings: string[] = [];
    const checkpoints = new BackgroundCheckpoints(join(dir, 'anchorage.sqlite'), database, () => offLoop.checkpoint(), {
      startAtBytes: 0,
      warn: (message, error) => warnings.push(`${message}: ${String(error)}`),
    });
    try {
      expect(database.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      // SQLite's default, which this connection had before.
      await expect.poll(() => database.pragma('wal_autocheckpoint', { simple: true }), { timeout: 30_000, interval: 100 }).toBe(1000);
      expect(warnings).toEqual([expect.stringMatching(/^SQLite checkpoints failed 8 times in a row .*: .*(missing|directory|unable to open)/i)]);
    } finally {
      checkpoints.close();
      database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ask again after a checkpoint that failed, and keep commits from checkpointing while one succeeds now and then', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anchorage-checkpoints-'));
    const database = new SQLite(join(dir, 'anchorage.sqlite'));
    database.pragma('journal_mode = WAL');
    let asked = 0;
    const warnings: string[] = [];
    // Every third checkpoint succeeds: the failures never come 8 in a row.
    const checkpoints = new BackgroundCheckpoints(
      join(dir, 'anchorage.sqlite'),
      database,
      async () => {
        asked += 1;
        if (asked % 3 !== 0) throw new Error('database table is locked');
      },
      { startAtBytes: 0, warn: (message) => warnings.push(message) },
    );
    try {
      await expect.poll(() => asked, { timeout: 5_000, interval: 50 }).toBeGreaterThanOrEqual(10);
      expect(database.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      expect(warnings).toEqual([]);
    } finally {
      checkpoints.close();
      database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
