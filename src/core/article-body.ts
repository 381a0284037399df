/**
 * The next body of an article from its current body and one change (a whole new body, or PATCH
 * replacements): sanitised, guarded, counted. The one CPU-heavy step of a write, pure so that it
 * runs the same inline or in a worker thread; refusals are values (Error bodies), which cross a
 * thread boundary where an AppError would not.
 */
import { AppError, type ErrorBody, type ProtectedLink, validationFailed } from './errors.js';
import { replaceOccurrences } from './text-search.js';
import { explainFailures } from './near-match.js';
import { applyReplacements, applyTextReplacements, plainTextReplacements } from './body-replacements.js';
import { MAX_BODY_LENGTH, sanitizeAndScan } from './html.js';
import { describeBody, protectedAnchorKeysOf, violatedAmong } from './protected-anchors.js';
import type { Replacement, ReplacementFailure } from './replacement.js';

/**
 * Every occurrence of `find` replaced, case-insensitively unless `matchCase` (`replaceInSite`;
 * core `occurrences`). With `matchCase` it is the PATCH replacement `{find, replace, all: true}`.
 */
export interface ReplaceEverywhere {
  find: string;
  replace: string;
  matchCase: boolean;
}

/** A whole new body, replacements in the current one (none: the body stays as it is), or one text replaced everywhere. */
export type BodyChange = { body: string } | { replacements: readonly Replacement[] } | { everywhere: ReplaceEverywhere };

/** `everywhere` as PATCH replacements, where it is one (`matchCase`). */
const asReplacements = ({ find, replace, matchCase }: ReplaceEverywhere): { replacements: Replacement[] } | undefined =>
  matchCase ? { replacements: [{ find, replace, all: true }] } : undefined;

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

/**
 * How much text a change makes the service parse, the size that decides where it runs: the
 * current body and the longest body the change produces, a new body or the body after each
 * replacement. What a replacement produces is not what it sends: one `e` replaced by 3,000
 * characters throughout makes megabytes of a few kilobytes. Known cheaply: replacements are applied
 * here only while the bodies they produce are shorter than `exactBelow`; past that (or for a
 * `current` known only by its length) each item counts as if every match its `find` could have
 * were replaced, up to `MAX_BODY_LENGTH`, the longest body a replacement may produce.
 */
export function changeSize(
  current: string | number,
  change: { body: { length: number } } | { replacements: readonly Replacement[] } | { everywhere: ReplaceEverywhere },
  exactBelow = 0,
): number {
  const currentLength = typeof current === 'string' ? current.length : current;
  if ('body' in change) return currentLength + change.body.length;
  if ('everywhere' in change) {
    // Case-insensitive matches are not counted here: sized as if each `find.length` characters were one.
    const { find, replace, matchCase } = change.everywhere;
    return changeSize(matchCase ? current : currentLength, { replacements: [{ find, replace, all: true }] }, exactBelow);
  }
  // None: the body stays as stored, and its stored counts are the answer (`nextBody`).
  if (change.replacements.length === 0) return currentLength;
  let body = typeof current === 'string' && current.length < exactBelow ? current : undefined;
  let length = currentLength;
  let longest = length;
  for (const { find, replace = '', all = false } of change.replacements) {
    if (body === undefined) {
      // At most one match every `find.length` characters.
      const growth = Math.max(0, replace.length - find.length) * Math.floor(length / Math.max(1, find.length));
      length = Math.min(MAX_BODY_LENGTH, length + growth);
    } else {
      const pieces = find === '' ? [body] : body.split(find);
      const matches = pieces.length - 1;
      // A failing item leaves the body as it is (`applyReplacements`).
      if (matches === 0 || (matches > 1 && !all)) continue;
      length = body.length + matches * (replace.length - find.length);
      body = length < exactBelow ? pieces.join(replace) : undefined;
    }
    longest = Math.max(longest, length);
  }
  return currentLength + Math.min(longest, MAX_BODY_LENGTH);
}

/**
 * What the row of a clean current body stores of it: the word count and protected links found
 * when it was written, by the same scan (`describeBody`).
 */
export interface StoredCounts {
  words: number;
  links: ProtectedLink[];
}

/**
 * What the caller knows of the current body: whether it is the current sanitiser's output
 * (`clean`) and, for a clean one, what its row stores of it.
 */
export interface CurrentState {
  clean: boolean;
  stored?: StoredCounts;
}

/**
 * Parses the current body once (its protected anchors), sanitises the new one once and scans
 * the result once (its anchors and words), where checking each property separately parsed a
 * PATCHed body seven times. A clean current body takes replacements of plain text in its text
 * without sanitising (`nextBodyInText`), and with its row's stored counts without any parse.
 */
export function nextBody(current: string, change: BodyChange, state: CurrentState = { clean: false }): NextBodyOutcome {
  if ('everywhere' in change) {
    const { find, replace, matchCase } = change.everywhere;
    const exact = asReplacements(change.everywhere);
    if (exact) return nextBody(current, exact, state);
    return outcomeOf(() => {
      const { text: body } = replaceOccurrences(current, find, replace, matchCase);
      if (body.length > MAX_BODY_LENGTH) throw validationFailed({ replace: [`The body would grow past ${MAX_BODY_LENGTH} characters.`] });
      return guarded(current, body);
    });
  }
  const known = state.clean ? state.stored : undefined;
  if ('replacements' in change && change.replacements.length === 0) {
    // The body stays as stored (sanitised and guarded when it was written).
    const { words, links } = known ?? described(current);
    return { ok: true, next: { body: current, sanitized: [], word_count: words, protected_links: links, clean: state.clean } };
  }
  const inText = state.clean && 'replacements' in change ? nextBodyInText(current, change.replacements, known) : undefined;
  return inText ?? outcomeOf(() => {
    const body = 'body' in change ? change.body : replaced(current, change.replacements, applyReplacements(current, change.replacements));
    return guarded(current, body);
  });
}

/** `body`'s words and protected links, from one scan. */
function described(body: string): StoredCounts {
  const { anchors, words } = describeBody(body);
  return { words, links: anchors.map(({ link }) => link) };
}

/**
 * The next body of a clean `current` when every replacement is plain text found only in text
 * outside protected anchors (`applyTextReplacements`): the result is clean as it is and keeps
 * `current`'s protected anchors, so the guard has nothing to compare. Its words are `known`'s
 * count changed by the replacements' (counted around them), or, without `known`, the result's
 * scan. Undefined when the change is not of that kind.
 */
function nextBodyInText(current: string, replacements: readonly Replacement[], known: StoredCounts | undefined): NextBodyOutcome | undefined {
  if (!plainTextReplacements(replacements)) return undefined;
  return outcomeOf((): NextBodyOutcome | undefined => {
    const inText = applyTextReplacements(current, replacements);
    if (inText === undefined) return undefined;
    const body = replaced(current, replacements, inText);
    const wordChange = inText.ok ? inText.wordChange : undefined;
    const { words, links } = known && wordChange !== undefined ? { words: known.words + wordChange, links: known.links } : described(body);
    return { ok: true, next: { body, sanitized: [], word_count: words, protected_links: links, clean: true } };
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

/** `body` sanitised, then guarded against `current`'s protected anchors. */
function guarded(current: string, body: string): NextBodyOutcome {
  const before = protectedAnchorKeysOf(current);
  const result = sanitizeAndScan(body, { protectedBefore: before.map(({ canonical }) => canonical) });
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
