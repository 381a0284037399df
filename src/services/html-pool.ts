/// <reference lib="es2024.sharedmemory" />
/**
 * Where the CPU-heavy step of a write runs (`nextBody`: sanitise, guard, replace, count). Small
 * changes run inline, where a worker round trip would cost more than the work; larger ones go
 * to a pool of worker threads (piscina), so no body, however hostile its markup, holds the event
 * loop; bodies of a million characters or more take turns, one at a time. The pool is
 * bounded four ways: at most `maxQueuedChars` of text waiting for a thread (which bounds memory
 * too: a waiting 5 MB body holds its text), at most `perAccount` tasks in flight per account (dry
 * runs included), `timeoutMs` of work per task and `heapMb` of heap per thread.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Piscina } from 'piscina';
import type { HtmlPoolSettings } from '../config.js';
import { changeSize, type CurrentState, type NextBody, nextBody } from '../core/article-body.js';
import { bodyWindow, type WindowAnswer, type WindowRequest } from '../core/body-window.js';
import { largeTextsDecoded } from '../core/body-values.js';
import { AppError, validationFailed } from '../core/errors.js';
import { type LineDiff, lineDiff } from '../core/line-diff.js';
import { type ArticleMatches, articleMatches, matchCounts } from '../core/text-search.js';
import { Lock } from '../platform/lock.js';
import { buffersOf, type SharedText, type Utf8Text, utf8InParts } from '../core/text-parts.js';
import { helperThreadNice, threadExecArgv, threadModule } from '../platform/threads.js';
import { codePointsAtMost, encodedTask, isStringChange, ownBuffer, type PoolChange, type PreparedTask, runTask, sentChars, type TaskOptions, type WorkerTasks } from './html-tasks.js';
import type { BodyOutcome, BodyTask, HtmlOutcome, PoolWorkerData, SearchTask } from './html-worker.js';
import type { MonthlyReport } from './report-pdf.js';

const defaultHeapMb = 256;

/** Node stopped the task's thread: its heap reached the pool's `heapMb`. */
const outOfMemory = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';

const workerFile = threadModule(import.meta.url, 'html-worker');

/** The heap of a pool thread: a small young generation, and `heapMb` of old generation. */
export const threadResourceLimits = (heapMb: number) => ({ maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: heapMb });

/**
 * Tasks this large (an edit's `changeSize`, which counts the body it produces; bytes of a request
 * body) run one at a time; texts this large cross to the thread as UTF-8. Parsing a body of
 * megabytes takes a worker long and grows its heap, so large bodies never hold every thread (the
 * pool has at least two: edits of ordinary articles keep one) and never add up in memory. Taking
 * turns on the pool's threads spares a thread of their own, which would be one V8 heap more.
 */
const largeTaskChars = 1_000_000;

/** The fewest threads the pool starts: one for the large task of the moment, one for the rest. */
const minimumThreads = 2;

/**
 * A hold of the large turn (`HtmlPool.inLargeTurn`): the large tasks of the work that holds it run
 * in it instead of waiting for the next.
 */
export interface LargeTurn {
  readonly held: symbol;
}

/**
 * `nextBody`'s outcome; `unchanged` when the next body is the current one (the body the pool was
 * given as bytes, which it no longer holds, is compared by the thread). A next body that is the
 * new body as sent is that body: a `SharedText` stays one.
 */
export type PooledOutcome =
  | Exclude<HtmlOutcome, { ok: true }>
  | { ok: true; next: Omit<NextBody, 'body'> & { body: string | SharedText }; unchanged: boolean };

/** Milliseconds a comparison of small bodies may take on the event loop before it goes to a thread. */
const inlineDiffMs = 10;

/** The answer of a task the pool will not run: the node is stopping (`close`). */
const stopping = (): AppError =>
  new AppError('service_unavailable', 'This node is stopping; nothing was saved. Retry, possibly on another node.', {}, 1);

/** A 429 to retry in a second; `limit` only where the client's own share was used up. */
const busy = (message: string, limit?: number): AppError =>
  new AppError('rate_limited', message, limit === undefined ? {} : { limit }, 1);

export class HtmlPool {
  private pool: Piscina | undefined;
  /** Held by the large task running (`largeTaskChars`). */
  private readonly largeTurn = new Lock();
  /** The hold of `largeTurn` given to the work that holds it (`inLargeTurn`). */
  private heldTurn: LargeTurn | undefined;
  private readonly inFlight = new Map<number, number>();
  private queuedChars = 0;
  /** Set by `close`: the node is stopping. */
  private closed = false;

  constructor(private readonly settings: HtmlPoolSettings) {}

  /** Pooled tasks waiting or running. */
  get running(): number {
    let total = 0;
    for (const count of this.inFlight.values()) total += count;
    return total;
  }

