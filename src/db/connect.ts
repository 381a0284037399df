import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { type Dialect, Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { defaultPoolSize } from '../config.js';
import type { ChangesSince } from '../core/kept-rows.js';
import { BackgroundCheckpoints } from './checkpoints.js';
import { OffLoopRunner } from './off-loop.js';
import { ChangeListener } from './change-notices.js';
import { type ChangeTopic, namedChangesMax } from './change-topics.js';
import { namedStatements } from './pg-statements.js';
import { runPrecompiledWith } from './precompiled.js';
import type { Database } from './schema.js';
import { Lock } from '../platform/lock.js';
import { defaultLockWaitMs, localRunner, sqliteDialect, type StatementRunner } from './sqlite-driver.js';
import { statementCache } from './statement-cache.js';
import { tracedDialect } from './traced.js';
import { WriteTurns } from './write-turns.js';

export type DialectName = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: DialectName;
  /** PostgreSQL's connection pool (its counts are metrics); SQLite has one connection. */
  pool?: pg.Pool;
  /**
   * SQLite: a second connection to the same file, in a thread of its own, for the statements that
   * move megabytes (off-loop.ts). Its writes and the event loop connection's take turns.
   */
  offLoop?: Kysely<Database>;
  /**
   * A watch of the rows of `topic` that this process keeps in memory: each call of the watch
   * tells whether they may have changed elsewhere since its last call that said so. SQLite:
   * migration 017's triggers counted a change of them (by any connection), seen within 100 ms. PostgreSQL:
   * migration 013's triggers sent a notice of `topic`, or this process has not heard its own
   * heartbeat notice for a while (not listening yet, its listening connection failed or went
   * silent: change-notices.ts).
   */
  watchChanges: (topic: Exclude<ChangeTopic, 'articles'>) => () => boolean;
  /**
   * `watchChanges('articles')` that names the articles changed (their ids), or says `true` when
   * it cannot (too many at once, or as `watchChanges` fails closed). SQLite: migration 027's log of
   * their ids, read within 100 ms; PostgreSQL: 027's notices carry the id.
   */
  watchArticleChanges: () => () => ChangesSince<number>;
  /** SQLite: turns at the write lock between processes (write-turns.ts), which a long import gives way to. */
  writeTurns?: WriteTurns;
}

export interface ConnectOptions {
  /** A span per query (tracing on). */
  traced?: boolean;
  /** SQLite: checkpoints run in a thread of their own, not in commits (a serving node). */
  checkpointInBackground?: boolean;
  /** Told when background checkpoints keep failing and commits checkpoint again. */
  warn?: (message: string, error: unknown) => void;
  /** PostgreSQL: connections the pool opens at most (`DATABASE_POOL_SIZE`). */
  poolSize?: number;
  /**
   * SQLite: how long (ms) a statement waits for another process's write lock before it fails
   * with SQLITE_BUSY (`defaultLockWaitMs`: a serving node's requests then answer 503; the CLI waits longer),
   * and opening the file waits as long if that is longer than its own `openBusyTimeoutMs`.
   */
  lockWaitMs?: number;
  /** SQLite: the page cache of each connection (KiB), if not `defaultPageCacheKib` (a command's is larger). */
  pageCacheKib?: number;
  /** PostgreSQL: the address of the connection that listens for change notices (`DATABASE_LISTEN_URL`), else the database's. */
  listenUrl?: string;
}

/**
 * Returns `bigint`-free integers and text timestamps from PostgreSQL, as SQLite does. The driver
 * is loaded only here: a SQLite node need not carry it.
 */
function postgresDriver(url: string, poolSize: number): { pool: pg.Pool; Client: typeof pg.Client } {
  const pg = createRequire(import.meta.url)('pg') as typeof import('pg');
  const types = pg.types;
  types.setTypeParser(types.builtins.INT8, (v) => Number(v));
  return { pool: new pg.Pool({ connectionString: url, max: poolSize }), Client: pg.Client };
}

/**
 * A connection PostgreSQL ends (a restart, a failover, `pg_terminate_backend`, an idle timeout, a
 * pooler's restart) makes its client emit 'error', in the pool or lent to a query, and an
 * EventEmitter's 'error' without a listener ends the process. The query it ran fails
 * (DatabaseUnavailable: 503), the pool drops the client and opens another for the next query.
 */
