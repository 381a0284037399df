/**
 * The next body of an article from its current body and one change (a whole new body, or PATCH
 * replacements): sanitised, guarded, counted. The one CPU-heavy step of a write, pure so that it
 * runs the same inline or in a worker thread; refusals are values (Error bodies), which cross a
 * thread boundary where an AppError would not.
 */
import { AppError, type ErrorBody, type ProtectedLink } from './errors.js';
import { explainFailures } from './near-match.js';
import { applyReplacements, describeBody, protectedAnchorKeysOf, type Replacement, sanitizeAndScan, violatedAmong } from './html.js';

/** A whole new body, or replacements in the current one (none: the body stays as it is). */
export type BodyChange = { body: string } | { replacements: readonly Replacement[] };

export interface NextBody {
  body: string;
  /** What the sanitiser removed (meta.sanitized). */
  sanitized: string[];
  word_count: number;
  protected_links: ProtectedLink[];
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
 * PATCHed body seven times.
 */
export function nextBody(current: string, change: BodyChange): NextBodyOutcome {
  try {
    if ('replacements' in change && change.replacements.length === 0) {
      // The body stays as stored (sanitised and guarded when it was written).
      const { anchors, words } = describeBody(current);
      return { ok: true, next: { body: current, sanitized: [], word_count: words, protected_links: anchors.map(({ link }) => link) } };
    }
    let body: string;
    if ('body' in change) {
      body = change.body;
    } else {
      const replaced = applyReplacements(current, change.replacements);
      if (!replaced.ok) {
        const error = new AppError('replacement_failed', 'Some replacements did not match as required; nothing was saved.', {
          failures: explainFailures(current, change.replacements, replaced.failures),
        });
        return { ok: false, error: error.toBody() };
      }
      body = replaced.body;
    }
    const before = protectedAnchorKeysOf(current);
    const clean = sanitizeAndScan(body, { protectedBefore: before.map(({ canonical }) => canonical) });
    const violated = before.length === 0 ? [] : violatedAmong(before, clean.anchors.map(({ canonical }) => canonical));
    if (violated.length > 0) {
      const error = new AppError(
        'protected_links_violation',
        'The edit removes or rewrites links the service inserted; keep each of them exactly as it is. Nothing was saved.',
        { protected_links: violated },
      );
      return { ok: false, error: error.toBody() };
    }
    return {
      ok: true,
      next: { body: clean.html, sanitized: clean.removed, word_count: clean.words, protected_links: clean.anchors.map(({ link }) => link) },
    };
  } catch (error) {
    if (error instanceof AppError) return { ok: false, error: error.toBody() };
    throw error;
  }
}
