import type { FastifyReply } from 'fastify';
import { toDay } from '../core/time.js';
import type { SiteRow } from '../db/schema.js';
import type { Actor } from '../services/actor.js';
import type { Services } from '../services/index.js';
import type { MonthlyReport } from '../services/report-pdf.js';
import { addMonths } from './components.js';
import { allPages } from './csv.js';
import { reportSpan } from './pages/report.js';

/** Rows of one table a whole report (share link, PDF) holds at most. */
export const reportRowLimit = 1000;

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
