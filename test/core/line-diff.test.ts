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
});
