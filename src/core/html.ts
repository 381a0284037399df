/**
 * Article HTML: the one sanitiser allowlist of decisions.md ("Writes"). The protected-link
 * markers, their guard and word counts are in `protected-anchors.ts`, the PATCH replacement
 * engine in `body-replacements.ts`. Pure and synchronous.
 *
 * Every stored body is an output of the sanitiser, and the sanitiser is idempotent, so a body can
 * be sanitised again, compared or scanned without drifting.
 */
import { Parser } from 'htmlparser2';
import sanitizeHtml from 'sanitize-html';
import { withThousands } from './values.js';
import { closeUnclosedContainers, type ContainerReport, hasFormattingControls, MAX_NESTING_DEPTH, tooDeep, withoutFormattingControls } from './html-containers.js';
import { linkTypeOf, MARKER, type ProtectedAnchorKey, scanBody } from './protected-anchors.js';


const ALLOWED_TAGS: ReadonlySet<string> = new Set([
  'p', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'a', 'strong', 'em', 'b', 'i', 'u', 's',
  'sub', 'sup', 'blockquote', 'code', 'pre', 'br', 'hr', 'img', 'figure', 'figcaption', 'table',
  'thead', 'tbody', 'tr', 'th', 'td', 'span',
]);

const ALLOWED_ATTRIBUTES: ReadonlyMap<string, readonly string[]> = new Map([
  ['a', ['href', 'title', 'rel', 'target', MARKER]],
  ['img', ['src', 'alt', 'title', 'width', 'height', 'loading']],
  ['th', ['colspan', 'rowspan']],
  ['td', ['colspan', 'rowspan']],
]);

const URL_ATTRIBUTES = ['href', 'src'];

/**
 * Disallowed elements whose content goes with them: raw text (script, style …), content a
 * browser never renders as markup (iframe, noscript, template …) and foreign SVG/MathML, where
 * htmlparser2 and browsers disagree most (mXSS).
 */
const DROPPED_WITH_CONTENT = [
  'script', 'style', 'textarea', 'option', 'xmp', 'select', 'datalist', 'iframe', 'noscript',
  'noembed', 'noframes', 'object', 'applet', 'template', 'title', 'svg', 'math',
];
const DROPPED_WITH_CONTENT_SET: ReadonlySet<string> = new Set(DROPPED_WITH_CONTENT);
// A body without such a start tag skips the parse that looks for unclosed ones.
const MAY_HOLD_DROPPED = new RegExp(`<(?:${DROPPED_WITH_CONTENT.join('|')})[\\s/>]`, 'i');


/**
 * The version of the sanitiser's rules, stored with every body it printed (`articles.body_sanitizer`).
 * Bump it whenever a change to the allowlist or to `clean` may print a stored body differently:
 * bodies of an older version then take the full sanitising path on their next edit.
 */
export const SANITIZER_VERSION = 1;

/** The longest body a replacement may produce (a JSON request body is at most 5 MiB anyway). */
export const MAX_BODY_LENGTH = 5_000_000;

const SANITIZE_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...ALLOWED_TAGS],
  allowedAttributes: Object.fromEntries([...ALLOWED_ATTRIBUTES].map(([tag, names]) => [tag, [...names]])),
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: URL_ATTRIBUTES,
  // `//host/path` is a relative reference and stays on http(s).
  allowProtocolRelative: true,
  disallowedTagsMode: 'discard',
  nonTextTags: DROPPED_WITH_CONTENT,
};

/** One element as the sanitiser met it: its attributes before and after filtering. */
interface ElementSeen {
  tag: string;
  attributes: Readonly<Record<string, string>>;
  /** The object sanitize-html deletes rejected attributes from. */
  kept: Readonly<Record<string, string>>;
}

/** Adds to `removed` what the sanitiser dropped of `element` (the element, or some attributes). */
function noteRemovals({ tag, attributes, kept }: ElementSeen, removed: Set<string>): void {
  if (!ALLOWED_TAGS.has(tag)) {
    removed.add(`<${tag}> element`);
    return;
  }
  // sanitize-html leaves the attribute object of a tag without allowed attributes untouched.
  const allowed = ALLOWED_ATTRIBUTES.get(tag) ?? [];
  for (const [name, value] of Object.entries(attributes)) {
    if (!allowed.includes(name) || !Object.hasOwn(kept, name)) removed.add(describeAttributeRemoval(tag, name, value));
  }
}

