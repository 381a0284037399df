/**
 * The protected links of a body (decisions.md, "Writes"): finding the marked anchors, their
 * comparison keys and the guard that every one of them survives an edit; and word counts, which
 * come from the same parse. Pure and synchronous.
 */
import { Parser } from 'htmlparser2';
import type { ProtectedLink } from './errors.js';
import { MAX_NESTING_DEPTH, tooDeep, withoutFormattingControls } from './html-containers.js';

export const MARKER = 'data-service-protected';
// Attribute names are case-insensitive in HTML; a cheap test lets marker-free bodies skip a parse.
const MARKER_PATTERN = /data-service-protected/i;

type LinkType = ProtectedLink['type'];

export const linkTypeOf = (value: string | undefined): LinkType | undefined =>
  value === 'backlink' || value === 'internal' ? value : undefined;

/** A protected anchor's link and its comparison key (see `protectedAnchorsOf`). */
export interface ProtectedAnchorKey {
  canonical: string;
  link: ProtectedLink;
}

interface ProtectedAnchor {
  link: ProtectedLink;
  /** The comparison key of the whole anchor: see `protectedAnchorsOf`. */
  canonical: string;
  /** Offsets of the anchor's opening tag in the scanned string, `end` exclusive. */
  openTag: { start: number; end: number };
}

const escapeText = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttribute = (value: string): string => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

function openTagKey(name: string, attribs: Readonly<Record<string, string>>): string {
  let key = `<${name}`;
  for (const attribute of Object.keys(attribs).sort()) key += ` ${attribute}="${escapeAttribute(attribs[attribute] ?? '')}"`;
  return `${key}>`;
}

/**
 * Finds the protected anchors in one parse. Markup inside a protected anchor is collected as a
 * canonical key (attributes sorted, values decoded and re-escaped, text re-escaped, comments
 * ignored), so spellings a browser reads the same way compare equal and nothing else does. The
 * key is for comparison only: void elements get an end tag too. A marked anchor inside another
 * (only in unsanitised input) is part of the outer one's key, not an anchor of its own, which
 * keeps the scan linear.
 */
function scanProtectedAnchors(html: string): ProtectedAnchor[] {
  return scanBody(html, false).anchors;
}

/**
 * One parse for the protected anchors and, when `countWords`, the words (see `wordCount`): a
 * write needs both of the new body, and each parse of a large body costs as much as the rest
 * of the request.
 */
export function scanBody(html: string, countWords: boolean): { anchors: ProtectedAnchor[]; words: number } {
  const anchors: ProtectedAnchor[] = [];
  const markers = MARKER_PATTERN.test(html);
  if (!markers && !countWords) return { anchors, words: 0 };
  const words = new WordCounter();
  let current: { anchor: ProtectedAnchor; depth: number; markup: string[]; text: string[] } | undefined;
  let depth = 0;
  const parser = new Parser({
    onopentag(name, attribs) {
      depth += 1;
      if (depth > MAX_NESTING_DEPTH) throw tooDeep();
      if (countWords) words.element(name, true);
      if (!markers) return;
      if (current !== undefined) {
        current.markup.push(openTagKey(name, attribs));
        return;
      }
      const type = name === 'a' ? linkTypeOf(attribs[MARKER]) : undefined;
      if (type === undefined) return;
      const anchor: ProtectedAnchor = {
        link: { type, href: attribs['href'] ?? '', text: '' },
        canonical: '',
        openTag: { start: parser.startIndex, end: parser.endIndex + 1 },
      };
      anchors.push(anchor);
      current = { anchor, depth, markup: [openTagKey(name, attribs)], text: [] };
    },
    ontext(data) {
      if (countWords) words.text(data);
      current?.markup.push(escapeText(data));
      current?.text.push(data);
    },
    onclosetag(name) {
      if (countWords) words.element(name, false);
      if (current !== undefined) {
        current.markup.push(`</${name}>`);
        if (current.depth === depth) {
          // Bodies stored before controls were removed compare equal to their clean copies.
          current.anchor.canonical = withoutFormattingControls(current.markup.join(''));
          current.anchor.link.text = withoutFormattingControls(current.text.join(''));
          current = undefined;
        }
      }
      depth -= 1;
    },
  });
  parser.end(html);
  return { anchors, words: words.count };
}

