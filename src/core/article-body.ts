/**
 * The next body of an article from its current body and one change (a whole new body, or PATCH
 * replacements): sanitised, guarded, counted. The one CPU-heavy step of a write, pure so that it
 * runs the same inline or in a worker thread; refusals are values (Error bodies), which cross a
 * thread boundary where an AppError would not.
 */
import { AppError, type ErrorBody, type ProtectedLink } from './errors.js';
import { explainFailures } from './near-match.js';
import {
  applyReplacements,
  applyTextReplacements,
  describeBody,
  plainTextReplacements,
  protectedAnchorKeysOf,
  type Replacement,
  type ReplacementFailure,
  sanitizeAndScan,
  scanSanitized,
  violatedAmong,
} from './html.js';

/** A whole new body, or replacements in the current one (none: the body stays as it is). */
export type BodyChange = { body: string } | { replacements: readonly Replacement[] };

export interface NextBody {
  body: string;
  /** What the sanitiser removed (meta.sanitized). */
  sanitized: string[];
  word_count: number;
  protected_links: ProtectedLink[];
  /** Whether `body` is the current sanitiser's output (then stored with `SANITIZER_VERSION`). */
  clean: boolean;
}

export type NextBodyOutcome = { ok: true; next: NextBody } | { ok: false; error: ErrorBody };

/** How much text a change makes the service parse: the size that decides where it runs. */
export function changeSize(current: string, change: BodyChange): number {
  if ('body' in change) return current.length + change.body.length;
  return change.replacements.reduce((size, { find, replace = '' }) => size + find.length + replace.length, current.length);
}

/**
 * Parses the current body once (its protected anchors), sanitises the new one once and scans
 * the result once (its anchors and words), where checking each property separately parsed a
 * PATCHed body seven times. `currentClean` says the current body is the current sanitiser's
 * output: replacements of plain text in its text then need no sanitising (`nextBodyInText`).
 */
export function nextBody(current: string, change: BodyChange, currentClean = false): NextBodyOutcome {
  if ('replacements' in change && change.replacements.length === 0) {
    // The body stays as stored (sanitised and guarded when it was written).
    const { anchors, words } = describeBody(current);
    return {
      ok: true,
      next: { body: current, sanitized: [], word_count: words, protected_links: anchors.map(({ link }) => link), clean: currentClean },
    };
  }
  const inText = currentClean && 'replacements' in change ? nextBodyInText(current, change.replacements) : undefined;
  return inText ?? outcomeOf(() => {
    const body = 'body' in change ? change.body : replaced(current, change.replacements, applyReplacements(current, change.replacements));
    return guarded(current, sanitizeAndScan, body);
  });
}

/**
 * The next body of a clean `current` when every replacement is plain text found only in text
 * (`applyTextReplacements`): the result is clean as it is, so only the guard and the scan run.
 * Undefined when the change is not of that kind.
 */
function nextBodyInText(current: string, replacements: readonly Replacement[]): NextBodyOutcome | undefined {
  if (!plainTextReplacements(replacements)) return undefined;
  return outcomeOf(() => {
    const inText = applyTextReplacements(current, replacements);
    return inText === undefined ? undefined : guarded(current, scanSanitized, replaced(current, replacements, inText));
  });
}

/** The body after replacements, or their failures thrown, each with what would fix it. */
function replaced(
  current: string,
  replacements: readonly Replacement[],
  outcome: { ok: true; body: string } | { ok: false; failures: ReplacementFailure[] },
): string {
  if (!outcome.ok) {
    throw new AppError('replacement_failed', 'Some replacements did not match as required; nothing was saved.', {
      failures: explainFailures(current, replacements, outcome.failures),
    });
  }
  return outcome.body;
}

/** `body` sanitised by `clean` (or found clean), then guarded against `current`'s protected anchors. */
function guarded(current: string, clean: typeof sanitizeAndScan, body: string): NextBodyOutcome {
  const before = protectedAnchorKeysOf(current);
  const result = clean(body, { protectedBefore: before.map(({ canonical }) => canonical) });
  const violated = before.length === 0 ? [] : violatedAmong(before, result.anchors.map(({ canonical }) => canonical));
  if (violated.length > 0) {
    throw new AppError(
      'protected_links_violation',
      'The edit removes or rewrites links the service inserted; keep each of them exactly as it is. Nothing was saved.',
      { protected_links: violated },
    );
  }
  return {
    ok: true,
    next: { body: result.html, sanitized: result.removed, word_count: result.words, protected_links: result.anchors.map(({ link }) => link), clean: true },
  };
}

/** Runs `compute`, returning a refusal as a value: an AppError does not cross a thread boundary. */
function outcomeOf<T extends NextBodyOutcome | undefined>(compute: () => T): T | NextBodyOutcome {
  try {
    return compute();
  } catch (error) {
    if (error instanceof AppError) return { ok: false, error: error.toBody() };
    throw error;
  }
}