interface CleanPass {
  html: string;
  /** What the sanitiser dropped of the elements it met, once per kind, in document order. */
  removedOfElements: Set<string>;
  droppedElement: boolean;
  nestedLinks: boolean;
  /** Bidi or formatting controls were removed (see `withoutFormattingControls`). */
  formattingControls: boolean;
  containers?: ContainerReport;
}

/**
 * Bodies this long (characters) or longer are sanitised in parts of at least `SANITIZE_PART_CHARS`,
 * cut where the parser has no element open (`topLevelParts`). sanitize-html appends its output a
 * piece at a time and the chain of appended pieces stays in the heap until the output is read:
 * in parts, a pool thread editing a body of megabytes peaks lower.
 */
export const SANITIZE_IN_PARTS_FROM = 512 * 1024;

/**
 * The least characters of a part. The pieces of a part's output outlive the young generation's
 * collections while the part is sanitised, and a part's output of more than 128 KB goes to V8's
 * large-object space: what a thread's heap keeps until its next full collection grows with the
 * part. Smaller parts peaked lower in a pool thread's heap, and took no longer.
 */
export const SANITIZE_PART_CHARS = 64 * 1024;

/**
 * The parser's state that a part must start from. htmlparser2 keeps it private: should a version
 * rename it, nothing is cut (a test sees that a large body is cut in parts).
 */
interface ParserState {
  stack?: string[];
  foreignContext?: boolean[];
}

/**
 * `html` in consecutive parts, each cut right after the `>` of an explicit closing tag that left
 * the parser (htmlparser2 as sanitize-html runs it) with no element open and outside SVG and
 * MathML: a new parser goes on from such a cut exactly as the parser of the whole does. Each part
 * is at least `partChars` long, but the last.
 */