function survivesFailedConnections(pool: pg.Pool, warn: ConnectOptions['warn']): void {
  // A client's own listener hears it whether idle or lent; the pool re-emits an idle one's.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', (error) => warn?.('a database connection failed; the pool opens another', error));
  });
}

/**
 * SQLite's page size for a new database file (an existing one keeps its own: WAL mode fixes it).
 * An article body of megabytes is a chain of overflow pages; with 4 KiB pages, reading, writing
 * and committing a large body each held the event loop several times longer than with 16 KiB
 * pages (docs/decisions/0006-sqlite-wal-and-off-loop-connection.md).
 */
const pageSize = 16_384;

/**
 * The page cache of each connection of a serving node (KiB): SQLite's own default. better-sqlite3
 * builds SQLite with 16 MB a connection, which the 1M-row reads fill; the pages they need most
 * (indexes, counters) fit in this, and the operating system caches the file.
 */
const defaultPageCacheKib = 2_000;

/**
 * How long (ms) opening the file waits at least for another process's write lock (SQLite's
 * `busy_timeout`): `optimize` below writes statistics (ANALYZE) whenever an index has none, an
 * empty table's included, so it needs the lock on every open. A connection told to wait longer for
 * the lock (`lockWaitMs`: the CLI's) waits as long here.
 */
const openBusyTimeoutMs = 5_000;

/** The write-ahead log's size (bytes) past which a commit copies it into the database file. */
const autocheckpointBytes = 4_096_000;

/** Opens the database named by `DATABASE_URL` (postgres://…) or SQLite under `dataDir`. */
export function connect(databaseUrl: string | undefined, dataDir: string, options: ConnectOptions = {}): Db {
  const kyselyOf = (dialect: Dialect, system: 'sqlite' | 'postgresql') =>
    new Kysely<Database>({ dialect: options.traced ? tracedDialect(dialect, system) : dialect });
  if (databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl)) {
    const { pool, Client } = postgresDriver(databaseUrl, options.poolSize ?? defaultPoolSize);
    survivesFailedConnections(pool, options.warn);
    const changes = new ChangeListener(Client, options.listenUrl ?? databaseUrl, options.warn);
    const statements = namedStatements(pool);
    const end = async () => {
      await changes.close();
      await statements.end();
    };
    return {
      dialect: 'postgres',
      pool,
      kysely: kyselyOf(new PostgresDialect({ pool: { ...statements, end } }), 'postgresql'),
      watchChanges: (topic) => changes.watch(topic),
      watchArticleChanges: () => changes.watchIds('articles'),
    };
  }
  let file: string;
  if (databaseUrl?.startsWith('sqlite:')) {
    file = databaseUrl.slice('sqlite:'.length).replace(/^\/\//, '');
  } else {
    mkdirSync(dataDir, { recursive: true });
    file = join(dataDir, 'anchorage.sqlite');
  }
  const database = new SQLite(file);
  database.pragma(`page_size = ${pageSize}`);
  database.pragma('journal_mode = WAL');
  // Commits checkpoint past 4 MB of log, SQLite's default (1,000 pages of 4 KiB), whatever the page size.
  database.pragma(`wal_autocheckpoint = ${Math.ceil(autocheckpointBytes / (database.pragma('page_size', { simple: true }) as number))}`);
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  // Opening waits for another process's write lock (the pragmas below may need it), before any request.
  database.pragma(`busy_timeout = ${Math.max(openBusyTimeoutMs, options.lockWaitMs ?? 0)}`);
  const pageCacheKib = options.pageCacheKib ?? defaultPageCacheKib;
  database.pragma(`cache_size = -${pageCacheKib}`);
  // Lets the planner gather the statistics it needs for the list and stats indexes.
  database.pragma('optimize = 0x10002');
  // From now on SQLite never waits for a lock, which would hold the event loop: the driver waits
  // between tries instead (`whenUnlocked` in sqlite-driver.ts).
  database.pragma('busy_timeout = 0');
  // Under background checkpoints, the off-loop connection's commits do not checkpoint either:
  // every checkpoint is followed by the log's restart in its thread (`checkpoint` below).
  const walAutocheckpoint = options.checkpointInBackground ? 0 : (database.pragma('wal_autocheckpoint', { simple: true }) as number);
  const offLoop = new OffLoopRunner({ file, walAutocheckpoint, pageCacheKib });
  const writes = new Lock();
  const writeTurns = new WriteTurns(file, defaultLockWaitMs);
  /**
   * Copies the log into the database file, then restarts the log in the thread, no one else
   * writing (`OffLoopRunner.checkpoint`); not once the connection is closed, which would start
   * the thread again.
   */
  const checkpoint = async () => {
    await offLoop.checkpoint();
    await writes.acquire();
    try {
      if (database.open) await offLoop.checkpoint('restart');
    } finally {
      writes.release();
    }
  };
  const checkpoints = options.checkpointInBackground ? new BackgroundCheckpoints(file, database, checkpoint, { warn: options.warn }) : undefined;
  const close = () => {
    checkpoints?.close();
    writeTurns.close();
    void offLoop.close();
    database.close();
  };
  const sqliteKysely = (runner: StatementRunner) => {
    const { dialect, run } = sqliteDialect(runner, writes, options.lockWaitMs, writeTurns);
    const kysely = kyselyOf(dialect, 'sqlite');
    if (!options.traced) runPrecompiledWith(kysely, run);
    return kysely;
  };
  return {
    dialect: 'sqlite',
    kysely: sqliteKysely(localRunner(statementCache(database), close)),
    offLoop: sqliteKysely(offLoop),
    watchChanges: (topic) => changeWatch(database, topic),
    watchArticleChanges: () => articleChangesWatch(database),
    writeTurns,
  };
}

