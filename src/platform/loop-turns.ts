/**
 * Turns of the event loop for request work. Node runs every request that arrives in one poll of
 * the sockets back to back, and every worker result that came back with them, before it looks at
 * a timer or a socket again; on SQLite each of them runs its queries synchronously. Under load,
 * one turn of the loop then held a great deal of other requests' work, and every caller waited
 * for the whole of it.
 *
 * Work asks for a turn before it starts. While the loop has run less than `budgetMs` of work since
 * it last came round and nobody waits, it goes at once; past that, it waits in its lane's queue,
 * and the loop's round of immediates lets waiters go until the turn's budget is spent. Between two
 * rounds the loop runs its timers and reads its sockets, so no turn holds much more than the
 * budget and one piece of work.
 *
 * Lanes (for requests, their operation) take turns: each lets its first waiter go, then waits
 * behind every other lane with work waiting. A flood of one kind of work then delays another kind
 * by one piece of each lane, not by the whole flood; within a lane it is first come first served.
 */
export class LoopTurns {
  /** Waiting work by lane, lanes in the order they go next (a lane served moves to the back). */
  private readonly lanes = new Map<string, Waiter[]>();
  /** When the work of this turn of the loop began; undefined until work starts in it. */
  private turnStart: number | undefined;
  private endQueued = false;

  constructor(private readonly budgetMs: number) {}

  /** Undefined when the caller may go now; otherwise a promise that resolves at its turn. */
  take(lane = ''): Promise<void> | undefined {
    if (this.lanes.size === 0 && this.withinTurn()) return undefined;
    return new Promise((resolve) => {
      const queue = this.lanes.get(lane);
      const waiter = { go: resolve, since: performance.now() };
      if (queue === undefined) this.lanes.set(lane, [waiter]);
      else queue.push(waiter);
      setImmediate(this.release);
    });
  }

  /** How long (ms) the longest-waiting caller has waited; 0 when nobody waits. */
  waitedMs(): number {
    let since = Infinity;
    for (const queue of this.lanes.values()) since = Math.min(since, queue[0].since);
    return since === Infinity ? 0 : performance.now() - since;
  }

  /** The first waiter of the lane whose turn it is; that lane goes to the back if more wait in it. */
  private next(): Waiter | undefined {
    const first = this.lanes.entries().next();
    if (first.done) return undefined;
    const [lane, queue] = first.value;
    const waiter = queue.shift();
    this.lanes.delete(lane);
    if (queue.length > 0) this.lanes.set(lane, queue);
    return waiter;
  }

  /** Whether this turn of the loop has budget left; the first work of a turn starts its count. */
  private withinTurn(): boolean {
    const now = performance.now();
    if (this.turnStart === undefined) {
      this.turnStart = now;
      this.endTurnLater();
      return true;
    }
    return now - this.turnStart < this.budgetMs;
  }

  /**
   * The count ends in the loop's next round of immediates, before the releases put off to it
   * (immediates run in the order they were queued; a release queued from one runs a turn later).
   */
  private endTurnLater(): void {
    if (this.endQueued) return;
    this.endQueued = true;
    setImmediate(this.endTurn);
  }

  private readonly endTurn = () => {
    this.endQueued = false;
    this.turnStart = undefined;
  };

  /**
   * One immediate per waiter. Node settles the promises a callback resolves before it runs the
   * next immediate, so a released request's synchronous work is over when the next release
   * measures the turn. Past the budget, the rest wait for the next turn of the loop.
   */
  private readonly release = () => {
    if (this.withinTurn()) {
      this.next()?.go();
      return;
    }
    this.endTurnLater();
    setImmediate(this.release);
  };
}

interface Waiter {
  go: () => void;
  since: number;
}

/**
 * The budget (ms) of a turn of the process's event loop. A process has one `LoopTurns` of it
 * (runtime.ts makes it, the services carry it): every listener and every write shares its turns.
 */
export const loopTurnBudgetMs = 4;
