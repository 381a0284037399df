import { setTimeout as sleep } from 'node:timers/promises';
import type SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  RawNode,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { Lock } from '../platform/lock.js';
import { isBusy } from './failures.js';
import type { WriteTurns } from './write-turns.js';

/** Runs one compiled statement on a SQLite connection: this thread's, or a thread's of its own. */
export interface StatementRunner {
  run<R>(query: CompiledQuery): Promise<QueryResult<R>>;
  /** Rows one at a time (a select on this thread's connection). */
  iterate<R>(query: CompiledQuery): Iterable<R>;
  close(): Promise<void>;
}

/**
 * Statements that cannot write. Anything else (raw SQL that is not a select included) waits for
 * the write lock: mistaking a read for a write only makes it wait.
 */
function readsOnly(query: CompiledQuery): boolean {
  if (SelectQueryNode.is(query.query)) return true;
  return RawNode.is(query.query) && /^\s*select\b/i.test(query.sql);
}

/**
 * How long (ms) a statement of the service waits for another process's write lock (the CLI's
 * import, say) before it is refused: a request then answers 503 with Retry-After.
 */
export const defaultLockWaitMs = 2_000;

/**
 * The longest pause (ms) between two tries for the lock: shorter than the pause the CLI's import
 * makes between its batches (`batchPauseMs` in services/import.ts), so a waiting write finds the
 * lock free in one of them.
 */
const lockRetryMaxMs = 16;

const beginImmediate = CompiledQuery.raw('begin immediate');

const noTransactionActive = (error: unknown): boolean => /no transaction is active/.test(String((error as Error | null)?.message));

/** Leases kept for reuse; a burst of more statements at once makes more, which are then dropped. */
const maxIdleLeases = 64;

/** What Kysely holds between acquiring and releasing "the connection": a lease, not the connection. */
class Lease implements DatabaseConnection {
  inTransaction = false;

  constructor(private readonly driver: SqliteDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.execute<R>(this, query);
  }

  streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    return this.driver.stream<R>(this, query);
  }
}

/**
 * Kysely's SQLite driver, with one difference: a connection is held per statement or per
 * transaction, not for as long as Kysely holds its connection object, and writes also take
 * `writes`, a lock shared with the other connection of this process (`OffLoopDatabase`), so the
 * two never write at once. SQLite lets one connection write at a time, and a write that found the
 * other connection writing would wait in `busy_timeout`, holding the event loop; here it waits in
 * the lock, asynchronously. Readers never wait for the other connection's writes (WAL). Another
 * process's write lock (the CLI's) is waited for asynchronously as well (`whenUnlocked`).
 */
class SqliteDriver implements Driver {
  private readonly connection = new Lock();
  /**
   * Leases given back, handed out again: Kysely keeps every connection object it is given in a
   * WeakSet, and a new lease per statement was a new entry per statement in that weak table of
   * the old generation, which young collections visit.
   */
  private readonly idle: Lease[] = [];

  constructor(
    private readonly runner: StatementRunner,
    private readonly writes: Lock,
    private readonly lockWaitMs: number,
    private readonly turns: WriteTurns | undefined,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.idle.pop() ?? new Lease(this);
  }

  /** A lease given back inside its transaction is not handed out again: it would skip the locks. */
  async releaseConnection(lease: Lease): Promise<void> {
    if (!lease.inTransaction && this.idle.length < maxIdleLeases) this.idle.push(lease);
  }

  async beginTransaction(lease: Lease): Promise<void> {
    await this.writes.acquire();
    try {
      // IMMEDIATE takes SQLite's write lock now, where waiting for another process's is retried
      // (`whenUnlocked`); a deferred transaction would find it taken only at its first write.
      await this.whenUnlocked(() => this.runner.run(beginImmediate), true);
    } catch (error) {
      this.writes.release();
      throw error;
    }
    lease.inTransaction = true;
  }

  async commitTransaction(lease: Lease): Promise<void> {
    // A failed commit leaves the transaction open: Kysely rolls it back next.
    await this.runner.run(CompiledQuery.raw('commit'));
    this.end(lease);
  }

  /**
   * SQLite has already rolled back a transaction whose statement failed for want of room
   * (SQLITE_FULL), memory or I/O: the rollback then fails too, and its error (“cannot rollback -
   * no transaction is active”) would replace the cause that Kysely is about to throw.
   */
  async rollbackTransaction(lease: Lease): Promise<void> {
    try {
      await this.runner.run(CompiledQuery.raw('rollback'));
    } catch (error) {
      if (!noTransactionActive(error)) throw error;
    } finally {
      this.end(lease);
    }
  }

