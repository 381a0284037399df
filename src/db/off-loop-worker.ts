/**
 * The thread of the off-loop SQLite connection (`OffLoopRunner` in off-loop.ts): each message is
 * one statement (or a checkpoint), answered with its rows or its changes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { isUtf8Text, stringOfUtf8 } from '../core/text-parts.js';
import { collectionOnNextTurn, niceThisThread } from '../platform/threads.js';
import { isBusy } from './failures.js';
import { statementCache } from './statement-cache.js';
import type { CheckpointMode, OffLoopWorkerData } from './off-loop.js';

/** A statement (a large text parameter comes as its UTF-8 in parts: `{ utf8 }`), or a checkpoint (`OffLoopRunner.checkpoint`). */
type OffLoopMessage = { id: number; checkpoint: CheckpointMode } | { id: number; sql: string; parameters: unknown[]; checkpoint?: undefined };

const settings = workerData as OffLoopWorkerData;
niceThisThread(settings.nice);

/** The connection, and its prepared statements by SQL. */
function open(): { database: SQLite.Database; statementOf: ReturnType<typeof statementCache> } {
  const database = new SQLite(settings.file);
  // Another process's write lock is waited for by the driver, between tries (sqlite-driver.ts).
  database.pragma('busy_timeout = 0');
  database.pragma('foreign_keys = ON');
  database.pragma('synchronous = NORMAL');
  database.pragma(`wal_autocheckpoint = ${settings.walAutocheckpoint}`);
  database.pragma(`journal_size_limit = ${settings.journalSizeLimit}`);
  database.pragma(`cache_size = -${settings.pageCacheKib}`);
  return { database, statementOf: statementCache(database) };
}

/**
 * The connection, or why it could not be opened. Thrown while the module loads, that error did not
 * always reach the runner: the thread's exit sometimes came first (the runner then said only
 * “stopped”). Instead every message is answered with it, marked `fatal`, and the runner ends the
 * thread once it has the answer, so the next statement starts a new one.
 */
let openFailure: unknown;
const connection = (() => {
  try {
    return open();
  } catch (error) {
    openFailure = error;
    return undefined;
  }
})();
/** The thread's collection after a message, once its values are out of reach (see `collectionOnNextTurn`). */
const collectAfterMessage = collectionOnNextTurn(settings.collectAbove);

const valueOf = (value: unknown): unknown => {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return isUtf8Text(value) ? stringOfUtf8(value) : value;
};

const sharesMemory = (value: unknown): boolean => value instanceof Uint8Array && value.buffer instanceof SharedArrayBuffer;

/** The rows, with their large texts as UTF-8 and their large blobs, to transfer (`largeTextChars`). */
function rowsToPost(rows: Record<string, unknown>[]): ArrayBuffer[] {
  const transferList: ArrayBuffer[] = [];
  for (const row of rows) {
    for (const [column, value] of Object.entries(row)) {
      if (
        value instanceof Uint8Array &&
        value.byteLength >= settings.largeTextChars &&
        value.byteOffset === 0 &&
        value.byteLength === value.buffer.byteLength
      ) {
        transferList.push(value.buffer as ArrayBuffer);
      }
      if (typeof value !== 'string' || value.length < settings.largeTextChars) continue;
      const text = Buffer.from(value, 'utf8');
      row[column] = { text };
      transferList.push(text.buffer as ArrayBuffer);
    }
  }
  return transferList;
}

/**
 * Other connections' commits as this connection last saw them (`PRAGMA data_version`, which its
 * own commits do not move) when it restarted the log; undefined once it wrote since, or before.
 */
let restartedAt: unknown;
const dataVersion = (database: SQLite.Database): unknown => database.pragma('data_version', { simple: true });
/** Whether the log holds nothing but this connection's restart: nothing to copy, nothing to restart. */
const unchangedSinceRestart = (database: SQLite.Database): boolean => restartedAt !== undefined && dataVersion(database) === restartedAt;

const failure = (error: unknown) => {
  const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
  return { message: String(message), code: String(code) };
};

parentPort!.on('message', (message: OffLoopMessage) => {
  const { id } = message;
  if (!connection) {
    parentPort!.postMessage({ id, error: failure(openFailure), fatal: true });
    return;
  }
  const { database, statementOf } = connection;
  try {
    if (message.checkpoint) {
      if (!database.inTransaction && !unchangedSinceRestart(database)) {
        const [{ log, checkpointed }] = database.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
        // A commit that changes nothing but the header page: the first frame of the log after
        // this checkpoint, written here.
        if (message.checkpoint === 'restart' && log > 0 && checkpointed === log) {
          try {
            database.pragma(`user_version = ${database.pragma('user_version', { simple: true }) as number}`);
            restartedAt = dataVersion(database);
          } catch (error) {
            // Another process writes (the CLI's import): the log restarts at a later look.
            if (!isBusy(error)) throw error;
          }
        }
      }
      parentPort!.postMessage({ id, changes: 0, lastInsertRowid: 0 });
      return;
    }
    const statement = statementOf(message.sql);
    const values = message.parameters.map(valueOf);
    if (statement.reader) {
      const rows = statement.all(values) as Record<string, unknown>[];
      parentPort!.postMessage({ id, rows }, rowsToPost(rows));
    } else {
      restartedAt = undefined;
      const { changes, lastInsertRowid } = statement.run(values);
      parentPort!.postMessage({ id, changes, lastInsertRowid });
    }
  } catch (error) {
    parentPort!.postMessage({ id, error: failure(error) });
  }
  collectAfterMessage(!message.checkpoint && message.parameters.some(sharesMemory));
});

