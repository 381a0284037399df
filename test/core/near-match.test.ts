import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { bodyWindow, boundedOutline, type OutlineEntry, outlineOf, windowOf } from '../../src/core/body-window.js';
import { applyReplacements } from '../../src/core/body-replacements.js';
import { codePointOffset, explainFailures, MAX_NEAR_MATCH_LENGTH, nearMatch, occurrencesOf, utf16Offset } from '../../src/core/near-match.js';

vi.setConfig({ testTimeout: 120_000 });

/** The body's text at a code-point offset, as a client slicing code points sees it. */
const atPoints = (body: string, offset: number, length: number) => Array.from(body).slice(offset, offset + length).join('');

const BODY =
  '<h2>Care &amp; cleaning</h2><p>The Quick   brown fox jumps over the lazy dog.</p>' +
  '<p>Teeth whitening costs between $300 and $600 in most clinics.</p><p>Emoji 😀 before “quotes”.</p>';

describe('nearMatch', () => {
  it('finds the find ignoring case, white-space runs and entity spelling, with the body’s exact text there', () => {
    expect(nearMatch(BODY, 'the quick brown FOX')).toEqual({ offset: 31, length: 21, text: 'The Quick   brown fox', equivalent: true });
    expect(nearMatch(BODY, 'Care & cleaning')).toMatchObject({ text: 'Care &amp; cleaning', equivalent: true });
    expect(nearMatch(BODY, 'care &#38;\ncleaning')).toMatchObject({ text: 'Care &amp; cleaning', equivalent: true });
    expect(nearMatch(BODY, 'before &ldquo;quotes&rdquo;')).toMatchObject({ text: 'before “quotes”', equivalent: true });
  });

  it('finds the most similar passage for a mistyped find, with code-point offsets', () => {
    const near = nearMatch(BODY, 'Teeth whitning costs betwen $300 and $600')!;
    expect(near).toMatchObject({ text: 'Teeth whitening costs between $300 and $600', equivalent: false });
    expect(atPoints(BODY, near.offset, near.length)).toBe(near.text);
    const past = nearMatch(BODY, 'Emojy 😀 befor “quotes”.')!;
    expect(atPoints(BODY, past.offset, past.length)).toBe(past.text);
    expect(past.text).toBe('Emoji 😀 before “quotes”.');
  });

  it('says nothing when nothing is close, or the find is too short to tell', () => {
    expect(nearMatch(BODY, 'zebra crossing at midnight')).toBeUndefined();
    expect(nearMatch(BODY, 'absent')).toBeUndefined();
    expect(nearMatch(BODY, '   ')).toMatchObject({ equivalent: true, text: ' ' });
  });

  it('cuts a long passage at MAX_NEAR_MATCH_LENGTH characters', () => {
    const long = `<p>${'word '.repeat(2_000)}</p>`;
    const near = nearMatch(long, 'WORD '.repeat(1_000))!;
    expect(near.length).toBe(MAX_NEAR_MATCH_LENGTH);
    expect(near.text).toBe(long.slice(3, 3 + MAX_NEAR_MATCH_LENGTH));
  });

  it('property: a find taken from the body is found there, whatever its case and spacing', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'abcDEF xyz\n\té<>😀'), minLength: 20, maxLength: 300 }), fc.nat(), fc.integer({ min: 6, max: 40 }), (text, at, size) => {
        const body = `<p>${text}</p>`;
        const points = Array.from(body);
        const start = at % (points.length - 1);
        const find = points.slice(start, start + size).join('');
        const near = nearMatch(body, find.toUpperCase().replace(/ /g, '  '));
        return near !== undefined && near.equivalent && atPoints(body, near.offset, near.length) === near.text;
      }),
      { numRuns: 300 },
    );
  });

  it('property: one changed character still leads to the passage it came from', () => {
    const words = fc.array(fc.constantFrom('alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'), { minLength: 30, maxLength: 80 });
    fc.assert(
      fc.property(words, fc.nat(), fc.nat(), (list, at, typoAt) => {
        const body = `<p>${list.map((w, i) => `${w}${i}`).join(' ')}</p>`;
        const start = 3 + (at % (body.length - 60));
        const find = body.slice(start, start + 40);
        const k = typoAt % find.length;
        const typo = `${find.slice(0, k)}#${find.slice(k + 1)}`;
        const near = nearMatch(body, typo);
        return near !== undefined && Math.abs(near.offset - start) <= 1 && atPoints(body, near.offset, near.length) === near.text;
      }),
      { numRuns: 300 },
    );
  });

  it('is linear: a 5 MB body and a 10 KB find, and adversarial repetition, take a bounded time', () => {
    const paragraph = '<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.</p>\n';
    let big = '';
    for (let i = 0; big.length < 5_000_000; i++) big += `${paragraph}<p>item ${i}</p>`;
    const find = big.slice(2_500_000, 2_510_000).replace('o', '0');
    nearMatch(big.slice(0, 1000), 'warm up the lower-case table');
    const timed = (body: string, f: string) => {
      const started = performance.now();
      const result = nearMatch(body, f);
      return { result, ms: performance.now() - started };
    };
    const found = timed(big, find);
    expect(found.result?.offset).toBe(2_500_000);
    // Repetition cannot make it quadratic: every position votes once at most.
    const repeated = timed('a'.repeat(5_000_000), `${'a'.repeat(9_999)}b`);
    const none = timed(big, 'x'.repeat(10_000));
    expect(none.result).toBeUndefined();
    // Generous for a busy shared machine; a quadratic search would take minutes.
    for (const { ms } of [found, repeated, none]) expect(ms).toBeLessThan(15_000);
  });
});

