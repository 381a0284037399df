/**
 * The worker-thread entries of the HTML pool (`html-pool.ts`): the default computes one next
 * body, and flags the task's start in a shared cell, so the pool times the work and not the wait
 * in the queue; `parseBody` parses a large request body (JSON or a form); `windowBody` cuts a
 * window of a large body for an assistant; `countMatches` and `listMatches` search articles;
 * `renderPdf` draws a monthly report.
 */
import { workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import secureJson from 'secure-json-parse';
import { type BodyChange, type CurrentState, type NextBody, nextBody } from '../core/article-body.js';
import { bodyWindow, type WindowAnswer, type WindowRequest } from '../core/body-window.js';
import type { ErrorBody } from '../core/errors.js';
import { holdsAtMost, largeTextsAsBytes, maxBodyValues, sharedTexts } from '../core/body-values.js';
import { parseForm } from '../core/form.js';
import { collectionOnNextTurn, niceThisThread } from '../platform/threads.js';
import { type LineDiff, lineDiff } from '../core/line-diff.js';
import { type ArticleMatches, type ArticleText, articleMatches, matchCounts } from '../core/text-search.js';
import { stringOfUtf8, type Utf8Text } from '../core/text-parts.js';
import type { MonthlyReport } from './report-pdf.js';

/** What the pool gives each thread (`helperThreadNice`); nothing where this module is imported elsewhere. */
export interface PoolWorkerData {
  nice: number;
}

const given = workerData as PoolWorkerData | null;
if (given) niceThisThread(given.nice);

/**
 * After each task, a thread whose heap holds more than this (bytes in use, garbage included)
 * collects it in full (`collectAfterTask`). V8 keeps what a task grew until the thread's next
 * collections, so a thread that edited a large body, or many ordinary ones, sat on garbage. The
 * threshold sits above a thread's own code and data; the collection runs on the thread, after
 * its work.
 */
const collectAbove = 20 * 2 ** 20;

/**
 * V8 keeps the subject of a thread's last regular-expression match in reach (the legacy
 * `RegExp.input`): after a large task, the 5 MB body its last pattern ran on, until the next task's
 * first match. A match on the empty string lets it go.
 */
const forgetLastMatch = () => /^/.test('');

/**
 * A pool thread's collection after its task, once the task's answer is posted (the next turn of
 * the thread's event loop: the pool's threads take their tasks as messages, see
 * `HtmlPool.threads`; `collectionOnNextTurn`), forgetting its last match first; elsewhere (the
 * module imported by the service) nothing. A task that read or made shared bytes (a
 * `SharedText`'s) asks with `true`.
 */
const collectAfterTask = given ? collectionOnNextTurn(collectAbove, forgetLastMatch) : () => {};

export interface HtmlTask {
  current: string | Utf8Text;
  change: BodyChange | { body: Utf8Text };
  state: CurrentState;
  /** One Int32 cell, set to 1 when the task starts. */
  started: SharedArrayBuffer;
}

/**
 * A task's outcome. A next body equal to the body sent (a clean body, as clients send back what
 * they read) is not sent back (`asSent`): the pool has it, and reading a large string out of a
 * message holds the event loop. `unchanged`: the next body is the current one.
 */
export type HtmlOutcome =
  | { ok: false; error: ErrorBody }
  | { ok: true; next: NextBody; unchanged: boolean }
  | { ok: true; asSent: true; next: Omit<NextBody, 'body'>; unchanged: boolean };

export default function run({ current, change, state, started }: HtmlTask): HtmlOutcome {
  const cell = new Int32Array(started);
  Atomics.store(cell, 0, 1);
  Atomics.notify(cell, 0);
  const resolved: BodyChange = 'body' in change ? { body: text(change.body) } : change;
  const currentText = text(current);
  const outcome = nextBody(currentText, resolved, state);
  collectAfterTask();
  if (!outcome.ok) return outcome;
  // Compared here: the pool may hold the current body only as the bytes it sent.
  const unchanged = outcome.next.body === currentText;
  if (!('body' in change) || !('body' in resolved) || outcome.next.body !== resolved.body) return { ...outcome, unchanged };
  // A lone surrogate sent as UTF-8 arrives as U+FFFD: the pool's string is then not this one.
  if (typeof change.body !== 'string' && resolved.body.includes('\uFFFD')) return { ...outcome, unchanged };
  const { body: _same, ...next } = outcome.next;
  return { ok: true, asSent: true, next, unchanged };
}

/** A text as a string (`stringOfUtf8`). */
const text = (value: string | Utf8Text): string => {
  if (typeof value === 'string') return value;
  const decoded = stringOfUtf8(value);
  // Shared bytes (a `SharedText`'s) are let go of at once: the task's message holds them too.
  if (value.utf8.some((part) => part.buffer instanceof SharedArrayBuffer)) {
    value.utf8 = [];
    collectAfterTask(true);
  }
  return decoded;
};

export interface BodyTask {
  /** The request body's bytes (UTF-8), in the chunks it arrived in (cut anywhere, even inside a character). */
  parts: Uint8Array[];
  kind: 'json' | 'form';
  /** Fields of a JSON object whose large strings come back as shared bytes (`sharedTexts`). */
  sharedFields?: readonly string[];
}

/** Not ok: not valid JSON, or `tooManyValues` (past `maxBodyValues`). */
export type BodyOutcome = { ok: true; value: unknown } | { ok: false; tooManyValues?: true };

/**
 * A large request body, parsed as the service's parsers parse small ones: JSON as Fastify's
 * default parser does (`__proto__` and `constructor.prototype` keys refused), a form by
 * `parseForm`. A value past `maxBodyValues` is not sent back: copying it into the event loop's
 * heap is what would cost. The large strings of `sharedFields` go back as shared bytes
 * (`sharedTexts`), the other large strings as UTF-8, transferred (`largeTextsAsBytes`).
 */
export function parseBody({ parts, kind, sharedFields = [] }: BodyTask): BodyOutcome {
  let value: unknown;
  try {
    const body = Buffer.concat(parts).toString('utf8');
    value = kind === 'form' ? parseForm(body) : secureJson.parse(body, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return { ok: false };
  } finally {
    collectAfterTask();
  }
  if (!holdsAtMost(value, maxBodyValues)) return { ok: false, tooManyValues: true };
  // Made here and sent to the event loop: this thread's reach is let go of after the message.
  if (sharedFields.length > 0 && sharedTexts(value, sharedFields)) collectAfterTask(true);
  const outcome: BodyOutcome = { ok: true, value };
  const buffers = largeTextsAsBytes(outcome);
  if (buffers.length === 0) return outcome;
  // Piscina transfers the buffers and sends `outcome` (decoded by the pool: `largeTextsDecoded`).
  return move({ [transferableSymbol]: buffers, [valueSymbol]: outcome }) as unknown as BodyOutcome;
}

export interface DiffTask {
  before: string | Utf8Text;
  after: string | Utf8Text;
  timeoutMs: number;
}

/** Two revisions' bodies compared line by line (`lineDiff`); `null` when it took past `timeoutMs`. */
export function diffRevisions({ before, after, timeoutMs }: DiffTask): LineDiff | null {
  try {
    return lineDiff(text(before), text(after), { timeoutMs }) ?? null;
  } finally {
    collectAfterTask();
  }
}

export interface WindowTask {
  body: string | Utf8Text;
  request: WindowRequest;
}

/** A window of a large body, with its outline (`bodyWindow`). */
export function windowBody({ body, request }: WindowTask): WindowAnswer {
  try {
    return bodyWindow(text(body), request);
  } finally {
    collectAfterTask();
  }
}

export interface SearchTask {
  texts: ArticleText[];
  query: string;
  matchCase: boolean;
}

/** Matches of a query in several articles (`searchTexts`): the counts alone, or each article's listed matches. */
export function countMatches({ texts, query, matchCase }: SearchTask): number[] {
  try {
    return matchCounts(texts, query, matchCase);
  } finally {
    collectAfterTask();
  }
}

export function listMatches({ texts, query, matchCase }: SearchTask): ArticleMatches[] {
  try {
    return texts.map((text) => articleMatches(text, query, matchCase));
  } finally {
    collectAfterTask();
  }
}

export interface PdfTask {
  report: MonthlyReport;
}

/** A monthly report as a PDF (its drawing code, and pdfkit, load on the first report). */
export async function renderPdf({ report }: PdfTask): Promise<Uint8Array> {
  const { renderReportPdf } = await import('./report-pdf.js');
  return renderReportPdf(report);
}
