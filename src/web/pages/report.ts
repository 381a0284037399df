import type { FastifyInstance } from 'fastify';
import { type DayRange, periodRange } from '../../core/periods.js';
import { toDay } from '../../core/time.js';
import { articleStatuses, type ArticleStatus } from '../../core/values.js';
import type { Page, PageMeta, PageRequest } from '../../services/pagination.js';
import { addMonths, externalLink, monthLabel, notice, queryString, pagedTable } from '../components.js';
import { idParam, pageParam, textField, type UiContext, uiOf, type WebOptions } from '../context.js';
import { allPages, sendCsv, toCsv } from '../csv.js';
import { html, type SafeHtml } from '../html.js';
import { loadMonthlyReport, reportSpan, type ReportSpan, sendPdf, validMonth } from '../report-data.js';
import { articleRows, articlesHead, backlinkRows, backlinksHead, reportOverview, reportPeriod, reportTitle, siteHeading } from '../report-view.js';
import { sendPage } from '../respond.js';

interface ReportQuery {
  month?: string;
  status?: string;
  apage?: string;
  bpage?: string;
}

const perPage = 20;

/** Rows of one table a printed report holds at most (the CSV export holds every row). */
const printRowLimit = 1000;

/** Every row of a list that has more than one page, for the printout; none when the page holds them all. */
const everyRow = <T>(meta: PageMeta, list: (page: PageRequest) => Promise<Page<T>>): Promise<T[] | undefined> =>
  meta.last_page > 1 ? allPages(list, printRowLimit) : Promise.resolve(undefined);

/** The statuses a month's articles can be filtered by: drafts have no publication date, so no month holds them. */
const datedStatuses = articleStatuses.filter((s) => s !== 'draft');

/**
 * The article filter: published by default, so that the table holds what the "Articles
 * published" card counts; `any` shows every dated article of the month.
 */
function statusChoice(value: string): ArticleStatus | 'any' {
  if (value === 'any') return 'any';
  return (datedStatuses as readonly string[]).includes(value) ? (value as ArticleStatus) : 'published';
}

/** The status filter as a query parameter: the default (published) is left out of links. */
const statusParam = (choice: ArticleStatus | 'any'): string | undefined => (choice === 'published' ? undefined : choice);

/**
 * The days of the articles table: the report's days for published articles (what the card
 * counts); the whole month for the other statuses, whose dates (scheduled ones above all) lie ahead.
 */
function articleDays(choice: ArticleStatus | 'any', month: string, span: ReportSpan, now: Date): DayRange {
  return choice === 'published' ? { from: span.from, to: span.to } : periodRange(month, now)!;
}

/** The articles table's heading, saying what the status filter keeps. */
function articlesHeading(choice: ArticleStatus | 'any', period: string): string {
  if (choice === 'published') return `Articles published in ${period}`;
  if (choice === 'any') return `Articles dated in ${period}, any status`;
  return `${choice[0]!.toUpperCase()}${choice.slice(1)} articles dated in ${period}`;
}

/**
 * Where a page sits: the first breadcrumbs ("Sites", or for staff on another account "Accounts /
 * name") and, for staff, the banner saying they may look but not change.
 */
export async function accountContext(options: WebOptions, ui: UiContext, accountId: number): Promise<{ root: SafeHtml; banner: SafeHtml }> {
  if (accountId === ui.user.accountId) return { root: html`<a href="/app">Sites</a>`, banner: html`` };
  const account = await options.services.uiQueries.account(accountId);
  const name = account?.name ?? `#${accountId}`;
  return {
    root: html`<a href="/app/staff">Accounts</a> <span aria-hidden="true">/</span> <a href="/app/staff/accounts/${accountId}">${name}</a>`,
    banner: html`<div class="notice notice-warning" role="note"><strong>Staff view, read-only.</strong> This belongs to the account “${name}”. You can look at everything, but editing and restoring are disabled.</div>`,
  };
}

