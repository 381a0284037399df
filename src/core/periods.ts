import { validationFailed } from './errors.js';
import { addDays, parseDay, toDay, utcDate } from './time.js';

export interface DayRange {
  from: string;
  to: string;
}

export interface PeriodRequest {
  period?: string;
  from?: string;
  to?: string;
}

const monthPattern = /^(\d{4})-(\d{2})$/;
const dayShape = /^\d{4}-\d{2}-\d{2}$/;

/** Why a `YYYY-MM-DD` value is not a day: the wrong shape, or a date the calendar does not have. */
export function dayProblem(value: string): string | undefined {
  if (parseDay(value)) return undefined;
  return dayShape.test(value) ? `The date ${value} does not exist.` : 'Must be a date YYYY-MM-DD.';
}

function monthRange(year: number, monthIndex: number): DayRange {
  const first = utcDate(year, monthIndex, 1);
  const last = utcDate(year, monthIndex + 1, 0);
  return { from: toDay(first), to: toDay(last) };
}

/** Resolves a named period to inclusive UTC days, or undefined when the name is not a period. */
export function periodRange(period: string, now: Date): DayRange | undefined {
  const today = toDay(now);
  switch (period) {
    case 'this_month':
      return { from: `${today.slice(0, 7)}-01`, to: today };
    case 'last_month':
      return monthRange(now.getUTCFullYear(), now.getUTCMonth() - 1);
    case 'last_30_days':
      return { from: toDay(addDays(parseDay(today) as Date, -29)), to: today };
  }
  const month = monthPattern.exec(period);
  if (month) {
    const index = Number(month[2]) - 1;
    return index >= 0 && index < 12 && parseDay(`${period}-01`) ? monthRange(Number(month[1]), index) : undefined;
  }
  return parseDay(period) ? { from: period, to: period } : undefined;
}

/**
 * The stats rules of decisions.md: `period` and `from`/`to` exclude each other, `from` and `to`
 * go together, and neither means this month.
 */
export function resolvePeriod(request: PeriodRequest, now: Date): DayRange {
  const { period, from, to } = request;
  if (period !== undefined && (from !== undefined || to !== undefined)) {
    throw validationFailed({ period: ['Give either period or from/to, not both.'] });
  }
  if (period !== undefined) {
    const range = periodRange(period, now);
    if (!range) {
      // The right shape naming no real month or day says so rather than repeat the formats.
      const missing = dayShape.test(period) ? 'date' : monthPattern.test(period) ? 'month' : undefined;
      throw validationFailed({
        period: [
          missing
            ? `The ${missing} ${period} does not exist.`
            : 'Must be this_month, last_month, last_30_days, a month YYYY-MM or a day YYYY-MM-DD.',
        ],
      });
    }
    return range;
  }
  if (from === undefined && to === undefined) return periodRange('this_month', now) as DayRange;
  if (from === undefined || to === undefined) {
    const missing = from === undefined ? 'from' : 'to';
    throw validationFailed({ [missing]: ['from and to must be given together.'] });
  }
  return checkedDayRange(from, to);
}

/** Validates an inclusive `from`..`to` pair: real days, `from` not after `to`. */
export function checkedDayRange(from: string, to: string): DayRange {
  const fields: Record<string, string[]> = {};
  const fromProblem = dayProblem(from);
  const toProblem = dayProblem(to);
  if (fromProblem) fields.from = [fromProblem];
  if (toProblem) fields.to = [toProblem];
  if (Object.keys(fields).length === 0 && from > to) fields.from = ['Must not be after to.'];
  if (Object.keys(fields).length > 0) throw validationFailed(fields);
  return { from, to };
}

