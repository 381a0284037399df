import type { FastifyReply } from 'fastify';
import { validationFailed } from '../core/errors.js';
import { periodRange } from '../core/periods.js';
import { toDay } from '../core/time.js';
import type { SiteRow } from '../db/schema.js';
import type { Actor } from '../services/actor.js';
import type { Services } from '../services/index.js';
import type { MonthlyReport } from '../services/report-pdf.js';
import { addMonths, monthLabel } from './components.js';
import { allPages } from './csv.js';

/** Rows of one table a whole report (share link, PDF) holds at most. */
export const reportRowLimit = 1000;

/** The current UTC month, `YYYY-MM`, of the service's clock. */
export const monthOf = (now: Date): string => toDay(now).slice(0, 7);

/**
 * The month a report shows: the one asked for (`YYYY-MM`) up to the current month, or the
 * current month when none is asked. A month that does not exist or has not begun has no report:
 * the problem says why, and no other month is shown instead.
 */
export function reportMonth(asked: string, now: Date): { month: string } | { problem: string } {
  const current = monthOf(now);
  if (asked === '') return { month: current };
  if (!/^\d{4}-\d{2}$/.test(asked) || !periodRange(asked, now)) return { problem: `“${asked}” is not a month: give one as YYYY-MM, such as ${current}.` };
  if (asked > current) return { problem: `${monthLabel(asked)} has not begun yet: the latest report is ${monthLabel(current)}, so far.` };
  return { month: asked };
}

/** `reportMonth` for a download: a month without a report is a 422 naming `month`. */
export function downloadMonth(asked: string, now: Date): string {
  const checked = reportMonth(asked, now);
  if ('problem' in checked) throw validationFailed({ month: [checked.problem] });
  return checked.month;
}

/**
 * The days a report covers, and the days it is compared with: a past month whole, against the
 * whole month before; the current month up to today, against the same days of the
 * month before (the 1st to the 23rd against the 1st to the 23rd, or to its last day if shorter).
 */
export interface ReportSpan {
  from: string;
  to: string;
  previousFrom: string;
  previousTo: string;
  toDate: boolean;
}

export function reportSpan(month: string, now: Date): ReportSpan {
  const whole = periodRange(month, now)!;
  const previous = periodRange(addMonths(month, -1), now)!;
  const today = toDay(now);
  if (today.slice(0, 7) !== month) return { ...whole, previousFrom: previous.from, previousTo: previous.to, toDate: false };
  const lastDay = Math.min(Number(today.slice(8)), Number(previous.to.slice(8)));
  return { from: whole.from, to: today, previousFrom: previous.from, previousTo: `${previous.to.slice(0, 8)}${String(lastDay).padStart(2, '0')}`, toDate: true };
}

/**
 * One site's monthly report whole, as the report page computes it: the summary against the month
 * before, the 12 months to it, the articles published and the backlinks acquired (every row).
 */
export async function loadMonthlyReport(services: Services, actor: Actor, site: SiteRow, month: string): Promise<MonthlyReport> {
  const span = reportSpan(month, services.clock.now());
  const range = { from: span.from, to: span.to };
  const months = Array.from({ length: 12 }, (_, i) => addMonths(month, i - 11));
  const [stats, previous, series, articles, backlinks] = await Promise.all([
    services.stats.get(actor, site.id, range),
    services.stats.get(actor, site.id, { from: span.previousFrom, to: span.previousTo }),
    services.uiQueries.monthlySeries(site.id, months),
    allPages((page) => services.articles.list(actor, site.id, { ...range, status: 'published', ...page }), reportRowLimit),
    allPages((page) => services.backlinks.list(actor, site.id, { ...range, ...page }), reportRowLimit),
  ]);
  return { site, month, span, stats, previous, series, articles, backlinks, generatedAt: toDay(services.clock.now()) };
}

/** A PDF as a download. */
export function sendPdf(reply: FastifyReply, filename: string, pdf: Buffer): FastifyReply {
  return reply.type('application/pdf').header('content-disposition', `attachment; filename="${filename}"`).header('cache-control', 'no-store').send(pdf);
}
