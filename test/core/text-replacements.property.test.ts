import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { nextBody } from '../../src/core/article-body.js';
import { applyReplacements, applyTextReplacements, editsApart } from '../../src/core/body-replacements.js';
import { MAX_BODY_LENGTH, sanitizeAndScan, sanitizeTrusted } from '../../src/core/html.js';
import { describeBody, protectedAnchorsOf, wordCount } from '../../src/core/protected-anchors.js';
import type { Replacement } from '../../src/core/replacement.js';
import { anyHtml } from '../fixtures/html-arbitraries.js';

// The PATCH fast path (applyTextReplacements, then no sanitiser, no guard and, with the row's
// stored counts, no parse) must give exactly what the full path gives on every stored body: the
// same body, meta.sanitized, word count, protected links and the same refusals.
vi.setConfig({ testTimeout: 180_000 });

/** Article-like markup with long text runs, where plain-text edits mostly land in text. */
const prose = fc
  .array(
    fc.oneof(
      fc.constantFrom('Lorem', 'ipsum', 'dolor', 'sit', 'amet', 'A &amp; B', '1 &lt; 2', 'x &gt; y', '"quoted"', 'it\'s', 'é', '\u00a0', '\n'),
      fc.constantFrom(
        '<p>', '</p>', '<h2>', '</h2>', '<strong>', '</strong>', '<em>', '</em>', '<ul><li>', '</li></ul>', '<br>',
        '<a href="https://site.example/p?a=1&amp;b=2" title="Lorem ipsum">', '</a>', '<img src="/m/ipsum.png" alt="dolor sit">',
        '<a href="https://p.example/A" data-service-protected="backlink">partner Lorem</a>',
        '<a href="/in/x" data-service-protected="internal">guide dolor</a>',
      ),
    ),
    { maxLength: 30 },
  )
  .map((tokens) => tokens.join(' '));

/** A stored body: imported (trusted: every valid marker kept) or written by PUT. */
const stored = fc.tuple(fc.oneof(anyHtml, { arbitrary: prose, weight: 3 }), fc.boolean()).map(([input, trusted]) => {
  const imported = sanitizeTrusted(input);
  return trusted ? imported : sanitizeAndScan(input, { protectedBefore: protectedAnchorsOf(imported) }).html;
});

const replaceChar = fc.constantFrom(
  'a', 'Z', ' ', '\n', '\r', '\t', '"', "'", ';', '#', '=', '/', 'é', '\u00a0', '\u200e', '\u2028', '\ufeff', '\ud800', '😀',
  'amp', 'lt;', '&', '<', '>', '\u202e', '\u2066', '\0',
);
const replaceText = fc.string({ unit: replaceChar, maxLength: 6 });

/** Replacements whose `find` is mostly a piece of the body (so that it matches), anywhere in it. */
const edit = stored.chain((body) => {
  const piece = fc
    .tuple(fc.nat(Math.max(0, body.length - 1)), fc.integer({ min: 1, max: 8 }))
    .map(([start, length]) => body.slice(start, start + length));
  const find = body === '' ? replaceText : fc.oneof({ arbitrary: piece, weight: 4 }, replaceText);
  const item: fc.Arbitrary<Replacement> = fc.record(
    { find, replace: replaceText, all: fc.boolean() },
    { requiredKeys: ['find'] },
  );
  return fc.tuple(fc.constant(body), fc.array(item, { minLength: 1, maxLength: 3 }));
});

