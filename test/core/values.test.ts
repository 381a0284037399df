import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withThousands } from '../../src/core/values.js';

describe('withThousands', () => {
  it('writes a count as toLocaleString("en-US") does, a comma between thousands', () => {
    for (const [count, text] of [
      [0, '0'],
      [7, '7'],
      [999, '999'],
      [1000, '1,000'],
      [100000, '100,000'],
      [1234567, '1,234,567'],
      [-1234, '-1,234'],
    ] as const) {
      expect(withThousands(count)).toBe(text);
    }
    fc.assert(fc.property(fc.nat(), (count) => withThousands(count) === count.toLocaleString('en-US')));
  });
});
