import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toTimestamp } from '../../src/core/time.js';

describe('toTimestamp', () => {
  it('is the ISO instant to the second, with Z, for every date JavaScript holds', () => {
    expect(toTimestamp(new Date('2026-11-28T05:40:12.999Z'))).toBe('2026-11-28T05:40:12Z');
    expect(toTimestamp(new Date(-8.64e15))).toBe('-271821-04-20T00:00:00Z');
    fc.assert(
      fc.property(fc.date({ noInvalidDate: true }), (date) => {
        expect(toTimestamp(date)).toBe(date.toISOString().replace(/\.\d{3}Z$/, 'Z'));
      }),
    );
  });
});