describe('PATCH replacements of plain text in text', () => {
  it('give exactly what the sanitising path gives', () => {
    let fast = 0;
    fc.assert(
      fc.property(edit, ([body, replacements]) => {
        const outcome = applyTextReplacements(body, replacements);
        if (outcome?.ok) fast += 1;
        const { anchors, words } = describeBody(body);
        const full = nextBody(body, { replacements });
        expect(nextBody(body, { replacements }, { clean: true })).toEqual(full);
        const stored = { words, links: anchors.map(({ link }) => link) };
        expect(nextBody(body, { replacements }, { clean: true, stored })).toEqual(full);
      }),
      { numRuns: 5000 },
    );
    // The property says something only if the fast path is taken often.
    expect(fast).toBeGreaterThan(100);
  });

  it('count the words they change around them', () => {
    let counted = 0;
    fc.assert(
      fc.property(edit, ([body, replacements]) => {
        const outcome = applyTextReplacements(body, replacements);
        if (!outcome?.ok || outcome.wordChange === undefined) return;
        counted += 1;
        expect(wordCount(body) + outcome.wordChange).toBe(wordCount(outcome.body));
      }),
      { numRuns: 5000 },
    );
    expect(counted).toBeGreaterThan(100);
  });

  it('count words that run on across inline elements and stop at the others', () => {
    const body = '<p>wo<b>rd</b> x</p><p>y</p>';
    const change = (replacements: Replacement[]) => {
      const outcome = applyTextReplacements(body, replacements);
      return outcome?.ok ? outcome.wordChange : outcome;
    };
    expect(change([{ find: ' x', replace: 'x' }])).toBe(-1); // "word" and "x" become "wordx"
    expect(change([{ find: 'rd', replace: ' rd' }])).toBe(1);
    expect(change([{ find: 'x', replace: '' }])).toBe(-1); // the <p> after it still breaks words
    expect(change([{ find: 'y', replace: 'y z' }, { find: ' z', replace: '' }])).toBe(0);
    // Text with no breaking tag around it is counted whole: past the body's length, no count.
    const long = `<p>${'a '.repeat(10)}<em>b</em></p>`;
    expect(applyTextReplacements(long, [{ find: 'b', replace: 'c' }])).toMatchObject({ ok: true, wordChange: 0 });
    const many = Array.from({ length: 20 }, (_, i) => ({ find: i % 2 ? 'c' : 'b', replace: i % 2 ? 'b' : 'c' }));
    expect(applyTextReplacements(long, many)).toMatchObject({ ok: true, wordChange: undefined });
  });

  it('leave a body that the sanitiser leaves as it is', () => {
    fc.assert(
      fc.property(edit, ([body, replacements]) => {
        const outcome = applyTextReplacements(body, replacements);
        if (!outcome?.ok) return;
        expect(sanitizeTrusted(outcome.body)).toBe(outcome.body);
      }),
      { numRuns: 5000 },
    );
  });

  it('decline markup, entities and characters the sanitiser removes', () => {
    const body = '<p>a &amp; b <a href="/x?q=1">link</a> c</p>';
    expect(applyTextReplacements(body, [{ find: 'link', replace: '<b>x</b>' }])).toBeUndefined();
    expect(applyTextReplacements(body, [{ find: 'c', replace: 'd\u202e' }])).toBeUndefined();
    expect(applyTextReplacements(body, [{ find: 'amp', replace: 'x' }])).toBeUndefined();
    expect(applyTextReplacements(body, [{ find: 'q=1', replace: 'q=2' }])).toBeUndefined();
    expect(applyTextReplacements(body, [{ find: 'p', replace: 'q', all: true }])).toBeUndefined();
    expect(applyTextReplacements(body, [{ find: ' c', replace: ' d' }])).toEqual({ ok: true, body: body.replace(' c', ' d'), wordChange: 0 });
    // Text inside a protected anchor: the guard must compare the anchors, so the full path runs.
    const linked = '<p>see <a href="https://p.example/" data-service-protected="backlink">partner <em>site</em></a> today</p>';
    expect(applyTextReplacements(linked, [{ find: 'partner', replace: 'other' }])).toBeUndefined();
    expect(applyTextReplacements(linked, [{ find: 'site', replace: 'page' }])).toBeUndefined();
    expect(applyTextReplacements(linked, [{ find: 'today', replace: 'now' }])).toEqual({ ok: true, body: linked.replace('today', 'now'), wordChange: 0 });
    expect(nextBody(linked, { replacements: [{ find: 'partner', replace: 'other' }] }, { clean: true })).toMatchObject({
      ok: false,
      error: { error: 'protected_links_violation' },
    });
    expect(applyTextReplacements(body, [{ find: 'zzz' }, { find: 'a', replace: 'A' }])).toEqual({
      ok: false,
      failures: [{ index: 0, matches: 0 }, { index: 1, matches: 4 }],
    });
  });

  it('stay linear on a large body with many matches', () => {
    const cpuFor = (words: number) => {
      const body = `<p>${'word &amp; '.repeat(words)}</p>`;
      const started = process.cpuUsage();
      expect(applyTextReplacements(body, [{ find: 'word', replace: 'term', all: true }])?.ok).toBe(true);
      const { user, system } = process.cpuUsage(started);
      return user + system;
    };
    cpuFor(20_000);
    // Ten times the matches in a ten times longer body: about ten times the work, where a
    // placement that rescans the text for each match would take a hundred times as long.
    expect(cpuFor(200_000) / Math.max(cpuFor(20_000), 1)).toBeLessThan(40);
  });
});

