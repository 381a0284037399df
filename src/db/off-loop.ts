import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { type CompiledQuery, type Expression, type Kysely, type QueryResult, type SqlBool, sql } from 'kysely';
import { buffersOf, decodedText, isEncodedText, utf8InParts } from '../core/text-parts.js';
import type { Database } from './schema.js';
import { runResult, type StatementRunner } from './sqlite-driver.js';

/** Article bodies this large (bytes) are read and stored by the off-loop connection. */
export const offLoopBodyBytes = 1_000_000;

/**
 * True for a row (an article, a revision) whose body the event loop's connection reads: SQLite
 * reads a text's size from its record header, not from the text's pages.
 */
export const bodyReadOnLoop = sql<boolean>`octet_length(body) < ${sql.lit(offLoopBodyBytes)}`;

/**
 * A body as the UTF-8 bytes stored (SQLite keeps text in the database's encoding, UTF-8 here):
 * read by the off-loop connection without making a string of it there, or here.
 */
export const bodyBytes = sql<Uint8Array>`cast(body as blob)`;

/** A select of one row with a `body` column (an article, a revision). */
interface BodyRowQuery<Row> {
  where(condition: Expression<SqlBool>): BodyRowQuery<Row>;
  executeTakeFirst(): Promise<Row | undefined>;
}

/**
 * The row `query` selects: on SQLite read by the off-loop connection when its body is large
 * (the event loop's connection reads only rows with `bodyReadOnLoop`), else by `db`. The
 * off-loop connection runs `offLoopQuery` when given (a large body read as bytes: `bodyBytes`).
 */
export async function rowWithBody<Row>(
  db: Kysely<Database>,
  offLoop: Kysely<Database> | undefined,
  query: (db: Kysely<Database>) => BodyRowQuery<Row>,
  offLoopQuery: (db: Kysely<Database>) => BodyRowQuery<Row> = query,
): Promise<Row | undefined> {
  if (!offLoop) return query(db).executeTakeFirst();
  return (await query(db).where(bodyReadOnLoop).executeTakeFirst()) ?? (await offLoopQuery(offLoop).executeTakeFirst());
}

/**
 * Parameters this long (characters) cross to the thread as UTF-8 in parts (`utf8InParts`), a
 * part per turn of the event loop: posted as a string, a 5 MB body is copied in one turn. Texts
 * this long in the rows read come back as UTF-8 too (`{ text: bytes }`), encoded by the thread and
 * transferred: the event loop only decodes them. Blobs this long (a body read as its bytes:
 * `bodyBytes`) are transferred as they are. Read out of the message as a string, a 5 MB body
 * held the loop 25–30 ms (59 ms with a character past Latin-1); received as bytes and decoded,
 * 14 ms (on the bench machine of 2026-11-24 night).
 */
const largeTextChars = 64 * 1024;

type Answer =
  | { id: number; rows: unknown[] }
  | { id: number; changes: number; lastInsertRowid: number | bigint }
  | { id: number; error: { message: string; code: string } };

export interface OffLoopSettings {
  /** The database file. */
  file: string;
  /** The `wal_autocheckpoint` of the event loop's connection, for this one's commits too. */
  walAutocheckpoint: number;
  /** The page cache of this connection (KiB), as the event loop's. */
  pageCacheKib: number;
}

/**
 * A second connection to the SQLite file, in a thread of its own, for the statements that move
 * megabytes: reading, storing and committing a 5 MB article body. Each is one synchronous call
 * into SQLite, 13–50 ms alone and 27–101 ms on a busy node; on the event loop's connection every
 * other request waited for it. Here the event loop only hands the statement over and takes the
 * answer. The thread starts with the first statement, and again after a failure.
 */
export class OffLoopRunner implements StatementRunner {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>();

  constructor(private readonly settings: OffLoopSettings) {}

  async run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const transferList: ArrayBuffer[] = [];
    const parameters: unknown[] = [];
    for (const value of query.parameters) {
      if (typeof value === 'string' && value.length >= largeTextChars) {
        const text = await utf8InParts(value);
        transferList.push(...buffersOf(text));
        parameters.push(text);
      } else {
        parameters.push(value);
      }
    }
    const answer = await this.ask({ sql: query.sql, parameters }, transferList);
    if ('error' in answer) throw new SQLite.SqliteError(answer.error.message, answer.error.code);
    if ('rows' in answer) return { rows: (await Promise.all(answer.rows.map(withBuffers))) as R[] };
    return runResult<R>(answer.changes, answer.lastInsertRowid);
  }

  /**
   * Copies the write-ahead log into the database file (PASSIVE: never blocks a reader or the
   * writer), between this connection's transactions (see checkpoints.ts). Asked for in the middle
   * of one (a large write's statements come one message at a time), it is skipped until the next
   * look: SQLite refuses it there (“database table is locked”), which made the service fall back
   * to checkpointing in the event loop's commits for good.
   */
  async checkpoint(): Promise<void> {
    const answer = await this.ask({ checkpoint: true }, []);
    if ('error' in answer) throw new SQLite.SqliteError(answer.error.message, answer.error.code);
  }

  iterate(): never {
    throw new Error('The off-loop connection does not stream.');
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private ask(message: { sql: string; parameters: unknown[] } | { checkpoint: true }, transferList: ArrayBuffer[]): Promise<Answer> {
    const worker = (this.worker ??= this.started());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...message }, transferList);
    });
  }

  private started(): Worker {
    const worker = new Worker(workerSource, { eval: true, workerData: { module: betterSqlite, journalSizeLimit, collectAbove, largeTextChars, ...this.settings } });
    worker.unref();
    worker.on('message', (answer: Answer) => {
      this.pending.get(answer.id)?.resolve(answer);
      this.pending.delete(answer.id);
    });
    const failed = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.once('error', failed);
    worker.once('exit', (code) => failed(new Error(`The off-loop SQLite thread stopped (exit code ${code}).`)));
    return worker;
  }
}

