import { describe, expect, it } from 'vitest';
import { lineDiff } from '../../src/core/line-diff.js';

const paragraphs = (count: number, word: string) => Array.from({ length: count }, (_, i) => `<p>${word} ${i}</p>`).join('');

describe('lineDiff', () => {
  it('folds long unchanged runs, keeping 3 lines of context around a change', () => {
    const before = paragraphs(20, 'line');
    const diff = lineDiff(before, before.replace('<p>line 10</p>', '<p>line ten</p>'))!;
    expect(diff).toMatchObject({ added: 1, removed: 1, notShown: 0 });
    expect(diff.lines.filter((line) => line.kind === 'skipped').map((line) => line.text)).toEqual(['7 unchanged lines', '6 unchanged lines']);
    expect(lineDiff(before, before)).toEqual({ added: 0, removed: 0, notShown: 0, lines: [{ kind: 'skipped', text: '20 unchanged lines' }] });
  });

  it('returns at most maxLines lines, counting the rest, and every added and removed line', () => {
    const diff = lineDiff(paragraphs(50, 'old'), paragraphs(50, 'new'), { maxLines: 30 })!;
    expect(diff.added).toBe(50);
    expect(diff.removed).toBe(50);
    expect(diff.lines).toHaveLength(30);
    expect(diff.notShown).toBe(70);
  });

  it('gives up past its time limit instead of running for minutes (bodies that differ on every line)', () => {
    // 4,000 lines that all differ: seconds of work without the limit.
    expect(lineDiff(paragraphs(4_000, 'old'), paragraphs(4_000, 'new'), { timeoutMs: 5 })).toBeUndefined();
  });

  it('marks the word a line changed, not the whole paragraph', () => {
    const before = '<h2>Opening hours</h2><p>We open at seven on weekdays and close at six.</p><p>See you soon.</p>';
    const diff = lineDiff(before, before.replace('seven', 'eight'))!;
    expect(diff).toMatchObject({ added: 1, removed: 1 });
    const removed = diff.lines.find((line) => line.kind === 'removed')!;
    const added = diff.lines.find((line) => line.kind === 'added')!;
    expect(removed.words).toEqual([
      { text: '<p>We open at ', changed: false },
      { text: 'seven', changed: true },
      { text: ' on weekdays and close at six.</p>', changed: false },
    ]);
    expect(added.words?.filter((run) => run.changed)).toEqual([{ text: 'eight', changed: true }]);
    // The runs are the line: nothing is lost or repeated.
    for (const line of [removed, added]) expect(line.words!.map((run) => run.text).join('')).toBe(line.text);
  });

  it('pairs the lines of a block replaced by another of a different length, keeping every line whole in its runs', () => {
    const before = '<p>First line stays nearly.</p><p>Second line here.</p>';
    const after = '<p>First line stays nearly!</p><p>Inserted paragraph about something else entirely.</p><p>Second line there.</p>';
    const diff = lineDiff(before, after)!;
    const added = diff.lines.filter((line) => line.kind === 'added');
    const removed = diff.lines.filter((line) => line.kind === 'removed');
    expect(added.map((line) => line.text)).toEqual(after.replace(/<\/p>/g, '</p>\n').trim().split('\n'));
    for (const line of [...added, ...removed]) {
      if (line.words) expect(line.words.map((run) => run.text).join('')).toBe(line.text);
    }
    // Which of two equal `</p>` the word diff keeps is its choice; the edited words are what count.
    expect(added[0]!.words?.filter((run) => run.changed).map((run) => run.text.replace('</p>', ''))).toEqual(['!']);
    expect(removed[1]!.words?.filter((run) => run.changed).map((run) => run.text)).toEqual(['here']);
    // The new paragraph is new as a whole: no word marks over it.
    expect(added[1]!.words).toBeUndefined();
  });

  it('leaves a rewritten line whole rather than marking most of its words', () => {
    const diff = lineDiff('<p>The bakery opens early every day.</p>', '<p>Our shop welcomes guests from dawn onwards.</p>')!;
    expect(diff.lines.map((line) => [line.kind, line.words])).toEqual([
      ['removed', undefined],
      ['added', undefined],
    ]);
  });

  it('keeps markup as text in the runs (escaping is the page’s job)', () => {
    const diff = lineDiff('<p>Read <a href="/a">this guide</a> today.</p>', '<p>Read <a href="/b">this guide</a> today.</p>')!;
    const removed = diff.lines.find((line) => line.kind === 'removed')!;
    expect(removed.words!.filter((run) => run.changed).map((run) => run.text)).toEqual(['a']);
    expect(removed.words!.map((run) => run.text).join('')).toBe('<p>Read <a href="/a">this guide</a> today.</p>');
  });

  it('compares words only in bounded blocks: a huge paragraph or a block of many edits is shown whole', () => {
    const huge = `<p>${'word '.repeat(2_000)}</p>`;
    const hugeDiff = lineDiff(huge, huge.replace('word', 'term'))!;
    expect(hugeDiff.lines.every((line) => line.words === undefined)).toBe(true);
    const many = Array.from({ length: 300 }, (_, i) => `w${i}`).join(' ');
    const manyDiff = lineDiff(`<p>${many}</p>`, `<p>${many.replace(/w(\d+)/g, (_, n: string) => (Number(n) % 2 ? `w${n}` : `v${n}`))}</p>`)!;
    expect(manyDiff.lines.every((line) => line.words === undefined)).toBe(true);
  });

  it('compares the words of the lines it shows only, within maxLines', () => {
    const before = paragraphs(10, 'old word');
    const diff = lineDiff(before, before.replace(/old/g, 'new'), { maxLines: 4 })!;
    expect(diff.lines).toHaveLength(4);
    expect(diff.lines.every((line) => line.kind === 'removed')).toBe(true);
  });
});
