/**
 * The PATCH replacement engine: literal find and replace over the stored HTML, and the fast path
 * for replacements inside text, which also tells what they change in the word count. Pure and
 * synchronous.
 */
import { validationFailed } from './errors.js';
import { MAX_BODY_LENGTH } from './html.js';
import { INLINE_ELEMENTS, MARKER, wordCount } from './protected-anchors.js';
import type { Replacement, ReplacementFailure } from './replacement.js';

/**
 * Applies PATCH replacements in order, each to the result of the ones before. Matching is
 * literal (split/join: `$&` or `(` in a string mean themselves), case-sensitive and
 * non-overlapping. A failing item is skipped and later items still run, so every failure is
 * reported; any failure means no body.
 */
export function applyReplacements(
  body: string,
  replacements: readonly Replacement[],
): { ok: true; body: string } | { ok: false; failures: ReplacementFailure[] } {
  let current = body;
  const failures: ReplacementFailure[] = [];
  replacements.forEach(({ find, replace = '', all = false }, index) => {
    const pieces = find === '' ? [current] : current.split(find);
    const matches = pieces.length - 1;
    if (matches === 0 || (matches > 1 && !all)) {
      failures.push({ index, matches });
      return;
    }
    // An `all` item with a long `replace` could otherwise grow the body past any sane size.
    if (current.length + matches * (replace.length - find.length) > MAX_BODY_LENGTH) {
      throw validationFailed({ [`replacements.${index}.replace`]: [`The body would grow past ${MAX_BODY_LENGTH} characters.`] });
    }
    current = pieces.join(replace);
  });
  return failures.length > 0 ? { ok: false, failures } : { ok: true, body: current };
}

/**
 * Characters a replacement may hold and still take the fast path: none that is markup (`<`, `>`),
 * starts an entity (`&`), or that the sanitiser removes from text (NUL, bidi and formatting controls).
 */
const TEXT_SAFE = /^[^<>&\0\u202A-\u202E\u2066-\u206F]*$/;

/** Entities in sanitised text are `&amp;`, `&lt;` and `&gt;`; an `&` this close may open one that is still open. */
const ENTITY_REACH = 8;

/** The marker or the end of a tag, whichever comes first (`lastIndex` set to where to look). */
const MARKER_OR_TAG_END = new RegExp(`${MARKER}|>`, 'gi');

/** Whether a character ends a tag's name: white space, `/` or `>`. */
const endsTagName = (code: number): boolean => code === 62 || code === 47 || code === 32 || (code >= 9 && code <= 13);

/**
 * The open `a` elements around the tag at `lt` and after it, counted only inside an anchor that
 * may be protected (0 outside): its start tag holds the marker anywhere in it, which any anchor
 * the scan finds protected does. Sanitiser output closes every anchor explicitly, so counting
 * `<a` and `</a` tags finds where each ends, and a count that outlasts htmlparser2's (which also
 * closes an anchor with its parent) only makes the caller decline more.
 */
function anchorDepthAt(body: string, lt: number, depth: number): number {
  const closing = body.charCodeAt(lt + 1) === 47; // '/'
  const name = lt + (closing ? 2 : 1);
  if ((body.charCodeAt(name) | 32) !== 97 || !endsTagName(body.charCodeAt(name + 1))) return depth; // not `a`
  if (closing) return Math.max(0, depth - 1);
  if (depth > 0) return depth + 1;
  MARKER_OR_TAG_END.lastIndex = lt;
  return MARKER_OR_TAG_END.exec(body)?.[0] === '>' ? 0 : 1;
}

/**
 * Whether every occurrence at `at` (ascending) of a `find` without `<`, `>` and `&` lies in text
 * of the sanitised `body`: outside every tag and every entity, and outside every protected
 * anchor, so that the body's protected anchors stay as they are. In sanitiser output `<` and `>`
 * occur only as tag delimiters (text and attribute values escape them), so one forward pass over
 * the delimiters places each occurrence, and an occurrence that starts in text ends there.
 */
function allInText(body: string, at: readonly number[]): boolean {
  let inTag = false;
  let anchors = 0;
  // The next delimiter that would flip `inTag`; found once per flip, so the pass stays linear.
  let next = body.indexOf('<');
  for (const start of at) {
    while (next !== -1 && next < start) {
      if (!inTag) anchors = anchorDepthAt(body, next, anchors);
      inTag = !inTag;
      next = body.indexOf(inTag ? '>' : '<', next + 1);
    }
    if (inTag || anchors > 0) return false;
    const before = body.slice(Math.max(0, start - ENTITY_REACH), start);
    const entity = before.lastIndexOf('&');
    if (entity !== -1 && !before.includes(';', entity)) return false;
  }
  return true;
}

