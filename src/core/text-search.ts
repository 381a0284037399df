/**
 * Literal search in an article's title and body (`searchArticles`, `replaceInSite`): where a text
 * occurs, counted in code points, with its surroundings. Case-insensitive matching folds each code
 * point on its own (`foldText`), so a folded text keeps every offset of the text it came from.
 */

/** The shortest query the trigram index can look up (three code points make one trigram). */
export const MIN_QUERY_CHARS = 3;
export const MAX_QUERY_CHARS = 500;
/** Code points of context on each side of a match. */
export const CONTEXT_CHARS = 60;
/** Matches listed per article. */
export const LISTED_MATCHES = 5;

export type SearchField = 'title' | 'body';

export interface FoundMatch {
  field: SearchField;
  /** In code points of the field. */
  offset: number;
  /** The field's text there, exactly as stored. */
  text: string;
  before: string;
  after: string;
}

export interface FieldMatches {
  count: number;
  /** The first `listed` matches. */
  first: FoundMatch[];
}

const changesWhenLowercased = /\p{Changes_When_Lowercased}/gu;
const folds = new Map<string, string>();

/**
 * One code point folded: its lower case where that is one code point of the same UTF-16 length,
 * and ASCII only for ASCII (the Kelvin sign stays itself, so an ASCII query matches ASCII only),
 * else the code point itself. The same rule on every side keeps each fold a code point.
 */
export function foldChar(char: string): string {
  let folded = folds.get(char);
  if (folded === undefined) {
    const lower = char.toLowerCase();
    folded = lower.length === char.length && [...lower].length === 1 && (char < '\u0080') === (lower < '\u0080') ? lower : char;
    folds.set(char, folded);
  }
  return folded;
}

/** `text` with each code point folded (`foldChar`): the same length and offsets as `text`. */
export const foldText = (text: string): string => text.replace(changesWhenLowercased, foldChar);

/** The code points that fold alike, by their fold (only folds with more than one); see `prepareCaseVariants`. */
let variantsByFold: Map<string, string[]> | undefined;

/**
 * Builds the table of code points that fold alike, once per process: the walk over the first two
 * planes (where every code point with a case lies) would otherwise hold the event loop of the
 * first search that needs it, so a process that searches calls this as it starts.
 */
export function prepareCaseVariants(): Map<string, string[]> {
  if (variantsByFold) return variantsByFold;
  const byFold = new Map<string, string[]>();
  const changes = /\p{Changes_When_Lowercased}/u;
  for (let cp = 0; cp <= 0x1ffff; cp++) {
    if (cp === 0xd800) cp = 0xe000;
    const source = String.fromCodePoint(cp);
    if (!changes.test(source)) continue;
    const folded = foldChar(source);
    if (folded === source) continue;
    const known = byFold.get(folded);
    if (known) known.push(source);
    else byFold.set(folded, [folded, source]);
  }
  variantsByFold = byFold;
  return byFold;
}

/**
 * Every code point that folds as `char` does, `char` included: what a case-insensitive query
 * must look up in a case-sensitive index for it.
 */
export function caseVariants(char: string): string[] {
  const folded = foldChar(char);
  return prepareCaseVariants().get(folded) ?? [folded];
}

/** Whether `text` holds no lone surrogate: such a query could match half a character. */
export const isWellFormed = (text: string): boolean => /^(?:[^\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/.test(text);

/** Code points of `text` from UTF-16 index `from` to `to`. */
function codePointsBetween(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xdc00 && unit <= 0xdfff && i > from && isHigh(text.charCodeAt(i - 1))) continue;
    count++;
  }
  return count;
}

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** The UTF-16 index `count` code points before `index` (or 0). */
function backBy(text: string, index: number, count: number): number {
  let i = index;
  for (let n = 0; n < count && i > 0; n++) {
    i--;
    if (i > 0 && isLow(text.charCodeAt(i)) && isHigh(text.charCodeAt(i - 1))) i--;
  }
  return i;
}