/** The monthly report of one site, its CSV exports. */
export async function reportPages(app: FastifyInstance, options: WebOptions) {
  const { services } = options;
  const currentMonth = () => toDay(services.clock.now()).slice(0, 7);

  app.get<{ Params: { id: string }; Querystring: ReportQuery }>('/app/sites/:id', async (request, reply) => {
    const ui = uiOf(request);
    const siteId = idParam(request.params.id, 'site');
    const site = await services.sites.visible(ui.actor, siteId);
    const askedMonth = textField(request.query.month);
    const month = validMonth(askedMonth) ?? currentMonth();
    const choice = statusChoice(textField(request.query.status));
    const status = choice === 'any' ? undefined : choice;
    const apage = pageParam(request.query.apage);
    const bpage = pageParam(request.query.bpage);
    const previousMonth = addMonths(month, -1);
    const months = Array.from({ length: 12 }, (_, i) => addMonths(month, i - 11));
    const span = reportSpan(month, services.clock.now());
    const range = { from: span.from, to: span.to };

    const [stats, previous, series, where] = await Promise.all([
      services.stats.get(ui.actor, siteId, range),
      services.stats.get(ui.actor, siteId, { from: span.previousFrom, to: span.previousTo }),
      services.uiQueries.monthlySeries(siteId, months),
      accountContext(options, ui, site.account_id),
    ]);
    const articleRange = articleDays(choice, month, span, services.clock.now());
    const [articles, backlinks] = await Promise.all([
      services.articles.list(ui.actor, siteId, { ...articleRange, status, page: apage, per_page: perPage }),
      services.backlinks.list(ui.actor, siteId, { ...range, page: bpage, per_page: perPage }),
    ]);
    const [allArticles, allBacklinks] = await Promise.all([
      everyRow(articles.meta, (page) => services.articles.list(ui.actor, siteId, { ...articleRange, status, ...page })),
      everyRow(backlinks.meta, (page) => services.backlinks.list(ui.actor, siteId, { ...range, ...page })),
    ]);

    const here = (params: Partial<Record<keyof ReportQuery, string | number | undefined>>, anchor = '') =>
      `/app/sites/${siteId}${queryString({ month, status: statusParam(choice), apage, bpage, ...params })}${anchor}`;
    const { period } = reportPeriod(month, span);
    const articlesPeriod = choice === 'published' ? period : monthLabel(month);
    const exportQuery = queryString({ month });
    const facts = [site.industry, site.country, site.language, site.geographic_scope].filter(Boolean).join(' · ');

    return sendPage(reply, ui, {
      title: reportTitle(site, month),
      active: 'sites',
      scripts: ['/assets/vendor/chart.umd.min.js', '/assets/report.js'],
      body: html`<nav class="crumbs" aria-label="Breadcrumb">${where.root} <span aria-hidden="true">/</span> <span aria-current="page">${siteHeading(site)}</span></nav>
${where.banner}
<div class="page-head">
  <div>
    <h1>${siteHeading(site)} <span class="muted thin">· ${monthLabel(month)}</span></h1>
    <p class="muted">${site.website_url ? externalLink(site.website_url) : ''}${facts ? html` · ${facts}` : ''}</p>
  </div>
  <div class="actions no-print">
    <button type="button" class="button" data-print hidden>Print report</button>
    <a class="button" href="/app/sites/${siteId}/report.pdf${queryString({ month })}" download>Download PDF</a>
    ${site.account_id === ui.user.accountId ? html`<a class="button" href="/app/sites/${siteId}/shares" data-share-links>Share links</a>` : ''}
  </div>
</div>
${askedMonth && askedMonth !== month ? notice('warning', `“${askedMonth}” is not a month (YYYY-MM); showing ${monthLabel(month)}.`) : ''}
<form class="month-picker no-print" method="get" action="/app/sites/${siteId}">
  <a class="button small" href="${here({ month: previousMonth, apage: undefined, bpage: undefined })}" rel="prev">← ${monthLabel(previousMonth, true)}</a>
  <label for="month">Month</label>
  <input type="month" id="month" name="month" value="${month}" pattern="[0-9]{4}-[0-9]{2}" placeholder="YYYY-MM" required>
  <button type="submit" class="button small primary">Show</button>
  <a class="button small" href="${here({ month: addMonths(month, 1), apage: undefined, bpage: undefined })}" rel="next">${monthLabel(addMonths(month, 1), true)} →</a>
</form>
${reportOverview({ month, span, stats, previous, series })}
<section aria-labelledby="articles-h" id="articles" class="card">
  <div class="section-head">
    <h2 id="articles-h">${articlesHeading(choice, articlesPeriod)}</h2>
    <a class="button small no-print" href="/app/sites/${siteId}/articles.csv${queryString({ month, status: statusParam(choice) })}" download>Export CSV</a>
  </div>
  <form class="filters compact no-print" method="get" action="/app/sites/${siteId}#articles">
    <input type="hidden" name="month" value="${month}">
    <label for="status">Status</label>
    <select id="status" name="status">
      ${datedStatuses.map((s) => html`<option value="${s}"${s === choice ? html` selected` : ''}>${s}</option>`)}
      <option value="any"${choice === 'any' ? html` selected` : ''}>any status</option>
    </select>
    <button type="submit" class="button small">Filter</button>
    ${choice !== 'published' ? html`<a href="${here({ status: undefined, apage: undefined }, '#articles')}">Published only</a>` : ''}
  </form>
  ${pagedTable({
    caption: articlesHeading(choice, articlesPeriod),
    head: articlesHead,
    rows: articleRows(articles.data),
    allRows: allArticles && articleRows(allArticles),
    empty: choice === 'published' ? `No articles were published in ${period}.` : `No ${choice === 'any' ? '' : `${choice} `}articles are dated in ${articlesPeriod}.`,
    meta: articles.meta,
    urlFor: (p) => here({ apage: p }, '#articles'),
    label: 'Articles',
    phone: 'stacked',
  })}
</section>
<section aria-labelledby="backlinks-h" id="backlinks" class="card">
  <div class="section-head">
    <h2 id="backlinks-h">Backlinks acquired in ${period}</h2>
    <a class="button small no-print" href="/app/sites/${siteId}/backlinks.csv${exportQuery}" download>Export CSV</a>
  </div>
  ${pagedTable({
    caption: `Backlinks acquired in ${period}`,
    head: backlinksHead,
    rows: backlinkRows(backlinks.data),
    allRows: allBacklinks && backlinkRows(allBacklinks),
    empty: `No backlinks were acquired in ${period}.`,
    meta: backlinks.meta,
    urlFor: (p) => here({ bpage: p }, '#backlinks'),
    label: 'Backlinks',
    phone: 'stacked',
  })}
</section>`,
    });
  });

  app.get<{ Params: { id: string }; Querystring: ReportQuery }>('/app/sites/:id/report.pdf', async (request, reply) => {
    const ui = uiOf(request);
    const site = await services.sites.visible(ui.actor, idParam(request.params.id, 'site'));
    const month = validMonth(textField(request.query.month)) ?? currentMonth();
    const pdf = await services.htmlPool.renderReportPdf(ui.actor.accountId, await loadMonthlyReport(services, ui.actor, site, month));
    return sendPdf(reply, `site-${site.id}-report-${month}.pdf`, pdf);
  });

  app.get<{ Params: { id: string }; Querystring: ReportQuery }>('/app/sites/:id/articles.csv', async (request, reply) => {
    const ui = uiOf(request);
    const siteId = idParam(request.params.id, 'site');
    const month = validMonth(textField(request.query.month)) ?? currentMonth();
    const choice = statusChoice(textField(request.query.status));
    const status = choice === 'any' ? undefined : choice;
    const now = services.clock.now();
    const days = articleDays(choice, month, reportSpan(month, now), now);
    const rows = await allPages((page) => services.articles.list(ui.actor, siteId, { ...days, status, ...page }));
    const csv = await toCsv(
      ['id', 'title', 'status', 'published_at', 'target_keyword', 'word_count', 'url'],
      rows.map((a) => [a.id, a.title, a.status, a.published_at, a.target_keyword, a.word_count, a.url]),
    );
    return sendCsv(reply, `site-${siteId}-articles-${month}${choice === 'published' ? '' : `-${choice}`}.csv`, csv);
  });

  app.get<{ Params: { id: string }; Querystring: ReportQuery }>('/app/sites/:id/backlinks.csv', async (request, reply) => {
    const ui = uiOf(request);
    const siteId = idParam(request.params.id, 'site');
    const month = validMonth(textField(request.query.month)) ?? currentMonth();
    const { from, to } = reportSpan(month, services.clock.now());
    const rows = await allPages((page) => services.backlinks.list(ui.actor, siteId, { from, to, ...page }));
    const csv = await toCsv(
      ['id', 'acquired_at', 'source_domain', 'source_url', 'target_url', 'anchor_text', 'anchor_type', 'status', 'category'],
      rows.map((b) => [b.id, b.acquired_at, b.source_domain, b.source_url, b.target_url, b.anchor_text, b.anchor_type, b.status, b.category]),
    );
    return sendCsv(reply, `site-${siteId}-backlinks-${month}.csv`, csv);
  });
}
