import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { checkedDayRange, periodRange, resolvePeriod } from '../../src/core/periods.js';

const at = (iso: string): Date => new Date(iso);

/** Runs `fn`, expecting a validation_failed AppError; returns its `fields`. */
function validationFields(fn: () => unknown): Record<string, string[]> {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(AppError);
  const error = thrown as AppError;
  expect(error.code).toBe('validation_failed');
  expect(error.status).toBe(422);
  expect(error.details.fields).toBeDefined();
  return error.details.fields!;
}

describe('periodRange: this_month', () => {
  it('on the first instant of a month is that single day', () => {
    expect(periodRange('this_month', at('2026-03-01T00:00:00Z'))).toEqual({ from: '2026-03-01', to: '2026-03-01' });
  });

  it('on the last second of a month covers the whole month', () => {
    expect(periodRange('this_month', at('2026-03-31T23:59:59Z'))).toEqual({ from: '2026-03-01', to: '2026-03-31' });
  });

  it('uses the UTC day, not a local one', () => {
    // 23:30 UTC on Feb 28 is already March 1 east of UTC: the service counts in UTC.
    expect(periodRange('this_month', at('2026-02-28T23:30:00Z'))).toEqual({ from: '2026-02-01', to: '2026-02-28' });
    expect(periodRange('this_month', at('2026-03-01T00:30:00+02:00'))).toEqual({ from: '2026-02-01', to: '2026-02-28' });
  });

  it('on the last day of a leap February', () => {
    expect(periodRange('this_month', at('2028-02-29T12:00:00Z'))).toEqual({ from: '2028-02-01', to: '2028-02-29' });
  });
});

describe('periodRange: last_month', () => {
  it('crosses the year boundary in January', () => {
    expect(periodRange('last_month', at('2027-01-05T10:00:00Z'))).toEqual({ from: '2026-12-01', to: '2026-12-31' });
  });

  it('on the first instant of January', () => {
    expect(periodRange('last_month', at('2027-01-01T00:00:00Z'))).toEqual({ from: '2026-12-01', to: '2026-12-31' });
  });

  it('is a leap February in March 2028', () => {
    expect(periodRange('last_month', at('2028-03-31T23:59:59Z'))).toEqual({ from: '2028-02-01', to: '2028-02-29' });
  });

  it('is a common February in March 2026', () => {
    expect(periodRange('last_month', at('2026-03-31T23:59:59Z'))).toEqual({ from: '2026-02-01', to: '2026-02-28' });
  });

  it('is a 30-day month when now is the 31st of a 31-day month', () => {
    expect(periodRange('last_month', at('2026-05-31T12:00:00Z'))).toEqual({ from: '2026-04-01', to: '2026-04-30' });
  });
});

describe('periodRange: last_30_days', () => {
  it('is today and the 29 days before, across a month boundary', () => {
    expect(periodRange('last_30_days', at('2026-03-15T12:00:00Z'))).toEqual({ from: '2026-02-14', to: '2026-03-15' });
  });

  it('across a year boundary', () => {
    expect(periodRange('last_30_days', at('2027-01-10T23:59:59Z'))).toEqual({ from: '2026-12-12', to: '2027-01-10' });
  });

  it('across a leap February', () => {
    expect(periodRange('last_30_days', at('2028-03-01T00:00:00Z'))).toEqual({ from: '2028-02-01', to: '2028-03-01' });
  });

  it('covers exactly 30 calendar days', () => {
    const { from, to } = periodRange('last_30_days', at('2026-07-04T06:00:00Z'))!;
    const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
    expect(days).toBe(30);
    expect(to).toBe('2026-07-04');
  });
});