  /**
   * The next body for `change` (`state`: see core `nextBody`); refusals of the change
   * itself come back as values. A large current body may come as its UTF-8 bytes, as the off-loop
   * connection read them (SQLite), or in UTF-8 parts (PostgreSQL: `bodyInParts`): they go to the
   * thread as they are (transferred), never decoded here. A large change runs in `turn` when its
   * caller holds it.
   */
  async nextBody(accountId: number, current: string | Uint8Array | Utf8Text, change: PoolChange, state: CurrentState = { clean: false }, turn?: LargeTurn): Promise<PooledOutcome> {
    const currentChars = codePointsAtMost(current);
    // Where it runs is decided by what the change produces; the queue counts the text that waits.
    const size = changeSize(typeof current === 'string' ? current : currentChars, change, this.settings.inlineBelow);
    const sent = currentChars + sentChars(change);
    if (typeof current === 'string' && isStringChange(change) && size < this.settings.inlineBelow) {
      const outcome = nextBody(current, change, state);
      return outcome.ok ? { ...outcome, unchanged: outcome.next.body === current } : outcome;
    }
    // Handing the text to a worker copies it: not in the same turn as reading it. The bounds are
    // checked after this turn, in the same one that counts the task.
    await nextTurn();
    this.refuseOverQueue(sent, 'The server is busy with large edits; retry in a moment. Nothing was saved.');
    const release = this.admit(accountId, `This account already has ${this.settings.perAccount} large edits in progress; retry when one has finished. Nothing was saved.`);
    try {
      const outcome = await this.run(
        { sent, size },
        () =>
          typeof current === 'string' && isStringChange(change) && sent < largeTaskChars
            ? { task: { current, change, state } }
            : encodedTask(current, change, state),
        turn,
      );
      if (!('asSent' in outcome)) return outcome;
      return { ok: true, next: { ...outcome.next, body: (change as { body: string | SharedText }).body }, unchanged: outcome.unchanged };
    } finally {
      release();
    }
  }

  /**
   * Two revisions' bodies compared line by line, or `undefined` when the comparison takes past
   * `timeoutMs`. Small bodies are compared inline for at most `inlineDiffMs`; the rest, and any
   * that did not finish inline, in a pool thread (large bodies one at a time), counted like
   * an edit: the comparison grows with the product of the lengths, too long for the event loop.
   */
  async lineDiff(accountId: number, before: string, after: string): Promise<LineDiff | undefined> {
    const size = before.length + after.length;
    if (size < this.settings.inlineBelow) {
      const inline = lineDiff(before, after, { timeoutMs: inlineDiffMs });
      if (inline) return inline;
    }
    await nextTurn();
    this.refuseOverQueue(size, 'The server is busy with large edits; retry in a moment.');
    const release = this.admit(accountId, `This account already has ${this.settings.perAccount} comparisons or large edits in progress; retry when one has finished.`);
    this.queuedChars += size;
    try {
      const { timeoutMs } = this.settings;
      if (size < largeTaskChars) return (await this.onThread('diffRevisions', { before, after, timeoutMs })) ?? undefined;
      return await this.inLargeTurn(async () => {
        const encoded = { before: await utf8InParts(before), after: await utf8InParts(after) };
        const transferList = [...buffersOf(encoded.before), ...buffersOf(encoded.after)];
        return (await this.onThread('diffRevisions', { ...encoded, timeoutMs }, { transferList })) ?? undefined;
      });
    } catch (error) {
      // A comparison past the heap bound is as good as one past the time limit: not shown.
      if (outOfMemory(error)) return undefined;
      throw error;
    } finally {
      this.queuedChars -= size;
      release();
    }
  }

  /**
   * A window of `body` for an assistant, with its outline (core `bodyWindow`): inline for a small
   * body, in a pool thread otherwise, counted like an edit. The outline and the code point offsets
   * read the whole body, which on the event loop held it far past a turn. A large body may come
   * as its UTF-8 bytes or in UTF-8 parts, as the database read it: it goes to the thread as it is
   * (transferred), never decoded here. Not in the large turn: a reader does not wait behind large
   * edits for work on one body.
   */
  async bodyWindow(accountId: number, body: string | Uint8Array | Utf8Text, request: WindowRequest): Promise<WindowAnswer> {
    if (typeof body === 'string' && body.length < this.settings.inlineBelow) return bodyWindow(body, request);
    await nextTurn();
    const size = codePointsAtMost(body);
    this.refuseOverQueue(size, 'The server is busy with large articles; retry in a moment.');
    const release = this.admit(accountId, `This account already has ${this.settings.perAccount} reads of large articles or large edits in progress; retry when one has finished.`);
    this.queuedChars += size;
    try {
      if (typeof body === 'string' && size < largeTaskChars) return await this.onThread('windowBody', { body, request });
      const encoded = typeof body === 'string' ? await utf8InParts(body) : body instanceof Uint8Array ? { utf8: [ownBuffer(body)] } : body;
      return await this.onThread('windowBody', { body: encoded, request }, { transferList: buffersOf(encoded) });
    } finally {
      this.queuedChars -= size;
      release();
    }
  }

