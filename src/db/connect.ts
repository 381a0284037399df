import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { type Dialect, Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { defaultPoolSize } from '../config.js';
import { BackgroundCheckpoints } from './checkpoints.js';
import { OffLoopRunner } from './off-loop.js';
import { ChangeListener } from './change-notices.js';
import type { ChangeTopic } from './migrations/013_change_notices.js';
import { namedStatements } from './pg-statements.js';
import { runPrecompiledWith } from './precompiled.js';
import type { Database } from './schema.js';
import { Lock } from '../core/lock.js';
import { localRunner, sqliteDialect, type StatementRunner } from './sqlite-driver.js';
import { statementCache } from './statement-cache.js';
import { tracedDialect } from './traced.js';

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
   * migration 013's triggers sent a notice of `topic`, or this process is not listening for
   * notices (yet, or since its listening connection failed).
   */
  watchChanges: (topic: ChangeTopic) => () => boolean;
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
 * SQLite's page size for a new database file (an existing one keeps its own: WAL mode fixes it).
 * An article body of megabytes is a chain of overflow pages; with 4 KiB pages, reading, writing
 * and committing a large body each held the event loop several times longer than with 16 KiB
 * pages (docs/decisions/0006-sqlite-wal-and-off-loop-connection.md).
 */
const pageSize = 16_384;

/**
 * The page cache of each connection (KiB): SQLite's own default. better-sqlite3 builds SQLite with
 * 16 MB a connection, which the 1M-row reads fill; the pages they need most (indexes, counters)
 * fit in this, and the operating system caches the file.
 */
const pageCacheKib = 2_000;

/** The write-ahead log's size (bytes) past which a commit copies it into the database file. */
const autocheckpointBytes = 4_096_000;

/** Opens the database named by `DATABASE_URL` (postgres://…) or SQLite under `dataDir`. */
export function connect(databaseUrl: string | undefined, dataDir: string, options: ConnectOptions = {}): Db {
  const kyselyOf = (dialect: Dialect, system: 'sqlite' | 'postgresql') =>
    new Kysely<Database>({ dialect: options.traced ? tracedDialect(dialect, system) : dialect });
  if (databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl)) {
    const { pool, Client } = postgresDriver(databaseUrl, options.poolSize ?? defaultPoolSize);
    const changes = new ChangeListener(Client, databaseUrl, options.warn);
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
  database.pragma('busy_timeout = 5000');
  database.pragma(`cache_size = -${pageCacheKib}`);
  // Lets the planner gather the statistics it needs for the list and stats indexes.
  database.pragma('optimize = 0x10002');
  // Under background checkpoints, the off-loop connection's commits do not checkpoint either:
  // every checkpoint is followed by the log's restart in its thread (`checkpoint` below).
  const walAutocheckpoint = options.checkpointInBackground ? 0 : (database.pragma('wal_autocheckpoint', { simple: true }) as number);
  const offLoop = new OffLoopRunner({ file, walAutocheckpoint, pageCacheKib });
  const writes = new Lock();
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
    void offLoop.close();
    database.close();
  };
  const sqliteKysely = (runner: StatementRunner) => {
    const { dialect, run } = sqliteDialect(runner, writes);
    const kysely = kyselyOf(dialect, 'sqlite');
    if (!options.traced) runPrecompiledWith(kysely, run);
    return kysely;
  };
  return {
    dialect: 'sqlite',
    kysely: sqliteKysely(localRunner(statementCache(database), close)),
    offLoop: sqliteKysely(offLoop),
    watchChanges: (topic) => changeWatch(database, topic),
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

const uniqueViolationCodes = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', '23505']);

/** A unique or primary-key violation on either database. */
export function isUniqueViolation(error: unknown): boolean {
  return uniqueViolationCodes.has(String((error as { code?: unknown } | null)?.code));
}