describe('periodRange: YYYY-MM and YYYY-MM-DD', () => {
  it('a month is that whole month, whatever now is', () => {
    expect(periodRange('2026-10', at('2020-01-01T00:00:00Z'))).toEqual({ from: '2026-10-01', to: '2026-10-31' });
    expect(periodRange('2026-12', at('2020-01-01T00:00:00Z'))).toEqual({ from: '2026-12-01', to: '2026-12-31' });
    expect(periodRange('2026-01', at('2020-01-01T00:00:00Z'))).toEqual({ from: '2026-01-01', to: '2026-01-31' });
    expect(periodRange('2026-04', at('2020-01-01T00:00:00Z'))).toEqual({ from: '2026-04-01', to: '2026-04-30' });
  });

  it('leap and common Februaries', () => {
    const now = at('2026-06-01T00:00:00Z');
    expect(periodRange('2028-02', now)).toEqual({ from: '2028-02-01', to: '2028-02-29' });
    expect(periodRange('2026-02', now)).toEqual({ from: '2026-02-01', to: '2026-02-28' });
    expect(periodRange('2000-02', now)).toEqual({ from: '2000-02-01', to: '2000-02-29' });
    expect(periodRange('2100-02', now)).toEqual({ from: '2100-02-01', to: '2100-02-28' });
  });

  it('month 13 and month 00 are not periods', () => {
    const now = at('2026-06-01T00:00:00Z');
    expect(periodRange('2026-13', now)).toBeUndefined();
    expect(periodRange('2026-00', now)).toBeUndefined();
    expect(periodRange('2026-1', now)).toBeUndefined();
  });

  it('a month or day of the years 0000 to 0099 is that month or day, not one of the 1900s', () => {
    const now = at('2026-06-01T00:00:00Z');
    expect(periodRange('0050-01', now)).toEqual({ from: '0050-01-01', to: '0050-01-31' });
    expect(periodRange('0050-01-15', now)).toEqual({ from: '0050-01-15', to: '0050-01-15' });
    expect(periodRange('0001-01-01', now)).toEqual({ from: '0001-01-01', to: '0001-01-01' });
    expect(periodRange('0000-12', now)).toEqual({ from: '0000-12-01', to: '0000-12-31' });
    // The proleptic Gregorian calendar: 4 was a leap year, 100 was not.
    expect(periodRange('0004-02', now)).toEqual({ from: '0004-02-01', to: '0004-02-29' });
    expect(periodRange('0100-02-29', now)).toBeUndefined();
    expect(checkedDayRange('0001-01-01', '2026-12-31')).toEqual({ from: '0001-01-01', to: '2026-12-31' });
  });

  it('a day is that day', () => {
    const now = at('2026-06-01T00:00:00Z');
    expect(periodRange('2026-10-01', now)).toEqual({ from: '2026-10-01', to: '2026-10-01' });
    expect(periodRange('2028-02-29', now)).toEqual({ from: '2028-02-29', to: '2028-02-29' });
    expect(periodRange('2026-12-31', now)).toEqual({ from: '2026-12-31', to: '2026-12-31' });
  });

  it('impossible days are not periods', () => {
    const now = at('2026-06-01T00:00:00Z');
    expect(periodRange('2026-02-30', now)).toBeUndefined();
    expect(periodRange('2026-02-29', now)).toBeUndefined();
    expect(periodRange('2026-04-31', now)).toBeUndefined();
    expect(periodRange('2026-13-01', now)).toBeUndefined();
    expect(periodRange('2026-00-10', now)).toBeUndefined();
    expect(periodRange('2026-01-00', now)).toBeUndefined();
  });

  it.each([
    'this-month',
    'THIS_MONTH',
    'This_Month',
    'last_30days',
    'last_31_days',
    'next_month',
    '',
    ' ',
    '2026',
    '2026/10',
    '26-10',
    '2026-10-1',
    ' 2026-10',
    '2026-10 ',
    '2026-10\n',
    '2026-10-01T00:00:00Z',
    '2026-W40',
    '１９９９-01',
  ])('garbage %j is not a period', (value) => {
    expect(periodRange(value, at('2026-06-01T00:00:00Z'))).toBeUndefined();
  });
});

