import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sanitizeBody, sanitizeTrusted } from '../../src/core/html.js';
import { protectedAnchorsOf, violatedProtectedLinks } from '../../src/core/protected-anchors.js';

// The sanitiser's rules on bidi controls and containers, as properties.

const CONTROLS = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u206A', '\u206F'];
const control = fc.constantFrom(...CONTROLS, ...CONTROLS.map((c) => `&#x${c.codePointAt(0)!.toString(16)};`), ...CONTROLS.map((c) => `&#${c.codePointAt(0)};`));
const word = fc.string({ unit: fc.constantFrom('a', 'b', 'é', 'ש', 'ع', ' ', '&amp;', '\u200f', '\u200d'), minLength: 1, maxLength: 8 });
const anchor = fc
  .tuple(fc.constantFrom('backlink', 'internal'), fc.constantFrom('https://p.example/a', '/in/x'), word)
  .map(([type, href, text]) => `<a href="${href}" data-service-protected="${type}">${text}</a>`);
// No character references, so an insertion cannot split one.
const plainWord = fc.string({ unit: fc.constantFrom('a', 'é', 'ש', ' ', '\u200f'), minLength: 1, maxLength: 8 });
const plainAnchor = fc
  .tuple(fc.constantFrom('backlink', 'internal'), fc.constantFrom('https://p.example/a', '/in/x'), plainWord)
  .map(([type, href, text]) => `<a href="${href}" data-service-protected="${type}">${text}</a>`);
const piece = fc.oneof(word, anchor, control, fc.constantFrom('<p>', '</p>', '<strong>', '</strong>', '<li>'));
const body = fc.array(piece, { maxLength: 20 }).map((pieces) => pieces.join(''));
const CONTROL_PATTERN = /[\u202A-\u202E\u2066-\u206F]/;

const CONTAINERS = ['svg', 'math', 'template', 'noscript', 'select', 'textarea', 'title', 'xmp', 'iframe', 'style', 'script', 'object'];

describe('bidi and formatting controls', () => {
  it('never survive sanitising, and are reported whenever something was removed for them', () => {
    fc.assert(
      fc.property(body, (input) => {
        const stored = sanitizeTrusted(input);
        const once = sanitizeBody(input, { protectedBefore: protectedAnchorsOf(stored) });
        expect(CONTROL_PATTERN.test(once.html)).toBe(false);
        expect(CONTROL_PATTERN.test(stored)).toBe(false);
        expect(sanitizeBody(once.html, { protectedBefore: protectedAnchorsOf(stored) })).toEqual({ html: once.html, removed: [] });
      }),
      { numRuns: 500 },
    );
  });

  it('placed anywhere around or inside protected links, never break the guard', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(plainWord, plainAnchor), { maxLength: 8 }), fc.array(fc.tuple(fc.nat(), control), { maxLength: 6 }), (pieces, insertions) => {
        const stored = sanitizeTrusted(pieces.join(''));
        // Between characters of text or between tags, never inside a tag or an inserted reference.
        const spots = [...stored.matchAll(/>|[^<>](?=[^>]*(<|$))/g)].map((m) => m.index! + 1);
        let edited = stored;
        if (spots.length > 0) {
          const chosen = insertions.map(([at, c]) => [spots[at % spots.length]!, c] as const).sort((x, y) => y[0] - x[0]);
          for (const [spot, c] of chosen) edited = edited.slice(0, spot) + c + edited.slice(spot);
        }
        const clean = sanitizeBody(edited, { protectedBefore: protectedAnchorsOf(stored) });
        expect(violatedProtectedLinks(stored, clean.html)).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });
});

describe('containers', () => {
  it('a never-closed container keeps every word after it', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CONTAINERS), body, fc.array(fc.stringMatching(/^[a-z]{1,8}$/), { minLength: 1, maxLength: 6 }), (tag, before, words) => {
        const tail = `<p>${words.join(' ')}</p>`;
        const result = sanitizeBody(`${before}<${tag}>${tail}`, { protectedBefore: [] });
        expect(result.html.replace(/<[^>]*>/g, '').endsWith(words.join(' '))).toBe(true);
        expect(result.removed.some((note) => note.startsWith(`<${tag}> at character `))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('a closed container’s text is counted in code points', () => {
    fc.assert(
      fc.property(fc.constantFrom('svg', 'template', 'noscript', 'script', 'style', 'textarea'), fc.stringMatching(/^[a-z😀]{1,40}$/u), (tag, text) => {
        const result = sanitizeBody(`<p>x</p><${tag}>${text}</${tag}>`, { protectedBefore: [] });
        expect(result.html).toBe('<p>x</p>');
        expect(result.removed).toContain(`removed ${[...text].length} character${[...text].length === 1 ? '' : 's'} of text inside <${tag}>`);
      }),
      { numRuns: 300 },
    );
  });
});
