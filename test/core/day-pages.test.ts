import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inListOrder, spanHolding, splitBounds, totalOf, undatedDay } from '../../src/core/day-pages.js';
import { toDay } from '../../src/core/time.js';

const counts = [
  { span: '2026-11-02', n: 3 },
  { span: '2026-10', n: 5 },
  { span: '2026-09-30', n: 0 },
  { span: '2026-09-29', n: 2 },
  { span: undatedDay, n: 4 },
];

describe('spanHolding', () => {
  it('finds the span of each offset, how many rows of that span come before it and how many it holds', () => {
    expect(spanHolding(counts, 0)).toEqual({ span: '2026-11-02', within: 0, n: 3 });
    expect(spanHolding(counts, 2)).toEqual({ span: '2026-11-02', within: 2, n: 3 });
    expect(spanHolding(counts, 3)).toEqual({ span: '2026-10', within: 0, n: 5 });
    expect(spanHolding(counts, 7)).toEqual({ span: '2026-10', within: 4, n: 5 });
    // An empty day holds no offset: the next day does.
    expect(spanHolding(counts, 8)).toEqual({ span: '2026-09-29', within: 0, n: 2 });
    expect(spanHolding(counts, 10)).toEqual({ span: undatedDay, within: 0, n: 4 });
    expect(spanHolding(counts, 13)).toEqual({ span: undatedDay, within: 3, n: 4 });
  });

  it('finds nothing past the end, or in an empty list', () => {
    expect(totalOf(counts)).toBe(14);
    expect(spanHolding(counts, 14)).toBeUndefined();
    expect(spanHolding(counts, 1_000_000)).toBeUndefined();
    expect(spanHolding([], 0)).toBeUndefined();
  });

  it('agrees with expanding the counts into rows and indexing', () => {
    const spanCounts = fc.array(fc.record({ span: fc.string(), n: fc.nat(5) }), { maxLength: 8 });
    fc.assert(
      fc.property(spanCounts, fc.nat(45), (spans, offset) => {
        const rows = spans.flatMap(({ span, n }) => Array.from({ length: n }, (_, i) => ({ span, within: i, n })));
        expect(spanHolding(spans, offset)).toEqual(rows[offset]);
      }),
      { numRuns: 500 },
    );
  });
});

describe('inListOrder', () => {
  it('puts days and months newest first and the undated last', () => {
    const shuffled = [counts[3]!, counts[4]!, counts[0]!, counts[2]!, counts[1]!];
    expect(inListOrder(shuffled)).toEqual(counts);
  });
});

describe('splitBounds', () => {
  it('keeps whole months as months and the partial ends as days', () => {
    expect(splitBounds({ from: '2025-11-01', to: '2026-10-31' })).toEqual({ months: { from: '2025-11', to: '2026-10' }, days: [], undated: false });
    expect(splitBounds({ from: '2025-11-15', to: '2026-02-10' })).toEqual({
      months: { from: '2025-12', to: '2026-01' },
      days: [
        { from: '2025-11-15', to: '2025-11-30' },
        { from: '2026-02-01', to: '2026-02-10' },
      ],
      undated: false,
    });
    expect(splitBounds({ from: '2026-10-05', to: '2026-10-09' })).toEqual({ days: [{ from: '2026-10-05', to: '2026-10-09' }], undated: false });
    expect(splitBounds({ from: '2024-02-01', to: '2024-02-29' })).toEqual({ months: { from: '2024-02', to: '2024-02' }, days: [], undated: false });
    expect(splitBounds({ from: '2026-01-31', to: '2026-02-01' })).toEqual({
      days: [
        { from: '2026-01-31', to: '2026-01-31' },
        { from: '2026-02-01', to: '2026-02-01' },
      ],
      undated: false,
    });
  });

  it('leaves a side open when its bound is absent; only no bound at all counts the undated', () => {
    expect(splitBounds({})).toEqual({ months: {}, days: [], undated: true });
    expect(splitBounds({ to: '2026-10-15' })).toEqual({ months: { to: '2026-09' }, days: [{ from: '2026-10-01', to: '2026-10-15' }], undated: false });
    expect(splitBounds({ from: '2026-10-15' })).toEqual({ months: { from: '2026-11' }, days: [{ from: '2026-10-15', to: '2026-10-31' }], undated: false });
    // No month follows December 9999.
    expect(splitBounds({ from: '9999-12-02' })).toEqual({ days: [{ from: '9999-12-02', to: '9999-12-31' }], undated: false });
    expect(splitBounds({ to: '9999-12-31' })).toEqual({ months: { to: '9999-12' }, days: [], undated: false });
  });

  it('covers every day inside the bounds exactly once and no day outside', () => {
    // Days from 2023 to 2026 and the last days of year 9999, as offsets from 2023-01-01.
    const day = fc
      .oneof(fc.integer({ min: 0, max: 4 * 366 }), fc.constantFrom(2_913_507, 2_913_508, 2_913_509, 2_913_537, 2_913_538))
      .map((offset) => toDay(new Date(Date.UTC(2023, 0, 1) + offset * 86_400_000)));
    fc.assert(
      fc.property(fc.option(day, { nil: undefined }), fc.option(day, { nil: undefined }), day, (a, b, probe) => {
        const [from, to] = a !== undefined && b !== undefined && a > b ? [b, a] : [a, b];
        const split = splitBounds({ from, to });
        const inMonths =
          split.months !== undefined &&
          (split.months.from === undefined || probe.slice(0, 7) >= split.months.from) &&
          (split.months.to === undefined || probe.slice(0, 7) <= split.months.to);
        const inDays = split.days.filter((range) => probe >= range.from && probe <= range.to).length;
        const inside = (from === undefined || probe >= from) && (to === undefined || probe <= to);
        expect(Number(inMonths) + inDays).toBe(inside ? 1 : 0);
        expect(split.undated).toBe(from === undefined && to === undefined);
        // Partial months stay partial: a day range never spans more than one month.
        for (const range of split.days) expect(range.from.slice(0, 7)).toBe(range.to.slice(0, 7));
      }),
      { numRuns: 2000 },
    );
  });
});
