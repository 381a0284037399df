import type { Piscina } from 'piscina';
import type { BodyChange, CurrentState } from '../core/article-body.js';
import type { WindowAnswer } from '../core/body-window.js';
import type { LineDiff } from '../core/line-diff.js';
import type { ArticleMatches } from '../core/text-search.js';
import { buffersOf, type SharedText, type Utf8Text, utf8InParts } from '../core/text-parts.js';
import type { BodyOutcome, BodyTask, DiffTask, HtmlOutcome, HtmlTask, PdfTask, SearchTask, WindowTask } from './html-worker.js';

// The HTML pool's tasks as they cross to a thread (html-pool.ts): what each export of the worker
// takes and gives, and a body change with its large strings as UTF-8 buffers to transfer.

/** The worker's tasks by export name (html-worker.ts), with what each takes and gives. */
export interface WorkerTasks {
  default: [HtmlTask, HtmlOutcome];
  diffRevisions: [DiffTask, LineDiff | null];
  parseBody: [BodyTask, BodyOutcome];
  renderPdf: [PdfTask, Uint8Array];
  windowBody: [WindowTask, WindowAnswer];
  countMatches: [SearchTask, number[]];
  listMatches: [SearchTask, ArticleMatches[]];
}

/** How a task is sent: a signal that stops its thread, and the buffers it takes along. */
export interface TaskOptions {
  signal?: AbortSignal;
  transferList?: ArrayBuffer[];
}

/** Runs the worker's export `name` on a thread of `pool`, handing it the buffers of `transferList`. */
export const runTask = <N extends keyof WorkerTasks>(pool: Piscina, name: N, task: WorkerTasks[N][0], options: TaskOptions = {}) =>
  pool.run(task, { name, ...options }) as Promise<WorkerTasks[N][1]>;

/** A task for the `default` export of the worker, with the buffers it takes along. */
export interface PreparedTask {
  task: Omit<HtmlTask, 'started'>;
  transferList?: ArrayBuffer[];
}

/**
 * A change of the body for the pool: a new body may come as a `SharedText` (a large PUT's body,
 * which the thread reads where it is).
 */
export type PoolChange = BodyChange | { body: string | SharedText };

/** Characters of the text `change` sends: a new body, or each replacement's `find` and `replace`. */
export const sentChars = (change: PoolChange): number => {
  if ('body' in change) return change.body.length;
  if ('everywhere' in change) return change.everywhere.find.length + change.everywhere.replace.length;
  return change.replacements.reduce((sum, { find, replace = '' }) => sum + find.length + replace.length, 0);
};

/**
 * A task with its large strings as UTF-8: a string encoded in parts (see `utf8InParts`) and
 * transferred, a `SharedText` as the bytes it already is.
 */
export async function encodedTask(current: string | Uint8Array | Utf8Text, change: PoolChange, state: CurrentState): Promise<PreparedTask> {
  const encodedCurrent = typeof current === 'string' ? await utf8InParts(current) : current instanceof Uint8Array ? { utf8: [ownBuffer(current)] } : current;
  const encodedChange = 'body' in change ? { body: typeof change.body === 'string' ? await utf8InParts(change.body) : { utf8: [change.body.shared] } } : change;
  const transferList = buffersOf(encodedCurrent);
  if ('body' in encodedChange) transferList.push(...buffersOf(encodedChange.body));
  return { task: { current: encodedCurrent, change: encodedChange, state }, transferList };
}

/** Whether `change` holds no `SharedText` (it may then run inline, or go to a thread as it is). */
export const isStringChange = (change: PoolChange): change is BodyChange => !('body' in change) || typeof change.body === 'string';

/** Bytes of a body read as UTF-8, whole or in parts. */
const byteLength = (bytes: Uint8Array | Utf8Text): number =>
  bytes instanceof Uint8Array ? bytes.byteLength : bytes.utf8.reduce((sum, part) => sum + part.byteLength, 0);

/** A body's length (UTF-16 units), or its UTF-8 bytes: never fewer than its code points. */
export const codePointsAtMost = (body: string | Uint8Array | Utf8Text): number => (typeof body === 'string' ? body.length : byteLength(body));

/** `bytes` in a buffer of their own, to transfer: the bytes themselves when they already are. */
export const ownBuffer = (bytes: Uint8Array): Uint8Array =>
  bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