describe('occurrencesOf and explainFailures', () => {
  it('gives the first five occurrences with their surroundings', () => {
    const body = `<p>${Array.from({ length: 8 }, (_, i) => `fish ${i}`).join(', ')}</p>`;
    const found = occurrencesOf(body, 'fish');
    expect(found).toHaveLength(5);
    expect(found[1]).toEqual({ offset: 11, before: '<p>fish 0, ', after: ' 1, fish 2, fish 3, fish 4, fish 5, fish 6, fish 7</p>' });
  });

  it('explains each failure on the body as that replacement met it', () => {
    const body = '<p>one fish two fish</p><p>Red Fish</p>';
    const replacements = [{ find: 'one', replace: 'uno' }, { find: 'fish' }, { find: 'UNO FISH' }, { find: 'red fish', replace: 'x' }];
    const applied = applyReplacements(body, replacements);
    expect(applied.ok).toBe(false);
    if (applied.ok) return;
    expect(explainFailures(body, replacements, applied.failures)).toEqual([
      { index: 1, matches: 2, occurrences: [{ offset: 7, before: '<p>uno ', after: ' two fish</p><p>Red Fish</p>' }, { offset: 16, before: '<p>uno fish two ', after: '</p><p>Red Fish</p>' }] },
      { index: 2, matches: 0, near_match: { offset: 3, length: 8, text: 'uno fish', equivalent: true } },
      { index: 3, matches: 0, near_match: { offset: 27, length: 8, text: 'Red Fish', equivalent: true } },
    ]);
  });
});

describe('outlineOf and windowOf', () => {
  const body = '<h2>One</h2><p>a</p><h3>One <em>b</em> &amp; c</h3><p>😀</p><h2>Two</h2><p>end</p>';

  it('lists headings with the offsets and lengths of their sections, in code points', () => {
    const outline = outlineOf(body);
    const two = Array.from(body.slice(0, body.indexOf('<h2>Two'))).length;
    expect(outline).toEqual([
      { level: 2, text: 'One', offset: 0, length: two },
      { level: 3, text: 'One b & c', offset: 20, length: two - 20 },
      { level: 2, text: 'Two', offset: two, length: 22 },
    ]);
    expect(atPoints(body, 20, two - 20)).toBe('<h3>One <em>b</em> &amp; c</h3><p>😀</p>');
    expect(atPoints(body, two, 22)).toBe('<h2>Two</h2><p>end</p>');
  });

  it('windows are the exact body text, never split a character, and page to the end', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 120 }), (text, length, budget) => {
        let offset: number | null = 0;
        let joined = '';
        while (offset !== null) {
          const window = windowOf(text, offset, length, budget);
          expect(window.length).toBe(Array.from(window.text).length);
          if (window.total_length > 0) expect(window.length).toBeGreaterThan(0);
          expect(window.total_length).toBe(Array.from(text).length);
          joined += window.text;
          offset = window.next_offset;
          if (offset === null && window.total_length === 0) break;
        }
        return joined === text;
      }),
      { numRuns: 300 },
    );
    expect(JSON.stringify(windowOf('"\n"\n"\n', 0, 100, 6).text).length - 2).toBeLessThanOrEqual(6);
    expect(codePointOffset('a😀b', 3)).toBe(2);
    expect(utf16Offset('a😀b', 2)).toBe(3);
  });
});

describe('boundedOutline and bodyWindow', () => {
  const jsonLength = (value: unknown) => JSON.stringify(value).length;

  /** The outline within `budget` as it was cut before, measuring the whole list again for each level. */
  function measuredAgain(outline: OutlineEntry[], budget: number): OutlineEntry[] {
    let entries = [...outline];
    for (let level = 6; level > 2 && jsonLength(entries) > budget; level--) entries = entries.filter((entry) => entry.level < level);
    const kept: OutlineEntry[] = [];
    let used = 2;
    for (const entry of entries) {
      used += jsonLength(entry) + 1;
      if (used > budget) break;
      kept.push(entry);
    }
    return kept;
  }

  const entry = fc.record({
    level: fc.integer({ min: 2, max: 6 }),
    text: fc.string({ maxLength: 30 }),
    offset: fc.nat(),
    length: fc.nat(),
  });

  it('drops the deepest levels first, then the tail, within its budget, as measured entry by entry', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 60 }), fc.integer({ min: 0, max: 3_000 }), (outline, budget) => {
        const bounded = boundedOutline(outline, budget);
        expect(bounded).toEqual(measuredAgain(outline, budget));
        if (bounded.length > 0) expect(jsonLength(bounded)).toBeLessThanOrEqual(budget);
      }),
      { numRuns: 500 },
    );
  });

  it('gives the whole body without an outline when it fits, else a window that leaves room for the outline', () => {
    const body = Array.from({ length: 40 }, (_, i) => `<h2>Part ${i}</h2><p>${'😀 words '.repeat(i)}</p>`).join('');
    const total = Array.from(body).length;
    expect(bodyWindow(body, { offset: 0, length: undefined, budget: 100_000, outlineBudget: 1_000 })).toEqual({ ok: true, window: windowOf(body, 0, total, 100_000) });
    const windowed = bodyWindow(body, { offset: 10, length: undefined, budget: 2_000, outlineBudget: 800 });
    expect(windowed.ok).toBe(true);
    if (!windowed.ok) return;
    expect(windowed.outline).toEqual(boundedOutline(outlineOf(body), 800));
    expect(windowed.window).toEqual(windowOf(body, 10, total, 2_000 - ',"outline":'.length - jsonLength(windowed.outline)));
    expect(bodyWindow(body, { offset: total + 1, length: undefined, budget: 2_000, outlineBudget: 800 })).toEqual({ ok: false, total });
  });
});