/** Whether every replacement is plain text (`TEXT_SAFE`), the kind `applyTextReplacements` may take. */
export function plainTextReplacements(replacements: readonly Replacement[]): boolean {
  return replacements.every(({ find, replace = '' }) => TEXT_SAFE.test(find) && TEXT_SAFE.test(replace));
}

/** A PATCH's text replacements applied (`applyTextReplacements`). */
export interface TextReplaced {
  ok: true;
  body: string;
  /**
   * Words the replacements added (negative: removed), counted in the stretches of text around
   * them: `wordCount(body)` is the current body's count plus this. Undefined where those stretches
   * were too long to be worth it (the caller then counts the whole body).
   */
  wordChange: number | undefined;
}

/**
 * `applyReplacements` where the sanitiser and the guard provably have nothing to do: on a body
 * that is its own sanitised form, replacements of plain text (`TEXT_SAFE`) that occur only in
 * text outside protected anchors give a body the sanitiser leaves as it is, with the same
 * protected anchors (a property test holds the two paths equal). Undefined when a replacement is
 * not of that kind: the caller then sanitises and guards. Failures are the same either way.
 * Replacements that cannot meet one another (`editsApart`) are made in one pass over the body.
 */
export function applyTextReplacements(
  body: string,
  replacements: readonly Replacement[],
): TextReplaced | { ok: false; failures: ReplacementFailure[] } | undefined {
  if (!plainTextReplacements(replacements)) return undefined;
  const apart = editsApart(body, replacements);
  if (apart && allInText(body, apart.map(({ start }) => start))) {
    const edits = listedEdits(apart);
    return { ok: true, body: spliced(body, edits), wordChange: wordChangeAround(body, edits, body.length)?.change };
  }
  let current = body;
  const failures: ReplacementFailure[] = [];
  // Counting the words around each replacement reads at most the body's length in all.
  let wordChange: number | undefined = 0;
  let countBudget = body.length;
  for (const [index, { find, replace = '', all = false }] of replacements.entries()) {
    const at = matchesOf(current, find);
    if (at.length === 0 || (at.length > 1 && !all)) {
      failures.push({ index, matches: at.length });
      continue;
    }
    if (current.length + at.length * (replace.length - find.length) > MAX_BODY_LENGTH) {
      throw validationFailed({ [`replacements.${index}.replace`]: [`The body would grow past ${MAX_BODY_LENGTH} characters.`] });
    }
    if (!allInText(current, at)) return undefined;
    const edits = sameEdits(at, find.length, replace);
    if (failures.length === 0 && wordChange !== undefined) {
      const counted = wordChangeAround(current, edits, countBudget);
      if (counted === undefined) {
        wordChange = undefined;
      } else {
        wordChange += counted.change;
        countBudget -= counted.read;
      }
    }
    current = spliced(current, edits);
  }
  return failures.length > 0 ? { ok: false, failures } : { ok: true, body: current, wordChange };
}

/** Where `find` matches in `text`: leftmost first, not overlapping, as `split` finds them. */
function matchesOf(text: string, find: string): number[] {
  const at: number[] = [];
  if (find === '') return at;
  for (let found = text.indexOf(find); found !== -1; found = text.indexOf(find, found + find.length)) at.push(found);
  return at;
}

/** `length` characters at `start` of a text, to be replaced with `replace`. */
interface Edit {
  start: number;
  length: number;
  replace: string;
}

/**
 * Edits of a text, ascending and apart, read by index: one item's matches share their length and
 * `replace`, and a million matches need no million objects.
 */
interface Edits {
  count: number;
  start(index: number): number;
  length(index: number): number;
  replace(index: number): string;
}

const sameEdits = (at: readonly number[], length: number, replace: string): Edits => ({
  count: at.length,
  start: (index) => at[index]!,
  length: () => length,
  replace: () => replace,
});

const listedEdits = (edits: readonly Edit[]): Edits => ({
  count: edits.length,
  start: (index) => edits[index]!.start,
  length: (index) => edits[index]!.length,
  replace: (index) => edits[index]!.replace,
});

/**
 * The edits of `replacements` in `body`, ascending, when applying them in order is the same as
 * applying them at once at the places each `find` matches in `body` itself: every item matches as
 * required and keeps the body within its limit; every two matches lie at least `reach` characters
 * apart (the longest `find`, and `ENTITY_REACH`, so each item's matches and the text around them
 * are as in `body` when its turn comes); and no item's `find` occurs around an earlier item's
 * `replace`, where it would match in the body of its turn. Undefined otherwise, or where checking
 * that would read more than the body's length; the items then run one after another, each
 * searching and copying the whole body, several times the cost of one pass.
 */
