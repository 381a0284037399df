import { describe, expect, it } from 'vitest';
import { addressLines } from '../../src/core/address-lines.js';

/** A line fits when it has at most `n` characters (a monospace measure). */
const upTo = (n: number) => (line: string) => [...line].length <= n;

describe('addressLines', () => {
  it('breaks after separators, packing as many pieces on a line as fit', () => {
    expect(addressLines('https://www.example.com/blog/dental-crowns-what-to-know', upTo(20))).toEqual([
      'https://www.example.',
      'com/blog/dental-',
      'crowns-what-to-know',
    ]);
    expect(addressLines('/a/b?x=1&y=2', upTo(100))).toEqual(['/a/b?x=1&y=2']);
  });

  it('never breaks inside a word: a piece too long for a line is cut in its middle', () => {
    const lines = addressLines('/blog/averyveryverylongslugwithoutanyseparators', upTo(12));
    expect(lines).toEqual(['/blog/', 'averyv…ators']);
    for (const line of lines) expect(upTo(12)(line)).toBe(true);
  });

  it('keeps every line within the measure, whatever the address', () => {
    const address = `https://${'x'.repeat(300)}.example/${'segment-'.repeat(40)}?q=${'y'.repeat(90)}`;
    for (const width of [3, 8, 25, 60]) {
      const lines = addressLines(address, upTo(width));
      expect(lines.every(upTo(width))).toBe(true);
      expect(lines.join('').replace(/…/g, '').length).toBeLessThanOrEqual(address.length);
    }
  });

  it('gives nothing for an empty address', () => {
    expect(addressLines('', upTo(10))).toEqual([]);
  });
});
