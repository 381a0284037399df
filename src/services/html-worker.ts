/**
 * The worker-thread entry of the HTML pool (`html-pool.ts`): computes one next body. It flags
 * the task's start in a shared cell, so the pool times the work and not the wait in the queue.
 */
import { type BodyChange, nextBody, type NextBodyOutcome } from '../core/article-body.js';

export interface HtmlTask {
  current: string;
  change: BodyChange;
  currentClean: boolean;
  /** One Int32 cell, set to 1 when the task starts. */
  started: SharedArrayBuffer;
}

export default function run({ current, change, currentClean, started }: HtmlTask): NextBodyOutcome {
  const cell = new Int32Array(started);
  Atomics.store(cell, 0, 1);
  Atomics.notify(cell, 0);
  return nextBody(current, change, currentClean);
}