/** The UTF-16 index `count` code points after `index` (or the end). */
function forwardBy(text: string, index: number, count: number): number {
  let i = index;
  for (let n = 0; n < count && i < text.length; n++) {
    i += isHigh(text.charCodeAt(i)) && i + 1 < text.length && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
  }
  return i;
}

/**
 * UTF-16 indexes of the non-overlapping occurrences of `query` in `text`, leftmost first,
 * exactly or (`matchCase` false) folded. `query` must be well-formed (`isWellFormed`): it then
 * matches on code point boundaries only.
 */
export function occurrences(text: string, query: string, matchCase: boolean): number[] {
  if (query === '') return [];
  const haystack = matchCase ? text : foldText(text);
  const needle = matchCase ? query : foldText(query);
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

/** How often `query` occurs in `text`, and the first `listed` occurrences with their context. */
export function fieldMatches(field: SearchField, text: string, query: string, matchCase: boolean, listed = LISTED_MATCHES): FieldMatches {
  const found = occurrences(text, query, matchCase);
  const first: FoundMatch[] = [];
  let offset = 0;
  let last = 0;
  for (const at of found.slice(0, listed)) {
    offset += codePointsBetween(text, last, at);
    last = at;
    const end = at + query.length;
    first.push({
      field,
      offset,
      text: text.slice(at, end),
      before: text.slice(backBy(text, at, CONTEXT_CHARS), at),
      after: text.slice(end, forwardBy(text, end, CONTEXT_CHARS)),
    });
  }
  return { count: found.length, first };
}

/** `text` with every occurrence of `query` (`occurrences`) replaced by `replace`, and how many there were. */
export function replaceOccurrences(text: string, query: string, replace: string, matchCase: boolean): { text: string; count: number } {
  const found = occurrences(text, query, matchCase);
  if (found.length === 0) return { text, count: 0 };
  const pieces: string[] = [];
  let last = 0;
  for (const at of found) {
    pieces.push(text.slice(last, at), replace);
    last = at + query.length;
  }
  pieces.push(text.slice(last));
  return { text: pieces.join(''), count: found.length };
}

export interface ArticleText {
  title: string | null;
  body: string;
}

export interface ArticleMatches {
  count: number;
  /** At most `LISTED_MATCHES`: the title's first, then the body's. */
  matches: FoundMatch[];
}

/** An article's matches: title and body counted together, the title's listed first. */
export function articleMatches({ title, body }: ArticleText, query: string, matchCase: boolean): ArticleMatches {
  const inTitle = fieldMatches('title', title ?? '', query, matchCase);
  const inBody = fieldMatches('body', body, query, matchCase, LISTED_MATCHES - inTitle.first.length);
  return { count: inTitle.count + inBody.count, matches: [...inTitle.first, ...inBody.first] };
}

/** Only the counts of several articles (the first pass of a search, which orders by them). */
export const matchCounts = (articles: readonly ArticleText[], query: string, matchCase: boolean): number[] =>
  articles.map(({ title, body }) => occurrences(title ?? '', query, matchCase).length + occurrences(body, query, matchCase).length);

/**
 * Trigrams a lookup of `query` needs, spread over it: each as the strings that fold to it (its
 * case variants), or as itself when the case must match. A text holding `query` (folded, unless
 * `matchCase`) holds one variant of each.
 */
export function trigramVariants(query: string, matchCase = false, most = 6): string[][] {
  const chars = [...query];
  const starts: number[] = [];
  for (let at = 0; at + 3 <= chars.length && starts.length < most - 1; at += 3) starts.push(at);
  const lastStart = chars.length - 3;
  if (lastStart >= 0 && !starts.includes(lastStart)) starts.push(lastStart);
  return starts.map((start) => {
    let variants = [''];
    for (const char of chars.slice(start, start + 3)) {
      const next = matchCase ? [char] : caseVariants(char);
      variants = variants.flatMap((prefix) => next.map((variant) => prefix + variant));
    }
    return variants;
  });
}
