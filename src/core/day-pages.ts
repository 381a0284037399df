import { utcDate } from './time.js';

/**
 * Counts and deep pages without scanning rows. A list ordered by a timestamp (newest first, rows
 * without one last) is a sequence of UTC days, grouped in months; per-day and per-month counts
 * give its total and say which day holds any offset, so a page can seek to that day by index
 * and skip only rows within it.
 */

/** The day (and month) rows without a timestamp are counted under; it sorts after every real one. */
export const undatedDay = '';

/**
 * Ids per block of the rows without a timestamp. They are listed last, by id descending, and the
 * day counters count them by block of ids (`undatedBlockOf`), so that a page deep among them
 * seeks to its block and skips fewer rows than this, however many such rows the site has.
 */
export const UNDATED_BLOCK = 4096;

/**
 * The day counters' span of a row without a timestamp: `u` and its id's block, zero-padded, so
 * that blocks sort as their ids do, and after every day, under any collation (a letter after
 * digits; punctuation such as `~` sorts before digits, or not at all, in ICU and glibc locales).
 */
export const undatedBlockOf = (id: number): string => `u${String(Math.floor(id / UNDATED_BLOCK)).padStart(10, '0')}`;

/** The day counters' spans that are blocks of rows without a timestamp, as an inclusive range. */
export const undatedBlocks = { from: 'u0000000000', to: 'u9999999999' } as const;

/** The largest id a block of rows without a timestamp (`undatedBlockOf`) may hold. */
export const lastIdOf = (block: string): number => (Number(block.slice(1)) + 1) * UNDATED_BLOCK - 1;

export const isUndatedBlock = (span: string): boolean => span.startsWith('u');

/**
 * How many rows of a list fall in one span: a UTC day `YYYY-MM-DD`, a UTC month `YYYY-MM`, or
 * `undatedDay`. Spans of one list never overlap, so their keys sort in the list's order.
 */
export interface SpanCount {
  span: string;
  n: number;
}

/** Where the row at a list offset is: its span, and how many rows of that span come before it. */
export interface SpanOffset {
  span: string;
  within: number;
  /** How many rows the span holds, where it is one of the counted spans. */
  n?: number;
}

export const isMonth = (span: string): boolean => span.length === 7;

export const isDay = (span: string): boolean => span.length === 10;

export const totalOf = (counts: readonly SpanCount[]): number => counts.reduce((sum, { n }) => sum + n, 0);

/** Spans newest first, `undatedDay` last: the order of the list. */
export const inListOrder = (counts: readonly SpanCount[]): SpanCount[] =>
  [...counts].sort((a, b) => (a.span < b.span ? 1 : a.span > b.span ? -1 : 0));

/**
 * The span holding the row at `offset` (0-based) of a list whose counts are `counts`, in the
 * list's order; undefined when the list has no row at that offset.
 */
export function spanHolding(counts: readonly SpanCount[], offset: number): SpanOffset | undefined {
  let before = 0;
  for (const { span, n } of counts) {
    if (offset < before + n) return { span, within: offset - before, n };
    before += n;
  }
  return undefined;
}

/** Inclusive UTC days `YYYY-MM-DD` (valid calendar days); either bound may be absent. */
export interface DayBounds {
  from?: string;
  to?: string;
}

/** Inclusive ranges of whole months and of single days that together cover some `DayBounds`. */
export interface SplitBounds {
  /** Whole months `YYYY-MM`, inclusive, either side open; absent when no month is whole. */
  months?: { from?: string; to?: string };
  /** Days of the months that are only partly inside, as inclusive `from`..`to` ranges. */
  days: { from: string; to: string }[];
  /** Whether rows without a timestamp belong: only when no bound is given. */
  undated: boolean;
}

const monthOf = (day: string): string => day.slice(0, 7);

function lastDayOf(month: string): string {
  const [year, index] = month.split('-').map(Number) as [number, number];
  return `${month}-${String(utcDate(year, index, 0).getUTCDate()).padStart(2, '0')}`;
}

function monthAfter(month: string): string {
  const [year, index] = month.split('-').map(Number) as [number, number];
  return index === 12 ? `${String(year + 1).padStart(4, '0')}-01` : `${month.slice(0, 5)}${String(index + 1).padStart(2, '0')}`;
}

function monthBefore(month: string): string {
  const [year, index] = month.split('-').map(Number) as [number, number];
  return index === 1 ? `${String(year - 1).padStart(4, '0')}-12` : `${month.slice(0, 5)}${String(index - 1).padStart(2, '0')}`;
}

/**
 * Splits inclusive day bounds into whole months (read from month counters) and the days of the
 * partial months at either end (read from day counters), so a sum over any range reads at most
 * about sixty day counters however long the range is.
 */
export function splitBounds({ from, to }: DayBounds): SplitBounds {
  const undated = from === undefined && to === undefined;
  if (from !== undefined && to !== undefined && monthOf(from) === monthOf(to)) {
    const whole = from.endsWith('-01') && to === lastDayOf(monthOf(to));
    return whole ? { months: { from: monthOf(from), to: monthOf(to) }, days: [], undated } : { days: [{ from, to }], undated };
  }
  const days: { from: string; to: string }[] = [];
  let firstMonth: string | undefined;
  let lastMonth: string | undefined;
  if (from !== undefined) {
    firstMonth = from.endsWith('-01') ? monthOf(from) : monthAfter(monthOf(from));
    if (!from.endsWith('-01')) days.push({ from, to: lastDayOf(monthOf(from)) });
  }
  if (to !== undefined) {
    const whole = to === lastDayOf(monthOf(to));
    lastMonth = whole ? monthOf(to) : monthBefore(monthOf(to));
    if (!whole) days.push({ from: `${monthOf(to)}-01`, to });
  }
  // After December 9999 there is no month (`monthAfter` gives a five-digit year).
  const none =
    (firstMonth !== undefined && !isMonth(firstMonth)) || (firstMonth !== undefined && lastMonth !== undefined && firstMonth > lastMonth);
  return { ...(none ? {} : { months: { from: firstMonth, to: lastMonth } }), days, undated };
}