describe('resolvePeriod', () => {
  const now = at('2026-11-15T12:00:00Z');

  it('neither period nor from/to means this_month', () => {
    expect(resolvePeriod({}, now)).toEqual({ from: '2026-11-01', to: '2026-11-15' });
  });

  it('resolves each named period', () => {
    expect(resolvePeriod({ period: 'this_month' }, now)).toEqual({ from: '2026-11-01', to: '2026-11-15' });
    expect(resolvePeriod({ period: 'last_month' }, now)).toEqual({ from: '2026-10-01', to: '2026-10-31' });
    expect(resolvePeriod({ period: 'last_30_days' }, now)).toEqual({ from: '2026-10-17', to: '2026-11-15' });
    expect(resolvePeriod({ period: '2026-02' }, now)).toEqual({ from: '2026-02-01', to: '2026-02-28' });
    expect(resolvePeriod({ period: '2026-02-14' }, now)).toEqual({ from: '2026-02-14', to: '2026-02-14' });
  });

  it('from/to is an inclusive range, same day allowed', () => {
    expect(resolvePeriod({ from: '2026-10-01', to: '2026-10-31' }, now)).toEqual({ from: '2026-10-01', to: '2026-10-31' });
    expect(resolvePeriod({ from: '2026-10-05', to: '2026-10-05' }, now)).toEqual({ from: '2026-10-05', to: '2026-10-05' });
    expect(resolvePeriod({ from: '2026-12-20', to: '2027-01-10' }, now)).toEqual({ from: '2026-12-20', to: '2027-01-10' });
  });

  it('an unknown period is validation_failed on period', () => {
    expect(Object.keys(validationFields(() => resolvePeriod({ period: 'fortnight' }, now)))).toEqual(['period']);
    expect(Object.keys(validationFields(() => resolvePeriod({ period: '2026-13' }, now)))).toEqual(['period']);
    expect(Object.keys(validationFields(() => resolvePeriod({ period: '2026-00' }, now)))).toEqual(['period']);
    expect(Object.keys(validationFields(() => resolvePeriod({ period: '2026-02-30' }, now)))).toEqual(['period']);
    expect(Object.keys(validationFields(() => resolvePeriod({ period: '' }, now)))).toEqual(['period']);
  });

  it('period with from and to is validation_failed', () => {
    const fields = validationFields(() => resolvePeriod({ period: 'this_month', from: '2026-10-01', to: '2026-10-31' }, now));
    expect(Object.keys(fields)).toEqual(['period']);
    expect(fields.period!.length).toBeGreaterThan(0);
  });

  it('period with only from, or only to, is validation_failed', () => {
    expect(Object.keys(validationFields(() => resolvePeriod({ period: 'this_month', from: '2026-10-01' }, now)))).toEqual([
      'period',
    ]);
    expect(Object.keys(validationFields(() => resolvePeriod({ period: '2026-10', to: '2026-10-31' }, now)))).toEqual([
      'period',
    ]);
  });

  it('from without to names to', () => {
    expect(Object.keys(validationFields(() => resolvePeriod({ from: '2026-10-01' }, now)))).toEqual(['to']);
  });

  it('to without from names from', () => {
    expect(Object.keys(validationFields(() => resolvePeriod({ to: '2026-10-31' }, now)))).toEqual(['from']);
  });

  it('from after to names from', () => {
    expect(Object.keys(validationFields(() => resolvePeriod({ from: '2026-11-01', to: '2026-10-31' }, now)))).toEqual([
      'from',
    ]);
  });

  it('impossible from/to days are refused', () => {
    expect(Object.keys(validationFields(() => resolvePeriod({ from: '2026-02-30', to: '2026-03-01' }, now)))).toEqual([
      'from',
    ]);
    expect(Object.keys(validationFields(() => resolvePeriod({ from: '2026-02-01', to: '2026-02-29' }, now)))).toEqual([
      'to',
    ]);
  });
});

describe('checkedDayRange', () => {
  it('accepts from == to and from < to, across years', () => {
    expect(checkedDayRange('2026-10-01', '2026-10-01')).toEqual({ from: '2026-10-01', to: '2026-10-01' });
    expect(checkedDayRange('2026-12-31', '2027-01-01')).toEqual({ from: '2026-12-31', to: '2027-01-01' });
    expect(checkedDayRange('2028-02-29', '2028-03-01')).toEqual({ from: '2028-02-29', to: '2028-03-01' });
  });

  it('from > to is validation_failed on from', () => {
    const fields = validationFields(() => checkedDayRange('2027-01-01', '2026-12-31'));
    expect(Object.keys(fields)).toEqual(['from']);
  });

  it('reports every malformed field', () => {
    expect(Object.keys(validationFields(() => checkedDayRange('2026-13-01', '2026-12-01'))).sort()).toEqual(['from']);
    expect(Object.keys(validationFields(() => checkedDayRange('2026-01-01', 'tomorrow'))).sort()).toEqual(['to']);
    expect(Object.keys(validationFields(() => checkedDayRange('2026-02-30', '2026-02-31'))).sort()).toEqual(['from', 'to']);
    expect(Object.keys(validationFields(() => checkedDayRange('2026-1-1', '2026-01-02'))).sort()).toEqual(['from']);
  });
});
