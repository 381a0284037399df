import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { articleMatches, CONTEXT_CHARS, caseVariants, foldChar, foldText, isWellFormed, LISTED_MATCHES, occurrences, trigramVariants } from '../../src/core/text-search.js';

/** Characters where folding is interesting: ASCII, accents, sigma, the Kelvin sign, İ, ǅ, an emoji, markup. */
const alphabet = fc.constantFrom('a', 'A', 'b', 'B', 'é', 'É', 'σ', 'Σ', 'ς', 'K', 'k', '\u212a', 'İ', 'i', 'ǅ', 'ǆ', 'Ǆ', '😀', '<', '>', '"', ' ', 'ß', 'ẞ');
const text = (max: number) => fc.array(alphabet, { maxLength: max }).map((chars) => chars.join(''));

/** The specification, slowly: code point by code point, leftmost and non-overlapping. */
function bruteForce(haystack: string, needle: string, matchCase: boolean): { offset: number; text: string; before: string; after: string }[] {
  const h = [...haystack];
  const n = [...needle];
  const same = (a: string, b: string) => (matchCase ? a === b : foldChar(a) === foldChar(b));
  const found = [];
  for (let i = 0; i + n.length <= h.length && n.length > 0; ) {
    if (n.every((char, j) => same(h[i + j]!, char))) {
      found.push({
        offset: i,
        text: h.slice(i, i + n.length).join(''),
        before: h.slice(Math.max(0, i - CONTEXT_CHARS), i).join(''),
        after: h.slice(i + n.length, i + n.length + CONTEXT_CHARS).join(''),
      });
      i += n.length;
    } else i++;
  }
  return found;
}

describe('text search', () => {
  it('finds exactly what a code point scan finds, with offsets, text and context', () => {
    fc.assert(
      fc.property(text(200), text(4).filter((q) => q !== ''), fc.boolean(), (haystack, needle, matchCase) => {
        const expected = bruteForce(haystack, needle, matchCase);
        expect(occurrences(haystack, needle, matchCase)).toHaveLength(expected.length);
        const { count, matches } = articleMatches({ title: null, body: haystack }, needle, matchCase);
        expect(count).toBe(expected.length);
        expect(matches).toEqual(expected.slice(0, LISTED_MATCHES).map((match) => ({ field: 'body', ...match })));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps every offset when it folds', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (value) => {
        expect(foldText(value).length).toBe(value.length);
      }),
    );
  });

  it('looks up trigrams whose variants include the folded text of every match', () => {
    fc.assert(
      fc.property(text(8).filter((q) => [...q].length >= 3), (query) => {
        const chars = [...query];
        for (const variants of trigramVariants(query)) expect(variants.length).toBeGreaterThan(0);
        // Each character's variants fold as it does, and include it.
        for (const char of chars) {
          expect(caseVariants(char)).toContain(char);
          for (const variant of caseVariants(char)) expect(foldChar(variant)).toBe(foldChar(char));
        }
      }),
    );
  });

  it('refuses lone surrogates only', () => {
    expect(isWellFormed('a😀b')).toBe(true);
    expect(isWellFormed('a\ud83d')).toBe(false);
    expect(isWellFormed('\ude00b')).toBe(false);
  });
});
