import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { type CompiledQuery, type QueryResult, sql } from 'kysely';
import { buffersOf, decodedText, isEncodedText, utf8InParts } from '../core/text-parts.js';
import { helperThreadNice, threadExecArgv, threadModule } from '../platform/threads.js';
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

/**
 * Parameters this long (characters) cross to the thread as UTF-8 in parts (`utf8InParts`), a
 * part per turn of the event loop: posted as a string, a large body is copied in one turn. Texts
 * this long in the rows read come back as UTF-8 too (`{ text: bytes }`), encoded by the thread and
 * transferred: the event loop only decodes them. Blobs this long (a body read as its bytes:
 * `bodyBytes`) are transferred as they are: received as bytes and decoded, a large body holds the
 * loop for less than read out of the message as a string.
 */
const largeTextChars = 64 * 1024;

type Answer =
  | { id: number; rows: unknown[] }
  | { id: number; changes: number; lastInsertRowid: number | bigint }
  | { id: number; error: { message: string; code: string }; fatal?: true };

/** A statement waiting for its thread's answer. */
interface Waiting {
  resolve: (answer: Answer) => void;
  reject: (error: Error) => void;
}

/** What `OffLoopRunner.checkpoint` does: copy the log into the database file, then maybe restart it. */
export type CheckpointMode = 'copy' | 'restart';

export interface OffLoopSettings {
  /** The database file. */
  file: string;
  /** The `wal_autocheckpoint` of this connection's commits: the event loop's, or 0 under `BackgroundCheckpoints`. */
  walAutocheckpoint: number;
  /** The page cache of this connection (KiB), as the event loop's. */
  pageCacheKib: number;
}

/** What the runner gives its thread. */
export interface OffLoopWorkerData extends OffLoopSettings {
  journalSizeLimit: number;
  collectAbove: number;
  largeTextChars: number;
  nice: number;
}

/**
 * A second connection to the SQLite file, in a thread of its own, for the statements that move
 * megabytes: reading, storing and committing a large article body. Each is one synchronous call
 * into SQLite, long on a busy node; on the event loop's connection every other request waited for
 * it. Here the event loop only hands the statement over and takes the
 * answer. The thread starts with the first statement, and again after a failure.
 */
export class OffLoopRunner implements StatementRunner {
  private worker: Worker | undefined;
  private nextId = 1;
  /** The statements the current thread has not answered yet: a thread that ends fails only its own. */
  private pending = new Map<number, Waiting>();

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
   *
   * `restart` (asked for under the write lock, no other connection writing) then, if the whole
   * log is in the database file, commits a change of nothing but the header page (`user_version`
   * set to itself), so the log restarts in this thread. The first commit after a restart writes
   * the log's header and waits for the disk (`fsync`, at `synchronous = NORMAL`): in the event
   * loop's commits, the bench's stall report caught that, and writes blocked in the kernel (`D`).
   * A log that holds nothing since that commit is neither copied nor restarted again: the next
   * commit of the event loop would restart it once more, and the thread would commit and wait for
   * the disk every look, for nothing.
   */
  async checkpoint(mode: CheckpointMode = 'copy'): Promise<void> {
    const answer = await this.ask({ checkpoint: mode }, []);
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

  private ask(message: { sql: string; parameters: unknown[] } | { checkpoint: CheckpointMode }, transferList: ArrayBuffer[]): Promise<Answer> {
    const worker = (this.worker ??= this.started());
    const id = this.nextId++;
    // Referenced while it owes answers: a script awaiting one (the CLI, the bench's seeding) must
    // not end first. Idle, it does not keep the process alive.
    if (this.pending.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...message }, transferList);
    });
  }

  private started(): Worker {
    const workerData: OffLoopWorkerData = { journalSizeLimit, collectAbove, largeTextChars, nice: helperThreadNice, ...this.settings };
    const worker = new Worker(threadModule(import.meta.url, 'off-loop-worker'), { execArgv: threadExecArgv, workerData });
    const pending = new Map<number, Waiting>();
    this.pending = pending;
    worker.on('message', (answer: Answer) => {
      if ('fatal' in answer) {
        if (this.worker === worker) this.worker = undefined;
        void worker.terminate();
      }
      pending.get(answer.id)?.resolve(answer);
      pending.delete(answer.id);
      if (pending.size === 0) worker.unref();
    });
    const failed = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiting of pending.values()) waiting.reject(error);
      pending.clear();
    };
    worker.once('error', failed);
    worker.once('exit', (code) => failed(new Error(`The off-loop SQLite thread stopped (exit code ${code}).`)));
    // After its listeners: on Node 20, a 'message' listener added to an unreferenced worker
    // references it again, and a process that had started the thread never ended on its own.
    worker.unref();
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
 * after the log was checkpointed and restarted. Only this connection does it: cutting a large log
 * back held the event loop's commit.
 * Until this connection's next such commit, the file stays at its size, as SQLite's default keeps it.
 */
const journalSizeLimit = 64 * 1024 * 1024;

/**
 * After a statement, the thread collects its heap in full when it holds more than this (bytes in
 * use, garbage included): a large body read or stored leaves its text behind, and V8 kept several
 * such texts until its next collections. The collection runs after the answer is posted.
 * The thread (off-loop-worker.ts) takes its `gc` as the HTML pool's do (`exposedGc`).
 */
const collectAbove = 16 * 2 ** 20;