describe('PATCH replacements that cannot meet one another', () => {
  // Words between fillers, and finds and replaces made of them or cut from the body: items are
  // often apart, and often overlap, meet across an earlier item's output or make a later item's
  // find, where one pass must decline.
  const word = fc.constantFrom('cat', 'dog', 'cow', 'ant', 'bee', 'owl', 'elk', 'yak');
  const text = fc.array(fc.tuple(word, fc.constantFrom(' lorem ipsum ', ' dolor sit ', ' ', '<em>x</em> ', '</p><p>')), { maxLength: 20 });
  const body = text.map((tokens) => sanitizeTrusted(`<p>${tokens.flat().join('')}</p>`));
  const piece = fc.oneof(word, fc.constantFrom('at', 'og', 't d', 'catdog', 'm d', 'c', 'e', ''));
  const edit = body.chain((body) => {
    const slice = fc.tuple(fc.nat(body.length - 1), fc.integer({ min: 2, max: 9 })).map(([start, length]) => body.slice(start, start + length));
    const find = fc.oneof(slice, piece).filter((find) => find !== '');
    return fc.tuple(fc.constant(body), fc.array(fc.record({ find, replace: piece, all: fc.boolean() }), { minLength: 2, maxLength: 3 }));
  });

  it('are made in one pass exactly as one after another', () => {
    let apart = 0;
    let declined = 0;
    fc.assert(
      fc.property(edit, ([body, replacements]) => {
        const inOrder = applyReplacements(body, replacements);
        const edits = editsApart(body, replacements);
        if (edits === undefined) {
          if (inOrder.ok) declined += 1;
          return;
        }
        expect(inOrder.ok).toBe(true);
        // Markup or text outside the body's text is still declined, one pass or not.
        const outcome = applyTextReplacements(body, replacements);
        if (outcome === undefined) return;
        if (replacements.length > 1) apart += 1;
        expect(outcome).toMatchObject({ ok: true, body: inOrder.ok ? inOrder.body : undefined });
        if (outcome.ok && outcome.wordChange !== undefined) expect(wordCount(body) + outcome.wordChange).toBe(wordCount(outcome.body));
      }),
      { numRuns: 20_000 },
    );
    // Both sides of the check are taken often, or the property says little.
    expect(apart).toBeGreaterThan(200);
    expect(declined).toBeGreaterThan(200);
  });

  it('decline items that would meet', () => {
    const body = '<p>one two three four five six seven eight</p>';
    // An earlier replace makes a later find; a later find spans an earlier output; too close.
    expect(editsApart(body, [{ find: 'two', replace: 'nine' }, { find: 'nine' }])).toBeUndefined();
    expect(editsApart(body, [{ find: 'four', replace: 'FOUR' }, { find: 'e FOUR', replace: 'e' }])).toBeUndefined();
    expect(editsApart(body, [{ find: 'one', replace: '1' }, { find: 'two', replace: '2' }])).toBeUndefined();
    expect(editsApart(body, [{ find: 'one', replace: '1' }, { find: 'five', replace: '5' }])).toEqual([
      { start: 3, length: 3, replace: '1', item: 0 },
      { start: 22, length: 4, replace: '5', item: 1 },
    ]);
  });

  it('decline where checking would read more than the body, or matches cannot all be apart, and the items then run one after another', () => {
    // Ten items apart: 45 windows around earlier outputs outweigh a 164-character body.
    const words = Array.from({ length: 10 }, (_, i) => `w${i}xx`);
    const body = `<p>${words.join(' lorem ipsum ')}</p>`;
    const many = words.map((find) => ({ find, replace: find.toUpperCase() }));
    expect(editsApart(body, many)).toBeUndefined();
    expect(editsApart(body, many.slice(0, 2))).toHaveLength(2);
    // One after another, each item counts the paragraph's words anew: past the budget, no count.
    expect(applyTextReplacements(body, many)).toEqual({ ok: true, body: `<p>${words.map((w) => w.toUpperCase()).join(' lorem ipsum ')}</p>`, wordChange: undefined });
    // Fifty matches of one item cannot lie eight characters apart in a hundred characters.
    const dense = `<p>${'x '.repeat(50)}</p>`;
    expect(editsApart(dense, [{ find: 'x', replace: 'y', all: true }])).toBeUndefined();
    expect(applyTextReplacements(dense, [{ find: 'x', replace: 'y', all: true }])).toEqual({ ok: true, body: `<p>${'y '.repeat(50)}</p>`, wordChange: 0 });
    // An item that would grow the body past its limit leaves the refusal to the items in order.
    expect(editsApart(body, [{ find: 'w0xx', replace: 'z'.repeat(MAX_BODY_LENGTH) }])).toBeUndefined();
    expect(() => applyTextReplacements(body, [{ find: 'w0xx', replace: 'z'.repeat(MAX_BODY_LENGTH) }])).toThrow(
      expect.objectContaining({ code: 'validation_failed', details: { fields: { 'replacements.0.replace': [expect.stringMatching(/would grow past/)] } } }),
    );
  });

  it('make 50 items of a 100 KB article in one pass', () => {
    const paragraphs = Array.from({ length: 400 }, (_, i) => `<p>Paragraph ${i}${i < 50 ? ` [m${i}a]` : ''}: lorem <strong>ipsum</strong> dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>`);
    const body = paragraphs.join('');
    const replacements = Array.from({ length: 50 }, (_, i) => ({ find: `[m${i}a]`, replace: `[m${i}b]` }));
    expect(editsApart(body, replacements)).toHaveLength(50);
    expect(applyTextReplacements(body, replacements)).toEqual({ ok: true, body: body.replace(/\[m(\d+)a\]/g, '[m$1b]'), wordChange: 0 });
  });
});
