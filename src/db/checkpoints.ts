import { stat } from 'node:fs/promises';
import type SQLite from 'better-sqlite3';

/**
 * A checkpoint copies SQLite's write-ahead log into the database file. By default the commit
 * that takes the log past 1,000 pages runs it, on the event loop: the commit of a large article
 * (its revision and its row) then spent a long turn copying them. The service's
 * connection turns that off, and the off-loop connection (off-loop.ts) runs the checkpoints
 * instead, in its thread, between its statements, in PASSIVE mode, which never blocks a reader or
 * the writer. (A thread with a connection of its own for them would cost another V8 heap and
 * page cache.) The thread then restarts the log itself (connect.ts), so that the event loop's
 * next commit does not: the commit that restarts the log waits for the disk.
 *
 * The first checkpoint runs when the log passes `startAtBytes`, so a small database (a test, a
 * demo) never asks for one. A checkpoint that fails is asked for again at the next look (the
 * off-loop thread starts again after a failure); after `fallBackAfter` failures in a row, the
 * connection checkpoints in its commits again, for good, and `warn` says so: falling back at the
 * first failure, silently, would put every checkpoint back on the event loop after one refused in
 * the middle of a large write.
 */
export class BackgroundCheckpoints {
  private running = false;
  private stopped = false;
  private failures = 0;
  private readonly timer: NodeJS.Timeout;
  /** The connection's own setting, for commits to checkpoint with again if checkpoints keep failing. */
  private readonly autocheckpoint: number;
  private readonly startAtBytes: number;
  private readonly warn: (message: string, error: unknown) => void;

  constructor(
    private readonly file: string,
    private readonly database: SQLite.Database,
    private readonly checkpoint: () => Promise<void>,
    options: { startAtBytes?: number; warn?: (message: string, error: unknown) => void } = {},
  ) {
    this.startAtBytes = options.startAtBytes ?? defaultStartAtBytes;
    this.warn = options.warn ?? (() => {});
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
    try {
      await this.checkpoint();
      this.failures = 0;
    } catch (error) {
      this.failures += 1;
      if (this.failures >= fallBackAfter) this.fallBack(error);
    } finally {
      this.running = false;
    }
  }

  /** Checkpoints keep failing: commits checkpoint again, as the connection did before. */
  private fallBack(error: unknown): void {
    clearInterval(this.timer);
    if (this.stopped || !this.database.open) return;
    this.database.pragma(`wal_autocheckpoint = ${this.autocheckpoint}`);
    this.warn(`SQLite checkpoints failed ${fallBackAfter} times in a row in the off-loop thread; commits on the event loop checkpoint the log from now on`, error);
  }

  /** Stops asking for checkpoints (the last connection to close checkpoints what is left). */
  close(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }
}

/** The log size (bytes) past which a checkpoint runs: SQLite's own default of 1,000 pages of 4 KiB. */
const defaultStartAtBytes = 4_096_000;
const lookEveryMs = 250;
/** Failed checkpoints in a row (a look each, `lookEveryMs` apart) after which commits checkpoint again. */
const fallBackAfter = 8;
