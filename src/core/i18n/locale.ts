import { de } from './de.js';
import { es } from './es.js';
import { fr } from './fr.js';
import { it } from './it.js';
import { en, type ReportMessages } from './messages.js';
import { nl } from './nl.js';

const catalogues = { en, de, es, fr, nl, it } satisfies Record<string, ReportMessages>;

/** The languages a report speaks; any other site language gets English. */
export type ReportLanguage = keyof typeof catalogues;
export const reportLanguages = Object.keys(catalogues) as ReportLanguage[];

/** A report's language: its words, and its months, days and numbers as Intl writes them there (always in UTC). */
export interface ReportLocale {
  /** For `lang` attributes. */
  language: ReportLanguage;
  /** What Intl formats with: the language, and the region of the site's tag or else its country ("de-AT"). */
  tag: string;
  t: ReportMessages;
  /** `YYYY-MM` as "November 2026" (or "Nov 2026"). */
  month(month: string, short?: boolean): string;
  /** A `YYYY-MM-DD` day (or a timestamp's day) as "Nov 3, 2026", "03.11.2026"… */
  day(value: string): string;
  /** Two `YYYY-MM-DD` days as one range: "Nov 1 – 23, 2026", "01.–23. Nov. 2026"… */
  days(from: string, to: string): string;
  number(value: number): string;
  /** A difference with its sign always shown: "+3", "−2", "±0". */
  signed(value: number): string;
  /** A share (0.33) as "33%", "33 %"… */
  percent(share: number): string;
}

const utcDay = (value: string): Date | undefined => {
  const m = /^(\d{4})-(\d{2})(?:-(\d{2}))?/.exec(value);
  if (!m) return undefined;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, m[3] ? Number(m[3]) : 1));
  return Number.isNaN(date.getTime()) ? undefined : date;
};

function makeLocale(language: ReportLanguage, tag: string): ReportLocale {
  const monthLong = new Intl.DateTimeFormat(tag, { month: 'long', year: 'numeric', timeZone: 'UTC' });
  const monthShort = new Intl.DateTimeFormat(tag, { month: 'short', year: 'numeric', timeZone: 'UTC' });
  const dayFormat = new Intl.DateTimeFormat(tag, { dateStyle: 'medium', timeZone: 'UTC' });
  const rangeFormat = new Intl.DateTimeFormat(tag, { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
  const numberFormat = new Intl.NumberFormat(tag, { maximumFractionDigits: 0 });
  const percentFormat = new Intl.NumberFormat(tag, { style: 'percent', maximumFractionDigits: 0 });
  const number = (value: number) => numberFormat.format(value);
  return {
    language,
    tag,
    t: catalogues[language],
    month: (month, short = false) => {
      const date = utcDay(month);
      return date ? (short ? monthShort : monthLong).format(date) : month;
    },
    day: (value) => {
      const date = utcDay(value);
      return date ? dayFormat.format(date) : value;
    },
    days: (from, to) => {
      const [start, end] = [utcDay(from), utcDay(to)];
      if (!start || !end) return `${from} – ${to}`;
      return start.getTime() === end.getTime() ? rangeFormat.format(start) : rangeFormat.formatRange(start, end);
    },
    number,
    signed: (value) => `${value > 0 ? '+' : value < 0 ? '−' : '±'}${number(Math.abs(value))}`,
    percent: (share) => percentFormat.format(share),
  };
}

const made = new Map<string, ReportLocale>();

/**
 * The locale of a site's reports, from `Site.language` ("de", "de-AT", "pt-BR"…) and
 * `Site.country`: a language without a catalogue falls back to English; the region (of the tag,
 * else the country) picks the variant Intl formats with, "en-GB" for "3 Nov 2026".
 * Formatters are made on a site's first report, not at start: ICU's data costs the process
 * 5–7 MB, which a server that renders no report never pays.
 */
export function reportLocale(site: { language: string | null; country: string | null }): ReportLocale {
  const [primary = '', tagRegion] = (site.language ?? '').trim().split(/[-_]/);
  const language = reportLanguages.find((l) => l === primary.toLowerCase()) ?? 'en';
  const region = [tagRegion, site.country].find((r) => r !== undefined && r !== null && /^[A-Za-z]{2}$/.test(r));
  const tag = region ? Intl.getCanonicalLocales(`${language}-${region}`)[0]! : language;
  let locale = made.get(tag);
  if (!locale) {
    locale = makeLocale(language, tag);
    made.set(tag, locale);
  }
  return locale;
}