/** How often (ms) a process looks for changes made elsewhere: the look starts a read transaction. */
const changeWatchMs = 100;

/**
 * Migration 017's count of changes to `topic`'s rows, which its triggers move on any connection's
 * commit of such a change (this process's own too: it has forgotten those rows already). Read at
 * most every `changeWatchMs`, so a change elsewhere is seen within that. The statement is prepared
 * at the first look: the watch is made before the migrations run.
 */
function changeWatch(database: SQLite.Database, topic: ChangeTopic): () => boolean {
  let count: SQLite.Statement<[ChangeTopic], number> | undefined;
  let seen: number | undefined;
  let lookedAt = -Infinity;
  return () => {
    if (performance.now() - lookedAt < changeWatchMs) return false;
    lookedAt = performance.now();
    count ??= database.prepare<[ChangeTopic], number>('select n from change_counts where topic = ?').pluck();
    const now = count.get(topic);
    if (now === seen) return false;
    const first = seen === undefined;
    seen = now;
    return !first;
  };
}

/**
 * Migration 027's log of the ids of changed articles (written by any connection's commit, this
 * process's own too), read from where the last look stopped, at most every `changeWatchMs`. Entries
 * missing from where it stopped (dropped as too old while the watch was not asked) or more than
 * `namedChangesMax` at once mean anything may have changed.
 */
function articleChangesWatch(database: SQLite.Database): () => ChangesSince<number> {
  let after: SQLite.Statement<[number, number], { seq: number; article_id: number }> | undefined;
  let newest: SQLite.Statement<[], number> | undefined;
  let seen: number | undefined;
  let lookedAt = -Infinity;
  return () => {
    if (performance.now() - lookedAt < changeWatchMs) return false;
    lookedAt = performance.now();
    newest ??= database.prepare<[], number>('select coalesce(max(seq), 0) from article_changes').pluck();
    if (seen === undefined) {
      seen = newest.get()!;
      return false;
    }
    after ??= database.prepare<[number, number], { seq: number; article_id: number }>('select seq, article_id from article_changes where seq > ? order by seq limit ?');
    const changes = after.all(seen, namedChangesMax + 1);
    if (changes.length === 0) return false;
    if (changes[0]!.seq !== seen + 1 || changes.length > namedChangesMax) {
      seen = newest.get()!;
      return true;
    }
    seen = changes.at(-1)!.seq;
    return changes.map((change) => change.article_id);
  };
}

const uniqueViolationCodes = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', '23505']);

/** A unique or primary-key violation on either database. */
export function isUniqueViolation(error: unknown): boolean {
  return uniqueViolationCodes.has(String((error as { code?: unknown } | null)?.code));
}
