/**
 * Deep pages without scanning: a list ordered by a timestamp (newest first, rows without one
 * last) is a sequence of UTC days, and per-day counts say which day holds any offset, so a page
 * can seek to that day by index and skip only rows within it.
 */

/** The day rows without a timestamp are counted under; it sorts after every real day. */
export const undatedDay = '';

/** How many rows of a list fall on one UTC day (`YYYY-MM-DD`, or `undatedDay`). */
export interface DayCount {
  day: string;
  n: number;
}

/** Where the row at a list offset is: its day, and how many rows of that day come before it. */
export interface DayOffset {
  day: string;
  withinDay: number;
}

export const totalOf = (counts: readonly DayCount[]): number => counts.reduce((sum, { n }) => sum + n, 0);

/**
 * The day holding the row at `offset` (0-based) of a list whose per-day counts are `counts`, in
 * the list's order; undefined when the list has no row at that offset.
 */
export function dayHolding(counts: readonly DayCount[], offset: number): DayOffset | undefined {
  let before = 0;
  for (const { day, n } of counts) {
    if (offset < before + n) return { day, withinDay: offset - before };
    before += n;
  }
  return undefined;
}