export function topLevelParts(html: string, partChars: number): string[] {
  const parts: string[] = [];
  let start = 0;
  const parser: Parser = new Parser(
    {
      onclosetag: (_name, isImplied) => {
        const end = parser.endIndex + 1;
        if (isImplied || end - start < partChars || html.charCodeAt(end - 1) !== 0x3e) return;
        const { stack, foreignContext } = parser as unknown as ParserState;
        if (stack?.length !== 0 || foreignContext?.length !== 1 || foreignContext[0] !== false) return;
        parts.push(html.slice(start, end));
        start = end;
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  if (start < html.length || parts.length === 0) parts.push(html.slice(start));
  return parts;
}

/**
 * `text` as one flat string: reading a character makes V8 copy a string built by appending into
 * one string, and drop the pieces.
 */
const flattened = (text: string): string => {
  text.charCodeAt(0);
  return text;
};

/**
 * One sanitize-html pass with our allowlist, recording what it saw for the `removed` report; a
 * large body in parts (`SANITIZE_IN_PARTS_FROM`), or in parts of `partChars` when given.
 * Throws `validation_failed` when the input nests deeper than `MAX_NESTING_DEPTH`.
 */
function cleanPass(html: string, partChars?: number): CleanPass {
  const removedOfElements = new Set<string>();
  let droppedElement = false;
  // sanitize-html filters an element's attributes right after `transformTags`, before the next
  // parser event: the element is noted then, so a large body's elements are not all held at once.
  let seen: ElementSeen | undefined;
  const noteSeen = () => {
    if (seen !== undefined) noteRemovals(seen, removedOfElements);
    seen = undefined;
  };
  let depth = 0;
  // One entry per open <a>: whether another <a> opened inside it.
  const openLinks: boolean[] = [];
  let closingLinkWrapsLink = false;
  let nestedLinks = false;
  // A link opened inside another: the filter below may miss the outer one when the parser only
  // closes it at the end of the input, so such a body always gets the second pass.
  let linkOpenedInLink = false;
  let formattingControls = false;
  const options: sanitizeHtml.IOptions = {
    ...SANITIZE_OPTIONS,
    transformTags: {
      '*': (tagName, attribs) => {
        seen = { tag: tagName, attributes: { ...attribs }, kept: attribs };
        if (!ALLOWED_TAGS.has(tagName)) droppedElement = true;
        // Before the URL scheme check reads them: `java\u202Escript:` must not pass as relative.
        for (const [name, value] of Object.entries(attribs)) {
          if (!hasFormattingControls(value)) continue;
          attribs[name] = withoutFormattingControls(value);
          formattingControls = true;
        }
        if (tagName === 'a' && Object.hasOwn(attribs, MARKER) && linkTypeOf(attribs[MARKER]) === undefined) {
          // Only the two link types are markers (sanitize-html would print an empty one bare).
          delete attribs[MARKER];
        }
        return { tagName, attribs };
      },
    },
    // Both hooks see every parser event, dropped content included: the parser's own depth.
    onOpenTag: (name) => {
      noteSeen();
      depth += 1;
      if (depth > MAX_NESTING_DEPTH) throw tooDeep();
      if (name === 'a') {
        if (openLinks.length > 0) linkOpenedInLink = true;
        openLinks.fill(true);
        openLinks.push(false);
      }
    },
    onCloseTag: (name) => {
      depth -= 1;
      if (name === 'a') closingLinkWrapsLink = openLinks.pop() ?? false;
    },
    // htmlparser2 nests <a> in <a>, where a browser ends the outer link as the inner one starts.
    // Keep the innermost link whole and drop the tags of the links around it: stored anchors
    // never nest, and a link slipped into a protected anchor breaks that anchor for the guard.
    // Runs right after onCloseTag for the same element.
    exclusiveFilter: (frame) => {
      if (frame.tag !== 'a' || !closingLinkWrapsLink) return false;
      nestedLinks = true;
      return 'excludeTag';
    },
  };
  const size = partChars ?? (html.length >= SANITIZE_IN_PARTS_FROM ? SANITIZE_PART_CHARS : undefined);
  const clean = size === undefined ? sanitizeHtml(html, options) : topLevelParts(html, size).map((part) => flattened(sanitizeHtml(part, options))).join('');
  noteSeen();
  return { html: clean, removedOfElements, droppedElement: droppedElement || nestedLinks || linkOpenedInLink, nestedLinks, formattingControls };
}

/**
 * Sanitises to a fixed point. Dropping an element lifts its children into its parent, where
 * htmlparser2's implied end tags can restructure them on the next parse (`<li><div><li>` becomes
 * `<li><li>`, which parses as two siblings); one more pass over the then fully allowed markup
 * reaches the fixed point. A pass that dropped no element already printed the parse tree as is.
 */
function clean(html: string, partChars?: number): CleanPass {
  // A browser ignores U+0000 in text (and PostgreSQL cannot store it): drop it before parsing.
  let input = html.replace(/\0/g, '');
  // A never-closed container is closed where it starts, so it cannot swallow the text after it.
  const containers = MAY_HOLD_DROPPED.test(input)
    ? closeUnclosedContainers(input, DROPPED_WITH_CONTENT_SET, MAX_NESTING_DEPTH, tooDeep)
    : undefined;
  if (containers !== undefined) input = containers.html;
  const first = cleanPass(input, partChars);
  const printed = first.droppedElement ? cleanPass(first.html, partChars).html : first.html;
  // Text nodes print decoded, so controls written as entities are caught here too.
  const cleaned = withoutFormattingControls(printed);
  return { ...first, html: cleaned, containers, formattingControls: first.formattingControls || cleaned.length !== printed.length };
}

/** The scheme as sanitize-html's check reads it (controls, spaces and `<!--…-->` ignored). */
function schemeOf(url: string): string | undefined {
  const cleaned = url.replace(/[\x00-\x20]+/g, '').replace(/<!--[\s\S]*?-->/g, '');
  return /^([a-z][a-z0-9+.-]*):/i.exec(cleaned)?.[1]?.toLowerCase();
}

function describeAttributeRemoval(tag: string, name: string, value: string): string {
  if (!(ALLOWED_ATTRIBUTES.get(tag) ?? []).includes(name)) return `${name} attribute on <${tag}>`;
  if (name === MARKER) return `invalid ${MARKER} value on <a>`;
  const scheme = URL_ATTRIBUTES.includes(name) ? schemeOf(value) : undefined;
  return scheme === undefined ? `empty ${name} attribute on <${tag}>` : `${scheme}: URL in ${tag}[${name}]`;
}

function describeRemovals(pass: CleanPass, input: string): Set<string> {
  const removed = new Set(pass.removedOfElements);
  if (pass.nestedLinks) removed.add('<a> element around another link');
  if (pass.formattingControls) removed.add('bidi and formatting control characters (U+202A–U+202E, U+2066–U+206F)');
  const neverClosed = new Map<string, { at: number; times: number }>();
  for (const { tag, at } of pass.containers?.closed ?? []) {
    const seen = neverClosed.get(tag);
    if (seen === undefined) neverClosed.set(tag, { at, times: 1 });
    else seen.times += 1;
  }
  for (const [tag, { at, times }] of neverClosed) {
    const more = times > 1 ? ` (and ${times - 1} more)` : '';
    removed.add(`<${tag}> at character ${at}${more} is never closed: closed at its start tag, the text after it kept`);
  }
  for (const [tag, characters] of pass.containers?.removedText ?? []) {
    removed.add(`removed ${withThousands(characters)} character${characters === 1 ? '' : 's'} of text inside <${tag}>`);
  }
  // sanitize-html drops comments and declarations without a hook; only bodies that may hold one
  // pay for a second (tokeniser-only) look.
  if (input.includes('<!') || input.includes('<?')) {
    new Parser({
      oncomment: () => removed.add('HTML comment'),
      onprocessinginstruction: (name) => removed.add(`<${name}> declaration`),
    }).end(input);
  }
  return removed;
}

/**
 * Sanitises a client's body. `protectedBefore` holds `protectedAnchorsOf(current stored body)`:
 * a marker survives only on an anchor identical to one protected before, at most as many times
 * as before, so a client can neither create a protected link nor multiply one. `removed` says
 * what went, once per kind. Throws `validation_failed` past `MAX_NESTING_DEPTH`.
 */
export function sanitizeBody(html: string, options: { protectedBefore: readonly string[] }): { html: string; removed: string[] } {
  const { html: clean, removed } = sanitizeAndScan(html, options);
  return { html: clean, removed };
}

/**
 * `sanitizeBody`, with the protected anchors and words of the result from the same scan;
 * `partChars` sanitises in parts of at least that size whatever the body's length (see `cleanPass`).
 */
export function sanitizeAndScan(html: string, options: { protectedBefore: readonly string[]; partChars?: number }): SanitizedBody {
  const pass = clean(html, options.partChars);
  return withMarkersChecked(pass.html, describeRemovals(pass, html), options.protectedBefore);
}

/**
 * Keeps a marker only on an anchor identical to one protected before (at most as many times),
 * and scans the result once for its protected anchors and words. `html` is the sanitiser's output.
 */
function withMarkersChecked(html: string, removed: Set<string>, protectedBefore: readonly string[]): SanitizedBody {
  const allowance = new Map<string, number>();
  for (const canonical of protectedBefore) allowance.set(canonical, (allowance.get(canonical) ?? 0) + 1);

  let out = '';
  let copied = 0;
  // Dropping a marker changes no text, so this scan counts the result's words too.
  const scanned = scanBody(html, true);
  const kept: ProtectedAnchorKey[] = [];
  for (const anchor of scanned.anchors) {
    const left = allowance.get(anchor.canonical) ?? 0;
    if (left > 0) {
      allowance.set(anchor.canonical, left - 1);
      kept.push({ canonical: anchor.canonical, link: anchor.link });
      continue;
    }
    // The sanitiser prints the marker exactly like this, and `"` inside values is escaped, so
    // this can only match the attribute itself.
    const openTag = html.slice(anchor.openTag.start, anchor.openTag.end);
    out += html.slice(copied, anchor.openTag.start) + openTag.replace(` ${MARKER}="${anchor.link.type}"`, '');
    copied = anchor.openTag.end;
    removed.add(`${MARKER} attribute on a new link`);
  }
  return { html: out + html.slice(copied), removed: [...removed], anchors: kept, words: scanned.words };
}

/** A sanitised body with what one scan of it found. */
export interface SanitizedBody {
  html: string;
  removed: string[];
  /** The protected anchors of `html`, in document order (`protectedAnchorKeysOf(html)`). */
  anchors: ProtectedAnchorKey[];
  /** `wordCount(html)`. */
  words: number;
}

/**
 * Sanitises a body from a trusted source (import, demo data): same allowlist, every valid marker
 * kept (`partChars` as for `sanitizeAndScan`). Throws `validation_failed` past `MAX_NESTING_DEPTH`.
 */
export function sanitizeTrusted(html: string, options: { partChars?: number } = {}): string {
  return clean(html, options.partChars).html;
}