export function editsApart(body: string, replacements: readonly Replacement[]): Edit[] | undefined {
  const reach = Math.max(ENTITY_REACH, ...replacements.map(({ find }) => find.length));
  const edits: (Edit & { item: number })[] = [];
  let length = body.length;
  for (const [item, { find, replace = '', all = false }] of replacements.entries()) {
    const at = matchesOf(body, find);
    if (at.length === 0 || (at.length > 1 && !all)) return undefined;
    length += at.length * (replace.length - find.length);
    // Matches `reach` apart number at most the body's length over `reach`.
    if (length > MAX_BODY_LENGTH || (edits.length + at.length) * reach > body.length) return undefined;
    for (const start of at) edits.push({ start, length: find.length, replace, item });
  }
  let budget = body.length;
  for (const [item, { find }] of replacements.entries()) {
    // Edits are listed item by item: the earlier items' come first.
    for (const edit of edits) {
      if (edit.item >= item) break;
      const end = edit.start + edit.length;
      budget -= 2 * find.length + edit.replace.length;
      if (budget < 0) return undefined;
      const around = body.slice(Math.max(0, edit.start - find.length + 1), edit.start) + edit.replace + body.slice(end, end + find.length - 1);
      if (around.includes(find)) return undefined;
    }
  }
  edits.sort((a, b) => a.start - b.start);
  for (let i = 1; i < edits.length; i += 1) {
    if (edits[i]!.start - (edits[i - 1]!.start + edits[i - 1]!.length) < reach) return undefined;
  }
  return edits;
}

/** The lower-case name of the tag that starts at `lt` (`<name` or `</name`). */
function tagNameAt(body: string, lt: number): string {
  const start = lt + (body.charCodeAt(lt + 1) === 47 ? 2 : 1);
  let end = start;
  while (end < body.length && !endsTagName(body.charCodeAt(end))) end += 1;
  return body.slice(start, end).toLowerCase();
}

/**
 * The stretch of `body` around `[start, end)` (text) that a word may span: up to the nearest tag
 * of an element that breaks words on either side (`INLINE_ELEMENTS` do not), or the body's ends.
 * The word counter starts each such stretch outside a word, so its words are counted apart.
 */
function wordStretch(body: string, start: number, end: number): { from: number; to: number } {
  let from = start;
  for (;;) {
    const lt = from === 0 ? -1 : body.lastIndexOf('<', from - 1);
    if (lt === -1) {
      from = 0;
      break;
    }
    if (!INLINE_ELEMENTS.has(tagNameAt(body, lt))) {
      from = body.indexOf('>', lt) + 1;
      break;
    }
    from = lt;
  }
  let to = end;
  for (;;) {
    const lt = body.indexOf('<', to);
    if (lt === -1) return { from, to: body.length };
    if (!INLINE_ELEMENTS.has(tagNameAt(body, lt))) return { from, to: lt };
    to = body.indexOf('>', lt) + 1;
  }
}

/**
 * What `edits` (ascending, apart, each in text: see `allInText`) change in `wordCount(body)`: the
 * words of each stretch around them (`wordStretch`) before and after. Undefined once the
 * stretches would read more than `budget` characters.
 */
function wordChangeAround(body: string, edits: Edits, budget: number): { change: number; read: number } | undefined {
  let change = 0;
  let read = 0;
  for (let index = 0; index < edits.count; ) {
    const { from, to } = wordStretch(body, edits.start(index), edits.start(index) + edits.length(index));
    const first = index;
    while (index < edits.count && edits.start(index) < to) index += 1;
    read += to - from;
    if (read > budget) return undefined;
    change += wordCount(spliced(body, edits, { from, to, first, end: index })) - wordCount(body.slice(from, to));
  }
  return { change, read };
}

/**
 * `text` with each of `edits` made (for one item's matches, what `text.split(find).join(replace)`
 * gives, from the matches already found), or only its characters `from`..`to` with the edits
 * `first`..`end` (before `end`) among them. Split and joined, each replacement searched the whole
 * body once more and copied it whole, which was most of a many-item edit's time.
 */
function spliced(text: string, edits: Edits, range = { from: 0, to: text.length, first: 0, end: edits.count }): string {
  let result = '';
  let from = range.from;
  for (let index = range.first; index < range.end; index += 1) {
    const start = edits.start(index);
    result += text.slice(from, start) + edits.replace(index);
    from = start + edits.length(index);
  }
  return result + text.slice(from, range.to);
}
