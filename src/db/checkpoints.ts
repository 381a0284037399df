import { stat } from 'node:fs/promises';
import type SQLite from 'better-sqlite3';

/**
 * A checkpoint copies SQLite's write-ahead log into the database file. By default the commit
 * that takes the log past 1,000 pages runs it, on the event loop: the commit of a 5 MB article
 * (its revision and its row, 10 MB of pages) then spent 50–65 ms copying them. The service's
 * connection turns that off, and the off-loop connection (off-loop.ts) runs the checkpoints
 * instead, in its thread, between its statements, in PASSIVE mode, which never blocks a reader or
 * the writer. (A thread with a connection of its own for them cost another V8 heap and page
 * cache, 7–10 MB.)
 *
 * The first checkpoint runs when the log passes `startAtBytes`, so a small database (a test, a
 * demo) never asks for one. If one fails, the connection checkpoints in its commits again.
 */
export class BackgroundCheckpoints {
  private running = false;
  private stopped = false;
  private readonly timer: NodeJS.Timeout;
  /** The connection's own setting, for commits to checkpoint with again if a checkpoint fails. */
  private readonly autocheckpoint: number;

  constructor(
    private readonly file: string,
    private readonly database: SQLite.Database,
    private readonly checkpoint: () => Promise<void>,
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
    await this.checkpoint().then(
      () => (this.running = false),
      () => this.fallBack(),
    );
  }

  /** A checkpoint failed: commits checkpoint again, as the connection did before. */
  private fallBack(): void {
    clearInterval(this.timer);
    if (!this.stopped && this.database.open) this.database.pragma(`wal_autocheckpoint = ${this.autocheckpoint}`);
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
