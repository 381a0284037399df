import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CompiledQuery, type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Lock } from '../../src/platform/lock.js';
import { connect, type Db } from '../../src/db/connect.js';
import { precompiled } from '../../src/db/precompiled.js';
import type { Database } from '../../src/db/schema.js';
import { sqliteDialect, type StatementRunner } from '../../src/db/sqlite-driver.js';

// Precompiled reads on SQLite run on the driver without Kysely's executor, and the driver hands
// its leases out again (src/db/sqlite-driver.ts, src/db/precompiled.ts). Both must keep what the
// executor's path gave: a read never runs inside another caller's transaction on the connection.

const opened: { db: Db; dir: string }[] = [];
afterEach(async () => {
  for (const { db, dir } of opened.splice(0)) {
    await db.kysely.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

async function open(traced = false) {
  const dir = mkdtempSync(join(tmpdir(), 'anchorage-driver-'));
  const db = connect(undefined, dir, { traced });
  opened.push({ db, dir });
  await sql`create table t (id integer primary key, x text)`.execute(db.kysely);
  return db.kysely as unknown as Kysely<Database>;
}

const countOf = (db: Kysely<Database>) =>
  precompiled(
    db,
    (db as unknown as Kysely<{ t: { id: number; x: string } }>)
      .selectFrom('t')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('x', '<>', ''),
  );

describe('precompiled reads on SQLite', () => {
  for (const traced of [false, true]) {
    it(`wait for a transaction running on the connection and read what it committed (${traced ? 'traced, through Kysely' : 'the direct path'})`, async () => {
      const db = await open(traced);
      const throughExecutor = vi.spyOn(db, 'executeQuery');
      const count = countOf(db);
      expect(await count('')).toEqual([{ n: 0 }]);
      expect(throughExecutor).toHaveBeenCalledTimes(traced ? 1 : 0);
      let commit!: () => void;
      const gate = new Promise<void>((resolve) => (commit = resolve));
      const transaction = db.transaction().execute(async (trx) => {
        await sql`insert into t (x) values ('a'), ('b')`.execute(trx);
        await gate;
      });
      await sleep(5);
      let read: { n: number }[] | undefined;
      const reading = count('').then((rows) => (read = rows));
      await sleep(20);
      expect(read).toBeUndefined();
      commit();
      await transaction;
      await reading;
      expect(read).toEqual([{ n: 2 }]);
    });
  }

  it('refuse the wrong number of parameters, on either path', async () => {
    for (const traced of [false, true]) {
      const count = countOf(await open(traced));
      await expect(count()).rejects.toThrow(/Expected 1 parameters, got 0/);
      await expect(count('a', 'b')).rejects.toThrow(/Expected 1 parameters, got 2/);
    }
  });

  it('give the rows a failed transaction left, none of its own', async () => {
    const db = await open();
    const count = countOf(db);
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`insert into t (x) values ('a')`.execute(trx);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await count('')).toEqual([{ n: 0 }]);
  });
});

describe('the SQLite driver', () => {
  const runner: StatementRunner = {
    run: async () => ({ rows: [] }),
    iterate: () => [],
    close: async () => {},
  };

  it('hands a released lease out again, and a new one while the first is held', async () => {
    const driver = sqliteDialect(runner, new Lock()).dialect.createDriver();
    const first = await driver.acquireConnection();
    const second = await driver.acquireConnection();
    expect(second).not.toBe(first);
    await driver.releaseConnection(first);
    expect(await driver.acquireConnection()).toBe(first);
    await driver.releaseConnection(second);
    expect(await driver.acquireConnection()).toBe(second);
  });

  it('never hands out again a lease given back inside its transaction', async () => {
    const driver = sqliteDialect(runner, new Lock()).dialect.createDriver();
    const lease = await driver.acquireConnection();
    await driver.beginTransaction(lease, {});
    await driver.releaseConnection(lease);
    expect(await driver.acquireConnection()).not.toBe(lease);
  });

  it('keeps at most 64 leases after a burst', async () => {
    const driver = sqliteDialect(runner, new Lock()).dialect.createDriver();
    const burst = await Promise.all(Array.from({ length: 100 }, () => driver.acquireConnection()));
    for (const lease of burst) await driver.releaseConnection(lease);
    const again = await Promise.all(Array.from({ length: 100 }, () => driver.acquireConnection()));
    expect(again.filter((lease) => burst.includes(lease))).toHaveLength(64);
  });

  it('runs a statement given to the direct path outside a transaction, under the write lock when it writes', async () => {
    const ran: string[] = [];
    const writes = new Lock();
    const { run } = sqliteDialect({ ...runner, run: async (query) => (ran.push(query.sql), { rows: [] }) }, writes);
    await writes.acquire();
    const writing = run(CompiledQuery.raw('insert into t (x) values (1)'));
    await sleep(5);
    expect(ran).toEqual([]);
    writes.release();
    await writing;
    expect(ran).toEqual(['insert into t (x) values (1)']);
  });
});