/**
 * A row from the thread, with its blobs as Buffers again (a message carries them as Uint8Arrays)
 * and its large texts decoded (`largeTextChars`).
 */
async function withBuffers(row: unknown): Promise<unknown> {
  const record = row as Record<string, unknown>;
  for (const [column, value] of Object.entries(record)) {
    if (value instanceof Uint8Array && !Buffer.isBuffer(value)) record[column] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    else if (isEncodedText(value)) record[column] = await decodedText(value);
  }
  return record;
}

/**
 * The size (bytes) this connection cuts the write-ahead log back to, when its commit is the first
 * after the log was checkpointed and restarted. Only this connection does it: cutting a log of
 * 250 MB (under the bench's 5 MB writes) back to 64 MiB held the event loop's commit for 40–49 ms.
 * Until this connection's next such commit, the file stays at its size, as SQLite's default keeps it.
 */
const journalSizeLimit = 64 * 1024 * 1024;

const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');

/**
 * After a statement, the thread collects its heap in full when it holds more than this (bytes in
 * use, garbage included): a 5 MB body read or stored leaves its text behind, and V8 kept 24 MB
 * (three such texts) until its next collections. The collection runs after the answer is posted.
 * `gc` is taken as in the HTML pool's threads (`grownCollector` in html-worker.ts).
 */
const collectAbove = 16 * 2 ** 20;

const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const database = new Database(workerData.file);
database.pragma('busy_timeout = 5000');
database.pragma('foreign_keys = ON');
database.pragma('synchronous = NORMAL');
database.pragma('wal_autocheckpoint = ' + workerData.walAutocheckpoint);
database.pragma('journal_size_limit = ' + workerData.journalSizeLimit);
database.pragma('cache_size = -' + workerData.pageCacheKib);
const { getHeapStatistics, setFlagsFromString } = require('node:v8');
// Tried again until it holds: threads starting at once race on the process-wide flag (see exposedGc in html-worker.ts).
let collectGarbage;
while (!collectGarbage) {
  setFlagsFromString('--expose-gc');
  try {
    collectGarbage = require('node:vm').runInNewContext('gc');
  } catch {}
  setFlagsFromString('--no-expose-gc');
}
const statements = new Map();
const decoder = new TextDecoder();
const valueOf = (value) => {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (value && typeof value === 'object' && Array.isArray(value.utf8)) return value.utf8.map((part) => decoder.decode(part)).join('');
  return value;
};
const sharesMemory = (value) => value instanceof Uint8Array && value.buffer instanceof SharedArrayBuffer;
parentPort.on('message', ({ id, sql, parameters, checkpoint }) => {
  try {
    if (checkpoint) {
      if (!database.inTransaction) database.pragma('wal_checkpoint(PASSIVE)');
      parentPort.postMessage({ id, changes: 0, lastInsertRowid: 0 });
      return;
    }
    let statement = statements.get(sql);
    if (!statement) {
      statement = database.prepare(sql);
      statements.set(sql, statement);
      if (statements.size > 200) statements.delete(statements.keys().next().value);
    }
    const values = parameters.map(valueOf);
    if (statement.reader) {
      const rows = statement.all(values);
      const transferList = [];
      for (const row of rows) {
        for (const column of Object.keys(row)) {
          const value = row[column];
          if (value instanceof Uint8Array && value.byteLength >= workerData.largeTextChars && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) {
            transferList.push(value.buffer);
          }
          if (typeof value !== 'string' || value.length < workerData.largeTextChars) continue;
          const text = Buffer.from(value, 'utf8');
          row[column] = { text };
          transferList.push(text.buffer);
        }
      }
      parentPort.postMessage({ id, rows }, transferList);
    } else {
      const { changes, lastInsertRowid } = statement.run(values);
      parentPort.postMessage({ id, changes, lastInsertRowid });
    }
  } catch (error) {
    parentPort.postMessage({ id, error: { message: String(error && error.message), code: String(error && error.code) } });
  }
  // A large body bound from shared memory (a \`SharedText\`'s) stays in this thread's reach until
  // its heap is collected, which its few allocations would not ask for: collected once this
  // message's values are out of reach.
  if (parameters && parameters.some(sharesMemory)) setImmediate(collectGarbage);
  else if (getHeapStatistics().used_heap_size > workerData.collectAbove) collectGarbage();
});
`;
