import type { FastifyReply } from 'fastify';
import { periodRange } from '../core/periods.js';
import { toDay } from '../core/time.js';
import type { SiteRow } from '../db/schema.js';
import type { Actor } from '../services/actor.js';
import type { Services } from '../services/index.js';
import type { MonthlyReport } from '../services/report-pdf.js';
import { addMonths } from './components.js';
import { allPages } from './csv.js';

/** Rows of one table a whole report (share link, PDF) holds at most. */
export const reportRowLimit = 1000;

/** A `YYYY-MM` the stats service accepts as a period, or undefined. */
export function validMonth(value: string): string | undefined {
  return /^\d{4}-\d{2}$/.test(value) && periodRange(value, new Date()) ? value : undefined;
}

/**
 * The days a report covers, and the days it is compared with: a past or future month whole,
 * against the whole month before; the current month up to today, against the same days of the
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
