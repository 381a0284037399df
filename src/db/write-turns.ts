import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** How often (ms) a process giving way looks whether the others still wait. */
const lookEveryMs = 2;

/**
 * Turns at SQLite's write lock between processes. SQLite hands the lock to whichever process asks
 * at the moment it comes free, so a process that writes in long runs (the CLI's import, committing
 * a batch and beginning the next at once) would keep it from a serving node whose tries come
 * between the runs' ends. A process whose statement found the lock taken says so with a marker
 * file beside the database (one per process, named with its pid) until it has the lock or gives
 * up; the writer of long runs looks for the markers of running processes before each run and
 * waits while there is one (docs/decisions/0012-sqlite-write-turns.md).
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

  /** A statement of this process found the lock taken: the returned function is called once, when it stops waiting. */
  waiting(): () => void {
    if (this.waiters++ === 0) this.mark();
    return () => {
      if (--this.waiters === 0) this.unmark();
    };
  }

  /**
   * Waits while another process waits for the write lock, at most as long as a serving node's
   * write waits before it is refused (`nodeWaitMs`), so the node's write has its turn however late
   * its next try comes.
   */
  async giveWay(): Promise<void> {
    const until = performance.now() + this.nodeWaitMs;
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
    return names.some((name) => name.startsWith(this.prefix) && name !== own && alive(Number(name.slice(this.prefix.length))));
  }

  /** A marker that cannot be written (a full disk, a read-only directory) only loses this process its turn. */
  private mark(): void {
    try {
      writeFileSync(this.marker, '');
    } catch {
      this.unmark();
    }
  }

  /** One that cannot be removed stays until the process ends (the import waits at most `nodeWaitMs` a batch meanwhile). */
  private unmark(): void {
    try {
      rmSync(this.marker, { force: true });
    } catch {
      return;
    }
  }
}

/**
 * Whether process `pid` runs: a marker left by a process that ended while it waited (killed) is
 * not waited for. Signal 0 only checks; EPERM means it runs as another user.
 */
function alive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
