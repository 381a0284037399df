import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/**
 * A checkpoint copies SQLite's write-ahead log into the database file. By default the commit
 * that takes the log past 1,000 pages runs it, on the event loop: the commit of a 5 MB article
 * (its revision and its row, 10 MB of pages) then spent 50–65 ms copying them. The service's
 * connection turns that off, and a thread of its own, with a connection of its own, runs the
 * checkpoints instead, in PASSIVE mode, which never blocks a reader or the writer.
 *
 * The thread starts the first time the log passes `startAtBytes`, so a small database (a test, a
 * demo) never starts it. If the thread fails, the connection checkpoints in its commits again.
 */
export class BackgroundCheckpoints {
  private worker: Worker | undefined;
  private running = false;
  private stopped = false;
  private readonly timer: NodeJS.Timeout;
  /** The connection's own setting, for commits to checkpoint with again if the thread fails. */
  private readonly autocheckpoint: number;

  constructor(
    private readonly file: string,
    private readonly database: SQLite.Database,
    private readonly startAtBytes = defaultStartAtBytes,
  ) {
    this.autocheckpoint = database.pragma('wal_autocheckpoint', { simple: true }) as number;
    database.pragma('wal_autocheckpoint = 0');
    this.timer = setInterval(() => void this.look(), lookEveryMs).unref();
  }

  private async look(): Promise<void> {
    if (this.running || this.stopped) return;
    const size = await stat(`${this.file}-wal`).then(
      (s) => s.size,
      () => 0,
    );
    if (size < this.startAtBytes || this.running || this.stopped) return;
    this.running = true;
    this.worker ??= this.startWorker();
    this.worker.postMessage('checkpoint');
  }

  private startWorker(): Worker {
    const worker = new Worker(workerSource, { eval: true, workerData: { module: betterSqlite, file: this.file } });
    worker.on('message', () => (this.running = false));
    worker.once('error', () => this.fallBack());
    worker.once('exit', () => this.fallBack());
    return worker;
  }

  /** The thread is gone: commits checkpoint again, as the connection did before. */
  private fallBack(): void {
    clearInterval(this.timer);
    if (!this.stopped && this.database.open) this.database.pragma(`wal_autocheckpoint = ${this.autocheckpoint}`);
  }

  /** Stops the thread; its connection closes with it (the last to close checkpoints what is left). */
  close(): void {
    this.stopped = true;
    clearInterval(this.timer);
    void this.worker?.terminate();
  }
}

/** The log size (bytes) past which a checkpoint runs: SQLite's own default of 1,000 pages of 4 KiB. */
const defaultStartAtBytes = 4_096_000;
const lookEveryMs = 250;

const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');

const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const database = new Database(workerData.file);
parentPort.on('message', () => {
  database.pragma('wal_checkpoint(PASSIVE)');
  parentPort.postMessage('done');
});
`;