  /**
   * A query's matches in several articles (core `matchCounts`, or with `listed` each article's
   * listed matches): inline for little text, in a pool thread otherwise, counted like an edit.
   * Folding and scanning megabytes held the event loop for as many tens of milliseconds.
   */
  searchTexts(accountId: number, task: SearchTask, listed: true): Promise<ArticleMatches[]>;
  searchTexts(accountId: number, task: SearchTask, listed: false): Promise<number[]>;
  async searchTexts(accountId: number, task: SearchTask, listed: boolean): Promise<number[] | ArticleMatches[]> {
    const size = task.texts.reduce((sum, { title, body }) => sum + (title?.length ?? 0) + body.length, 0);
    if (size < this.settings.inlineBelow) {
      return listed ? task.texts.map((text) => articleMatches(text, task.query, task.matchCase)) : matchCounts(task.texts, task.query, task.matchCase);
    }
    await nextTurn();
    this.refuseOverQueue(size, 'The server is busy with large articles; retry in a moment.');
    const release = this.admit(accountId, `This account already has ${this.settings.perAccount} searches of large articles or large edits in progress; retry when one has finished.`);
    this.queuedChars += size;
    try {
      return await (listed ? this.onThread('listMatches', task) : this.onThread('countMatches', task));
    } finally {
      this.queuedChars -= size;
      release();
    }
  }

  /**
   * A monthly report as a PDF (`renderReportPdf`), drawn by a pool thread: drawing a large report
   * would hold the event loop, and a share link reaches it without signing in. It counts against
   * the account's tasks in flight like an edit, so a flood of downloads of one share link is
   * refused (429) instead of queued.
   */
  async renderReportPdf(accountId: number, report: MonthlyReport): Promise<Buffer> {
    const release = this.admit(accountId, `This account already has ${this.settings.perAccount} reports or large edits in progress; retry when one has finished.`);
    try {
      const pdf = await this.onThread('renderPdf', { report });
      return Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
    } finally {
      release();
    }
  }

  /**
   * Refuses with `refusal` (429) a task of `size` that would take the queue past its bound. One
   * task may always wait, so a text larger than the bound is slow, not refused forever.
   */
  private refuseOverQueue(size: number, refusal: string): void {
    if (this.queuedChars > 0 && this.queuedChars + size > this.settings.maxQueuedChars) throw busy(refusal);
  }

  /**
   * Counts a task of `accountId` in flight (edits and reports share the bound), or refuses it with
   * `refusal` past the account's bound; returns the release.
   */
  private admit(accountId: number, refusal: string): () => void {
    const running = this.inFlight.get(accountId) ?? 0;
    if (running >= this.settings.perAccount) throw busy(refusal, this.settings.perAccount);
    this.inFlight.set(accountId, running + 1);
    return () => {
      const left = (this.inFlight.get(accountId) ?? 1) - 1;
      if (left === 0) this.inFlight.delete(accountId);
      else this.inFlight.set(accountId, left);
    };
  }

  /**
   * A large request body, parsed by a pool thread (`parseBody` in html-worker.ts): decoding and
   * parsing megabytes of JSON or form data would hold the event loop. It comes in `parts`, the
   * chunks it arrived in; its bytes count against the queue bound while it waits and runs. A body
   * of `largeTaskChars` bytes or more is parsed in the large turn, as a large edit is, so one body
   * parsed while another is edited never grows two threads' heaps at once, which raised the
   * server's peak memory. The large strings of `sharedFields` come back
   * as `SharedText`s (see `sharedTexts`).
   */
  async parseBody(parts: Uint8Array[], kind: BodyTask['kind'], sharedFields?: readonly string[]): Promise<BodyOutcome> {
    // Read before the buffers are handed over: a transferred buffer has no length left here.
    const size = parts.reduce((sum, part) => sum + part.byteLength, 0);
    this.refuseOverQueue(size, 'The server is busy with large requests; retry in a moment. Nothing was saved.');
    this.queuedChars += size;
    try {
      // A part that is a buffer of its own (a chunk read from the socket) goes to the thread as it
      // is (transferred); a view into a larger buffer is copied.
      const transferList = [...new Set(parts.filter((part) => part.byteOffset === 0 && part.byteLength === part.buffer.byteLength).map((part) => part.buffer as ArrayBuffer))];
      const parse = () => this.onThread('parseBody', { parts, kind, sharedFields }, { transferList });
      const outcome = await (size < largeTaskChars ? parse() : this.inLargeTurn(parse));
      await largeTextsDecoded(outcome);
      return outcome;
    } catch (error) {
      // Only a body of far more values than `maxBodyValues` fills a thread's heap while parsed.
      if (outOfMemory(error)) return { ok: false, tooManyValues: true };
      throw error;
    } finally {
      this.queuedChars -= size;
    }
  }