/** The protected links of a body, in document order. */
export function protectedLinksOf(html: string): ProtectedLink[] {
  return scanProtectedAnchors(html).map(({ link }) => link);
}

/**
 * One canonical string per protected anchor, in document order: tag, attributes sorted by name
 * with decoded values, and the inner markup. Equal strings mean a reader sees the same link.
 */
export function protectedAnchorsOf(html: string): string[] {
  return scanProtectedAnchors(html).map(({ canonical }) => canonical);
}

/** The protected anchors and the word count of a body, from one parse. */
export function describeBody(html: string): { anchors: ProtectedAnchorKey[]; words: number } {
  const { anchors, words } = scanBody(html, true);
  return { anchors: anchors.map(({ canonical, link }) => ({ canonical, link })), words };
}

/** The protected anchors of a body with their links, in document order. */
export function protectedAnchorKeysOf(html: string): ProtectedAnchorKey[] {
  return scanProtectedAnchors(html).map(({ canonical, link }) => ({ canonical, link }));
}

/**
 * The guard of decisions.md: every protected anchor of `before` must be in `after`, unchanged,
 * as many times as in `before` (it may move). Returns the links of `before` that are missing or
 * changed, once per missing occurrence. `after` must be the sanitised new body, so that anchors
 * only a lenient parse would find (inside dropped elements) do not count.
 */
export function violatedProtectedLinks(before: string, after: string): ProtectedLink[] {
  const protectedBefore = scanProtectedAnchors(before);
  if (protectedBefore.length === 0) return [];
  return violatedAmong(protectedBefore, protectedAnchorsOf(after));
}

/** `violatedProtectedLinks` on anchors already scanned: `after` holds the new body's keys. */
export function violatedAmong(protectedBefore: readonly ProtectedAnchorKey[], after: readonly string[]): ProtectedLink[] {
  const available = new Map<string, number>();
  for (const canonical of after) available.set(canonical, (available.get(canonical) ?? 0) + 1);
  const violated: ProtectedLink[] = [];
  for (const { canonical, link } of protectedBefore) {
    const left = available.get(canonical) ?? 0;
    if (left > 0) available.set(canonical, left - 1);
    else violated.push(link);
  }
  return violated;
}

/** Elements that do not break a word: `wo<b>rd</b>` is one word, `<p>a</p><p>b</p>` two. */
export const INLINE_ELEMENTS: ReadonlySet<string> = new Set([
  'a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'font', 'i', 'ins',
  'kbd', 'mark', 'q', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var',
]);

/**
 * Counts words as `text.match(/\S+/g).length` would over the text a reader sees, without
 * building that text: a word may run on across inline elements and text pieces.
 */
class WordCounter {
  count = 0;
  private inWord = false;
  // Script and style text is code, not prose (stored bodies have none; counting stays honest).
  private inCode = 0;

  element(name: string, opening: boolean): void {
    if (!INLINE_ELEMENTS.has(name)) this.inWord = false;
    if (name === 'script' || name === 'style') this.inCode += opening ? 1 : -1;
  }

  /** One pass over the characters, allocating nothing: `data.match(/\S+/g)` took twice as long. */
  text(data: string): void {
    if (this.inCode > 0) return;
    let inWord = this.inWord;
    for (let i = 0; i < data.length; i++) {
      const space = isWhiteSpace(data.charCodeAt(i));
      if (!space && !inWord) this.count += 1;
      inWord = !space;
    }
    this.inWord = inWord;
  }
}

/** Whether a UTF-16 code unit is white space as `\s` reads it (ECMAScript WhiteSpace and LineTerminator). */
function isWhiteSpace(code: number): boolean {
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
}

/** Words of the text a reader sees: tags removed, entities decoded, split on white space. */
export function wordCount(html: string): number {
  return scanBody(html, true).words;
}
