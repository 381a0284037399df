import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { CompiledQuery, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type Db, isUniqueViolation } from '../../src/db/connect.js';
import { bodyBytes, OffLoopRunner } from '../../src/db/off-loop.js';
import { Lock } from '../../src/platform/lock.js';
import { nicedThreads } from '../helpers/threads.js';

// A SQLite node has a second connection in a thread of its own (src/db/off-loop.ts) for the
// statements that move megabytes. The two connections' writes take turns in a lock
// (src/db/sqlite-driver.ts): a write never waits for the other in busy_timeout, on the event loop.

const opened: { db: Db; dir: string }[] = [];
afterEach(async () => {
  for (const { db, dir } of opened.splice(0)) {
    await db.kysely.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

async function open() {
  const dir = mkdtempSync(join(tmpdir(), 'anchorage-off-loop-'));
  const db = connect(undefined, dir);
  opened.push({ db, dir });
  await sql`create table t (id integer primary key, x text, b blob, n integer)`.execute(db.kysely);
  return { db, offLoop: db.offLoop! };
}

describe('Lock', () => {
  it('is handed to the waiters in the order they asked, one at a time', async () => {
    const lock = new Lock();
    const order: string[] = [];
    await lock.acquire();
    const waiters = ['a', 'b', 'c'].map(async (name) => {
      await lock.acquire();
      order.push(`${name} in`);
      await sleep(5);
      order.push(`${name} out`);
      lock.release();
    });
    await sleep(5);
    expect(order).toEqual([]);
    lock.release();
    await Promise.all(waiters);
    expect(order).toEqual(['a in', 'a out', 'b in', 'b out', 'c in', 'c out']);
    await lock.acquire();
    lock.release();
  });
});

describe('the off-loop SQLite connection', () => {
  it("keeps a page cache of SQLite's default 2 MB, as the event loop's does (better-sqlite3 builds in 16 MB)", async () => {
    const { db, offLoop } = await open();
    for (const connection of [db.kysely, offLoop]) {
      expect((await sql<{ cache_size: number }>`pragma cache_size`.execute(connection)).rows).toEqual([{ cache_size: -2000 }]);
    }
  });

  it('stores and reads back large texts (every part boundary, multi-byte), blobs, numbers and nulls exactly', async () => {
    const { db, offLoop } = await open();
    // 3 × 256 Ki characters and more: emoji (surrogate pairs) fall across every part boundary.
    const large = 'a😀é'.repeat(300_000);
    const blob = Buffer.from([0, 1, 2, 250, 255]);
    const inserted = await offLoop.insertInto('t' as never).values({ x: large, b: blob, n: 42 } as never).returning(['id' as never]).executeTakeFirstOrThrow();
    await offLoop.insertInto('t' as never).values({ x: null, b: null, n: null } as never).execute();
    const id = (inserted as { id: number }).id;
    const fromLoop = (await sql<{ x: string; b: Buffer; n: number }>`select x, b, n from t where id = ${id}`.execute(db.kysely)).rows[0]!;
    expect(fromLoop.x === large).toBe(true);
    expect(fromLoop.b.equals(blob)).toBe(true);
    expect(fromLoop.n).toBe(42);
    const fromThread = (await sql<{ x: string; b: Buffer }>`select x, b from t where id = ${id}`.execute(offLoop)).rows[0]!;
    expect(fromThread.x === large).toBe(true);
    expect(Buffer.isBuffer(fromThread.b) && fromThread.b.equals(blob)).toBe(true);
    expect((await sql`select * from t where x is null`.execute(offLoop)).rows).toEqual([{ id: id + 1, x: null, b: null, n: null }]);
  });

  it('reads a large text as its UTF-8 bytes (bodyBytes), handed over whole', async () => {
    const { offLoop } = await open();
    const large = 'a😀é'.repeat(300_000);
    const inserted = await offLoop.insertInto('t' as never).values({ x: large } as never).returning(['id' as never]).executeTakeFirstOrThrow();
    const id = (inserted as { id: number }).id;
    const { rows } = await sql<{ x: Buffer }>`select ${bodyBytes} as x from (select x as body from t where id = ${id})`.execute(offLoop);
    const bytes = rows[0]!.x;
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.equals(Buffer.from(large, 'utf8'))).toBe(true);
    // Transferred, not copied: the bytes have a buffer of their own.
    expect(bytes.buffer.byteLength).toBe(bytes.byteLength);
  });

  it('reads texts on both sides of 64 Ki characters exactly, several large ones in one answer', async () => {
    const { offLoop } = await open();
    const texts = ['é'.repeat(64 * 1024 - 1), 'é'.repeat(64 * 1024), `${'x'.repeat(100_000)}😀`, '“quoted”'.repeat(20_000)];
    for (const x of texts) await offLoop.insertInto('t' as never).values({ x } as never).execute();
    const rows = (await sql<{ x: string; copy: string }>`select x, x || '!' as copy from t order by id`.execute(offLoop)).rows;
    expect(rows.map(({ x }) => x)).toEqual(texts);
    expect(rows.map(({ copy }) => copy)).toEqual(texts.map((x) => `${x}!`));
  });

  it('answers SQLite errors as SQLite errors, with their codes', async () => {
    const { offLoop } = await open();
    await sql`insert into t (id, x) values (1, 'a')`.execute(offLoop);
    const refused = await sql`insert into t (id, x) values (1, 'b')`.execute(offLoop).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SQLite.SqliteError);
    expect(isUniqueViolation(refused)).toBe(true);
    await expect(sql`select * from no_such_table`.execute(offLoop)).rejects.toThrow(/no such table/);
    // The connection is still usable, and a failed transaction is rolled back.
    await expect(
      offLoop.transaction().execute(async (trx) => {
        await sql`insert into t (id, x) values (2, 'b')`.execute(trx);
        await sql`insert into t (id, x) values (1, 'c')`.execute(trx);
      }),
    ).rejects.toThrow();
    expect((await sql`select id, x from t order by id`.execute(offLoop)).rows).toEqual([{ id: 1, x: 'a' }]);
  });

  it('while it writes, the event loop connection reads at once and its writes wait without holding the loop', async () => {
    const { db, offLoop } = await open();
    await sql`insert into t (id, x) values (1, 'before')`.execute(db.kysely);
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const writing = offLoop.transaction().execute(async (trx) => {
      await sql`update t set x = 'off-loop' where id = 1`.execute(trx);
      await held;
    });
    await sleep(20);
    const events: string[] = [];
    // Without the lock this insert would wait in busy_timeout (5 s), holding the event loop, and
    // then fail with SQLITE_BUSY: the transaction above finishes only through the loop.
    const write = sql`insert into t (id, x) values (2, 'loop')`.execute(db.kysely).then(() => events.push('loop write'));
    const read = await sql<{ x: string }>`select x from t where id = 1`.execute(db.kysely);
    expect(read.rows[0]!.x).toBe('before');
    await sleep(20);
    events.push('timer');
    finish();
    await writing;
    await write;
    expect(events).toEqual(['timer', 'loop write']);
    expect((await sql`select id, x from t order by id`.execute(db.kysely)).rows).toEqual([
      { id: 1, x: 'off-loop' },
      { id: 2, x: 'loop' },
    ]);
  });

  it('its writes wait for a transaction of the event loop connection in the same way', async () => {
    const { db, offLoop } = await open();
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const order: string[] = [];
    const onLoop = db.kysely.transaction().execute(async (trx) => {
      await sql`insert into t (id, x) values (1, 'loop')`.execute(trx);
      await held;
      order.push('loop commits');
    });
    await sleep(10);
    const offLoopWrite = sql`update t set x = 'off-loop' where id = 1`.execute(offLoop).then((result) => {
      order.push('off-loop writes');
      return result.numAffectedRows;
    });
    await sleep(20);
    finish();
    await onLoop;
    expect(await offLoopWrite).toBe(1n);
    expect(order).toEqual(['loop commits', 'off-loop writes']);
  });

  it('is the only connection that cuts the write-ahead log back (64 MiB), in its own thread', async () => {
    const { db, offLoop } = await open();
    const limit = async (kysely: typeof offLoop) => Object.values((await sql.raw('pragma journal_size_limit').execute(kysely)).rows[0] as object)[0];
    expect(await limit(db.kysely)).toBe(-1);
    expect(await limit(offLoop)).toBe(64 * 1024 * 1024);
  });

  it('skips a checkpoint asked for in the middle of its transaction (SQLite refuses it there), and runs the next', async () => {
    const { db } = await open();
    const file = join(opened.at(-1)!.dir, 'anchorage.sqlite');
    await sql`insert into t (id, x) values (1, ${'x'.repeat(100_000)})`.execute(db.kysely);
    const runner = new OffLoopRunner({ file, walAutocheckpoint: 0, pageCacheKib: 2_000 });
    try {
      const before = statSync(file).size;
      await runner.run(CompiledQuery.raw('begin'));
      await runner.run(CompiledQuery.raw('update t set n = 1 where id = 1'));
      await runner.checkpoint();
      expect(statSync(file).size).toBe(before);
      await runner.run(CompiledQuery.raw('commit'));
      // The text went from the log into the database file.
      await runner.checkpoint();
      expect(statSync(file).size).toBeGreaterThan(before + 100_000);
    } finally {
      await runner.close();
    }
  });

  it('fails the statements in flight when its thread dies, and starts a new thread for the next', async () => {
    const { db } = await open();
    await sql`insert into t (id, x) values (1, 'a')`.execute(db.kysely);
    const runner = new OffLoopRunner({ file: join(opened.at(-1)!.dir, 'anchorage.sqlite'), walAutocheckpoint: 0, pageCacheKib: 2_000 });
    try {
      // A statement that runs a while, and the thread stopped under it (after the statement returns).
      const slow = runner.run(CompiledQuery.raw('with recursive c(n) as (select 1 union all select n + 1 from c where n < 2000000) select count(*) from c'));
      await sleep(50);
      await (runner as unknown as { worker: Worker }).worker.terminate();
      await expect(slow).rejects.toThrow(/off-loop SQLite thread stopped/);
      expect((await runner.run(CompiledQuery.raw('select x from t'))).rows).toEqual([{ x: 'a' }]);
    } finally {
      await runner.close();
    }
  });

  it("answers with SQLite's cause when its connection cannot be opened, every time, and works once it can", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anchorage-off-loop-'));
    const runner = new OffLoopRunner({ file: join(dir, 'missing', 'anchorage.sqlite'), walAutocheckpoint: 0, pageCacheKib: 2_000 });
    try {
      const select = CompiledQuery.raw('select 1 as one');
      // One after another (a new thread each time), and several at once on one thread.
      for (let attempt = 0; attempt < 5; attempt += 1) await expect(runner.run(select)).rejects.toThrow(/directory does not exist/);
      const together = await Promise.allSettled([runner.run(select), runner.run(select), runner.run(select)]);
      expect(together[0]).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/directory does not exist/) } });
      expect(together.every(({ status }) => status === 'rejected')).toBe(true);
      mkdirSync(join(dir, 'missing'));
      expect((await runner.run(select)).rows).toEqual([{ one: 1 }]);
    } finally {
      await runner.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts and works where a global gc is exposed (its script declares no name of its own that clashes)', async () => {
    const { db } = await open();
    await sql`insert into t (id, x) values (1, 'a')`.execute(db.kysely);
    setFlagsFromString('--expose-gc');
    const runner = new OffLoopRunner({ file: join(opened.at(-1)!.dir, 'anchorage.sqlite'), walAutocheckpoint: 0, pageCacheKib: 2_000 });
    try {
      const large = 'x'.repeat(3_000_000);
      await runner.run(CompiledQuery.raw('update t set x = ? where id = 1', [large]));
      expect((await runner.run(CompiledQuery.raw('select length(x) as n from t'))).rows).toEqual([{ n: large.length }]);
    } finally {
      setFlagsFromString('--no-expose-gc');
      await runner.close();
    }
  });

  it('keeps the process alive while it owes an answer, and only then', async () => {
    const { db } = await open();
    await sql`insert into t (id, x) values (1, 'a')`.execute(db.kysely);
    const ports = () => process.getActiveResourcesInfo().filter((resource) => resource === 'MessagePort').length;
    const before = ports();
    const runner = new OffLoopRunner({ file: join(opened.at(-1)!.dir, 'anchorage.sqlite'), walAutocheckpoint: 0, pageCacheKib: 2_000 });
    try {
      const answers = [runner.run(CompiledQuery.raw('select x from t')), runner.run(CompiledQuery.raw('select count(*) as n from t'))];
      expect(ports()).toBe(before + 1);
      expect((await answers[0]!).rows).toEqual([{ x: 'a' }]);
      expect((await answers[1]!).rows).toEqual([{ n: 1 }]);
      expect(ports()).toBe(before);
    } finally {
      await runner.close();
    }
  });

  it.skipIf(process.platform !== 'linux')('runs its thread below the event loop’s priority, so a 5 MB commit cannot take a core from the loop', async () => {
    const { db } = await open();
    const before = nicedThreads();
    const runner = new OffLoopRunner({ file: join(opened.at(-1)!.dir, 'anchorage.sqlite'), walAutocheckpoint: 0, pageCacheKib: 2_000 });
    try {
      await sql`insert into t (id, x) values (1, 'a')`.execute(db.kysely);
      expect((await runner.run(CompiledQuery.raw('select x from t'))).rows).toEqual([{ x: 'a' }]);
      expect(nicedThreads()).toBe(before + 1);
      expect(getPriority()).toBe(0);
    } finally {
      await runner.close();
    }
  });

  it('starts its thread again after it stopped', async () => {
    const { db } = await open();
    await sql`insert into t (id, x) values (1, 'a')`.execute(db.kysely);
    const runner = new OffLoopRunner({ file: join(opened.at(-1)!.dir, 'anchorage.sqlite'), walAutocheckpoint: 0, pageCacheKib: 2_000 });
    try {
      const select = CompiledQuery.raw('select x from t');
      expect((await runner.run(select)).rows).toEqual([{ x: 'a' }]);
      await runner.close();
      expect((await runner.run(select)).rows).toEqual([{ x: 'a' }]);
    } finally {
      await runner.close();
    }
  });
});