  private end(lease: Lease): void {
    lease.inTransaction = false;
    this.connection.release();
    this.writes.release();
  }

  async execute<R>(lease: Lease, query: CompiledQuery): Promise<QueryResult<R>> {
    if (lease.inTransaction) return this.runner.run<R>(query);
    const writes = !readsOnly(query);
    if (writes) await this.writes.acquire();
    try {
      return await this.whenUnlocked(() => this.runner.run<R>(query), false);
    } finally {
      if (writes) this.writes.release();
    }
  }

  /**
   * Runs `statement` on the connection; while another process holds SQLite's write lock
   * (SQLITE_BUSY: the connection's `busy_timeout` is 0, so SQLite never waits on the event loop),
   * tries again after a pause, the connection free for others meanwhile, until `lockWaitMs` have
   * passed: then the SQLITE_BUSY goes to the caller (503 service_unavailable). `keep` keeps the
   * connection once the statement has run (a transaction's `begin`).
   */
  private async whenUnlocked<T>(statement: () => Promise<T>, keep: boolean): Promise<T> {
    const deadline = performance.now() + this.lockWaitMs;
    let stopWaiting: (() => void) | undefined;
    try {
      for (let attempt = 0; ; attempt++) {
        await this.connection.acquire();
        try {
          const result = await statement();
          if (!keep) this.connection.release();
          return result;
        } catch (error) {
          this.connection.release();
          if (!isBusy(error) || performance.now() >= deadline) throw error;
        }
        stopWaiting ??= this.turns?.waiting();
        await sleep(Math.min(lockRetryMaxMs, 2 ** attempt, Math.max(0, deadline - performance.now())));
      }
    } finally {
      stopWaiting?.();
    }
  }

  async *stream<R>(lease: Lease, query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(query.query)) throw new Error('SQLite streams select queries only.');
    if (!lease.inTransaction) await this.connection.acquire();
    try {
      for (const row of this.runner.iterate<R>(query)) yield { rows: [row] };
    } finally {
      if (!lease.inTransaction) this.connection.release();
    }
  }

  destroy(): Promise<void> {
    return this.runner.close();
  }
}

/**
 * Kysely (0.28 on) lets one query at a time have a SQLite connection object, a transaction for
 * its whole length: a read then waited for every transaction, one that waits for another
 * process's write lock included. The driver's leases take the locks themselves.
 */
class LeasingSqliteAdapter extends SqliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

/** Runs one statement outside any transaction, as Kysely's executor would, without it. */
export type DirectRun = <R>(query: CompiledQuery) => Promise<QueryResult<R>>;

/**
 * A Kysely dialect for a SQLite connection reached through `runner`, writing under `writes`, and
 * `run`: the same driver's statements without Kysely's executor (see `precompiled`).
 */
export function sqliteDialect(runner: StatementRunner, writes: Lock, lockWaitMs = defaultLockWaitMs, turns?: WriteTurns): { dialect: Dialect; run: DirectRun } {
  const driver = new SqliteDriver(runner, writes, lockWaitMs, turns);
  const outside = new Lease(driver);
  return {
    dialect: {
      createDriver: () => driver,
      createQueryCompiler: () => new SqliteQueryCompiler(),
      createAdapter: () => new LeasingSqliteAdapter(),
      createIntrospector: (db) => new SqliteIntrospector(db),
    },
    run: (query) => driver.execute(outside, query),
  };
}

/** What a statement that returns no rows gives Kysely: as its own SQLite driver gives it. */
export function runResult<R>(changes: number, lastInsertRowid: number | bigint): QueryResult<R> {
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/** Statements on this thread's connection, each prepared once (`prepare` keeps them). */
export function localRunner(prepare: (sql: string) => SQLite.Statement, close: () => void): StatementRunner {
  return {
    run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      const statement = prepare(query.sql);
      if (statement.reader) return Promise.resolve({ rows: statement.all(query.parameters) as R[] });
      const { changes, lastInsertRowid } = statement.run(query.parameters);
      return Promise.resolve(runResult<R>(changes, lastInsertRowid));
    },
    iterate: <R>(query: CompiledQuery) => prepare(query.sql).iterate(query.parameters) as Iterable<R>,
    close: async () => close(),
  };
}
