/** The service's clock, injected so that periods and windows can be tested at any instant. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * A clock that reads `start` now and moves on with the system's: another process's clock handed
 * to a child process (a node's test clock too), so both stamp the same times.
 */
export function clockFrom(start: Date): Clock {
  const offset = start.getTime() - Date.now();
  return { now: () => new Date(Date.now() + offset) };
}

/** RFC 3339 UTC with `Z`, second precision: the one timestamp format of the interface. */
export function toTimestamp(date: Date): string {
  // toISOString always ends in `.sssZ`: cut the milliseconds (a regular expression there was
  // 1.8 % of a GET's time, in its activity record).
  return `${date.toISOString().slice(0, -5)}Z`;
}

/** `YYYY-MM-DD` of a date in UTC. */
export function toDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

const dayPattern = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Midnight UTC of a day, rolling over as Date.UTC does (day 0 is the month's eve); unlike
 * Date.UTC, the years 0 to 99 stay themselves instead of moving into the 1900s.
 */
export function utcDate(year: number, monthIndex: number, day: number): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  return date;
}

/** Parses a `YYYY-MM-DD` calendar day (UTC, years 0000 to 9999); undefined when it is not a real day. */
export function parseDay(value: string): Date | undefined {
  const m = dayPattern.exec(value);
  if (!m) return undefined;
  const date = utcDate(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return toDay(date) === value ? date : undefined;
}

export function addDays(date: Date, days: number): Date {
  return new Date(date.getTime() + days * 86_400_000);
}