  /**
   * `work` once no other large task runs (see `largeTaskChars`), or at once when it is given the
   * turn that is `held`. A write of a large body takes the turn for all its steps (reading the
   * row, the edit, storing): the copies of a large body that reading and storing make (the database's and
   * the current body's) then never add to another large edit's.
   */
  async inLargeTurn<T>(work: (turn: LargeTurn) => Promise<T>, held?: LargeTurn): Promise<T> {
    if (held !== undefined && held === this.heldTurn) return work(held);
    await this.largeTurn.acquire();
    const turn: LargeTurn = { held: Symbol('large turn') };
    this.heldTurn = turn;
    try {
      return await work(turn);
    } finally {
      this.heldTurn = undefined;
      this.largeTurn.release();
    }
  }

  /**
   * Runs the task `prepare` gives (its `sent` characters counted in the queue from now; one whose
   * work is large, `size`, waits for its turn first, unless its caller holds `turn`), stopping its
   * worker `timeoutMs` after the task started (not queued).
   */
  private async run({ sent, size }: { sent: number; size: number }, prepare: () => PreparedTask | Promise<PreparedTask>, turn?: LargeTurn): Promise<HtmlOutcome> {
    const started = new SharedArrayBuffer(4);
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    let queued = true;
    this.queuedChars += sent;
    const leaveQueue = () => {
      if (queued) this.queuedChars -= sent;
      queued = false;
    };
    const wait = Atomics.waitAsync(new Int32Array(started), 0, 0);
    void Promise.resolve(wait.value).then(() => {
      leaveQueue();
      if (abort.signal.aborted) return;
      timer = setTimeout(() => {
        timedOut = true;
        abort.abort();
      }, this.settings.timeoutMs);
    });
    const send = async () => {
      const { task, transferList } = await prepare();
      return this.onThread('default', { ...task, started }, { signal: abort.signal, transferList });
    };
    try {
      return await (size < largeTaskChars ? send() : this.inLargeTurn(send, turn));
    } catch (error) {
      if (timedOut) {
        throw validationFailed({
          body: [`The HTML is too complex to process within ${this.settings.timeoutMs / 1000} s; simplify its markup. Nothing was saved.`],
        });
      }
      if (outOfMemory(error)) {
        throw validationFailed({ body: [`The HTML is too complex to process within ${this.heapMb} MB of memory; simplify its markup. Nothing was saved.`] });
      }
      throw error;
    } finally {
      leaveQueue();
      clearTimeout(timer);
      if (!abort.signal.aborted) {
        // Release the start waiter of a task that finished (or failed) without it.
        abort.abort();
        Atomics.notify(new Int32Array(started), 0);
      }
    }
  }

  /**
   * Runs the task `name` on a pool thread. Once `close` is called, a task is refused, and one that
   * was waiting or running when the threads stopped answers the same: the node is stopping.
   */
  private async onThread<N extends keyof WorkerTasks>(name: N, task: WorkerTasks[N][0], options?: TaskOptions): Promise<WorkerTasks[N][1]> {
    if (this.closed) throw stopping();
    this.pool ??= HtmlPool.threads(Math.max(minimumThreads, this.settings.threads), this.heapMb);
    try {
      return await runTask(this.pool, name, task, options);
    } catch (error) {
      throw this.closed ? stopping() : error;
    }
  }

  private get heapMb(): number {
    return this.settings.heapMb ?? defaultHeapMb;
  }

  /**
   * The pool's threads. Each takes its tasks as messages, on its event loop (`atomics:
   * 'disabled'`): piscina's default has a thread wait for its next task in `Atomics.wait`, inside
   * the call that posted the last answer, so that task's input and answer stayed in reach, and
   * nothing scheduled on the thread (its collection after a task, V8's own tasks) ran until the
   * next task came (see `collectAfterTask` in html-worker.ts).
   */
  private static threads(maxThreads: number, heapMb: number): Piscina {
    return new Piscina({
      atomics: 'disabled',
      filename: workerFile.href,
      minThreads: 0,
      maxThreads,
      idleTimeout: 30_000,
      execArgv: threadExecArgv,
      resourceLimits: threadResourceLimits(heapMb),
      workerData: { nice: helperThreadNice } satisfies PoolWorkerData,
    });
  }

  /** Stops the worker threads: tasks still waiting or running answer 503, and so does any later one. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool?.destroy();
    this.pool = undefined;
  }
}
