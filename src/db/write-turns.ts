import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A marker older than this (ms) was left by a process that ended while it waited: a statement
 * waits at most the CLI's lock wait, and every new wait writes the marker again.
 */
const staleMs = 10_000;

/** How often (ms) a process giving way looks whether the others still wait. */
const lookEveryMs = 2;

/**
 * Turns at SQLite's write lock between processes. SQLite hands the lock to whichever process asks
 * at the moment it comes free, so a process that writes in long runs (the CLI's import, committing
 * a batch and beginning the next at once) would keep it from a serving node whose tries come
 * between the runs' ends. A process whose statement found the lock taken says so with a marker
 * file beside the database (one per process) until it has the lock or gives up; the writer of
 * long runs looks for such markers before each run and waits while there is one
 * (docs/decisions/0012-sqlite-write-turns.md).
 */
export class WriteTurns {
  private waiters = 0;
  private readonly marker: string;
  private readonly prefix: string;

  /** `nodeWaitMs`: how long a serving node's write waits for the lock before it is refused. */
  constructor(
    private readonly file: string,
    private readonly nodeWaitMs: number,
  ) {
    this.prefix = `${basename(file)}-waiting-`;
    this.marker = join(dirname(file), `${this.prefix}${process.pid}`);
  }

  /** A statement of this process found the lock taken: the returned function is called once it stops waiting. */
  waiting(): () => void {
    this.waiters++;
    this.mark();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.waiters === 0) this.unmark();
    };
  }

  /**
   * Waits while another process waits for the write lock, at most `maxMs`: by default as long as
   * a serving node's write waits before it is refused, so the node's write has its turn however
   * late its next try comes.
   */
  async giveWay(maxMs = this.nodeWaitMs): Promise<void> {
    const until = performance.now() + maxMs;
    while (this.othersWaiting() && performance.now() < until) await sleep(lookEveryMs);
  }

  /** Drops this process's marker (on closing the database). */
  close(): void {
    this.waiters = 0;
    this.unmark();
  }

  private othersWaiting(): boolean {
    const own = basename(this.marker);
    const directory = dirname(this.file);
    let names: string[];
    try {
      names = readdirSync(directory);
    } catch {
      return false;
    }
    return names.some((name) => name.startsWith(this.prefix) && name !== own && this.fresh(join(directory, name)));
  }

  private fresh(path: string): boolean {
    try {
      return Date.now() - statSync(path).mtimeMs < staleMs;
    } catch {
      return false;
    }
  }

  /** A marker that cannot be written (a full disk, a read-only directory) only loses this process its turn. */
  private mark(): void {
    try {
      writeFileSync(this.marker, '');
    } catch {
      this.unmark();
    }
  }

  /** One that cannot be removed goes stale (`staleMs`). */
  private unmark(): void {
    try {
      rmSync(this.marker, { force: true });
    } catch {
      return;
    }
  }
}
