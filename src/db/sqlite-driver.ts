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
import { Lock } from '../core/lock.js';

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
 * the lock, asynchronously. Readers never wait for the other connection's writes (WAL).
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
    await this.connection.acquire();
    lease.inTransaction = true;
    try {
      await this.runner.run(CompiledQuery.raw('begin'));
    } catch (error) {
      this.end(lease);
      throw error;
    }
  }

  async commitTransaction(lease: Lease): Promise<void> {
    // A failed commit leaves the transaction open: Kysely rolls it back next.
    await this.runner.run(CompiledQuery.raw('commit'));
    this.end(lease);
  }

  async rollbackTransaction(lease: Lease): Promise<void> {
    try {
      await this.runner.run(CompiledQuery.raw('rollback'));
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
    await this.connection.acquire();
    try {
      return await this.runner.run<R>(query);
    } finally {
      this.connection.release();
      if (writes) this.writes.release();
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

/** Runs one statement outside any transaction, as Kysely's executor would, without it. */
export type DirectRun = <R>(query: CompiledQuery) => Promise<QueryResult<R>>;

/**
 * A Kysely dialect for a SQLite connection reached through `runner`, writing under `writes`, and
 * `run`: the same driver's statements without Kysely's executor (see `precompiled`).
 */
export function sqliteDialect(runner: StatementRunner, writes: Lock): { dialect: Dialect; run: DirectRun } {
  const driver = new SqliteDriver(runner, writes);
  const outside = new Lease(driver);
  return {
    dialect: {
      createDriver: () => driver,
      createQueryCompiler: () => new SqliteQueryCompiler(),
      createAdapter: () => new SqliteAdapter(),
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
