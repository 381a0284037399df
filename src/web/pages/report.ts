import type { FastifyInstance } from 'fastify';
import { reportLocale, type ReportLocale } from '../../core/i18n/locale.js';
import { type DayRange, periodRange } from '../../core/periods.js';
import { MAX_QUERY_CHARS, MIN_QUERY_CHARS } from '../../core/text-search.js';
import type { SiteRow } from '../../db/schema.js';
import { articleStatuses, type ArticleStatus } from '../../core/values.js';
import type { Page, PageMeta, PageRequest } from '../../services/pagination.js';
import { addMonths, externalLink, notice, queryString, pagedTable } from '../components.js';
import { idParam, pageParam, textField, type UiContext, uiOf, type WebOptions } from '../context.js';
import { allPages, sendCsv, toCsv } from '../csv.js';
import { html, type SafeHtml } from '../html.js';
import { downloadMonth, loadMonthlyReport, monthOf, reportMonth, reportSpan, type ReportSpan, sendPdf } from '../report-data.js';
import { articleRows, articlesHead, backlinkRows, backlinksHead, reportOverview, reportMonthHeading, reportPeriod, reportTitle, siteHeading, siteName } from '../report-view.js';
import { sendPage } from '../respond.js';

interface ReportQuery {
  month?: string;
  status?: string;
  apage?: string;
  bpage?: string;
}

const perPage = 20;

/** The CSV exports' columns, in order: the API's fields, headed in the site's language. */
const articleColumns = ['id', 'title', 'status', 'published_at', 'target_keyword', 'word_count', 'url'] as const;
const backlinkColumns = ['id', 'acquired_at', 'source_domain', 'source_url', 'target_url', 'anchor_text', 'anchor_type', 'status', 'category'] as const;

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
function articlesHeading(choice: ArticleStatus | 'any', period: string, { t }: ReportLocale): string {
  if (choice === 'published') return t.articlesPublishedIn(period);
  if (choice === 'any') return t.articlesDatedIn(period);
  return t.statusArticlesDatedIn(t.articleStatus[choice], period);
}

/** The articles table's words when it is empty. */
function noArticles(choice: ArticleStatus | 'any', period: string, { t }: ReportLocale): string {
  if (choice === 'published') return t.noArticlesPublished(period);
  return t.noArticlesDated(choice === 'any' ? undefined : t.articleStatus[choice], period);
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

/**
 * The month picker: the month before, any month up to the current one, and the month after
 * while it has begun (`next` is absent for the current month).
 */
function monthPicker(siteId: number, month: string, currentMonth: string, locale: ReportLocale, links: { previous: string; next?: string }): SafeHtml {
  const previousMonth = addMonths(month, -1);
  const nextMonth = addMonths(month, 1);
  return html`<form class="month-picker no-print" method="get" action="/app/sites/${siteId}">
  <a class="button small" href="${links.previous}" rel="prev">← ${locale.month(previousMonth, true)}</a>
  <label for="month">${locale.t.column.month}</label>
  <input type="month" id="month" name="month" value="${month}" max="${currentMonth}" pattern="[0-9]{4}-[0-9]{2}" placeholder="YYYY-MM" required>
  <button type="submit" class="button small primary">${locale.t.show}</button>
  ${links.next ? html`<a class="button small" href="${links.next}" rel="next">${locale.month(nextMonth, true)} →</a>` : ''}
</form>`;
}

/** The monthly report of one site, its CSV exports. */
export async function reportPages(app: FastifyInstance, options: WebOptions) {
  const { services } = options;
  /** A report that cannot be shown (a month that does not exist or has not begun): why, and the way to the months there are. */
  async function noSuchMonth(ui: UiContext, site: SiteRow, problem: string): Promise<SafeHtml> {
    const where = await accountContext(options, ui, site.account_id);
    const current = monthOf(services.clock.now());
    return html`<nav class="crumbs" aria-label="Breadcrumb">${where.root} <span aria-hidden="true">/</span> <span aria-current="page">${siteHeading(site)}</span></nav>
${where.banner}
<div class="page-head"><div><h1>${siteHeading(site)}</h1></div></div>
${notice('error', html`${problem} <a href="/app/sites/${site.id}">Show ${reportLocale(site).t.soFar(reportLocale(site).month(current))}</a>.`)}
${monthPicker(site.id, current, current, reportLocale(site), { previous: `/app/sites/${site.id}${queryString({ month: addMonths(current, -1) })}` })}`;
  }

  /** The month of a download (`downloadMonth`): a 422 for one that does not exist or has not begun. */
  const askedMonth = (query: ReportQuery) => downloadMonth(textField(query.month), services.clock.now());

  app.get<{ Params: { id: string }; Querystring: ReportQuery }>('/app/sites/:id', async (request, reply) => {
    const ui = uiOf(request);
    const siteId = idParam(request.params.id, 'site');
    const site = await services.sites.visible(ui.actor, siteId);
    const locale = reportLocale(site);
    const { t } = locale;
    const checked = reportMonth(textField(request.query.month), services.clock.now());
    if ('problem' in checked) {
      return sendPage(reply, ui, { title: `${siteName(site, locale)} · no such report`, active: 'sites', body: await noSuchMonth(ui, site, checked.problem) }, 422);
    }
    const { month } = checked;
    const currentMonth = monthOf(services.clock.now());
    const nextMonth = addMonths(month, 1);
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
    const { period } = reportPeriod(month, span, locale);
    const articlesPeriod = choice === 'published' ? period : locale.month(month);
    const exportQuery = queryString({ month });
    const facts = [site.industry, site.country, site.language, site.geographic_scope].filter(Boolean).join(' · ');

    return sendPage(reply, ui, {
      title: reportTitle(site, month, span, locale),
      active: 'sites',
      lang: locale.language,
      scripts: ['/assets/vendor/chart.umd.min.js', '/assets/report.js'],
      body: html`<nav class="crumbs" aria-label="Breadcrumb">${where.root} <span aria-hidden="true">/</span> <span aria-current="page">${siteHeading(site, locale)}</span></nav>
${where.banner}
<div class="page-head">
  <div>
    <h1>${siteHeading(site, locale)} <span class="muted thin">· ${reportMonthHeading(month, span, locale)}</span></h1>
    <p class="muted">${site.website_url ? externalLink(site.website_url) : ''}${facts ? html` · ${facts}` : ''}</p>
  </div>
  <div class="actions no-print">
    <button type="button" class="button" data-print hidden>${t.printReport}</button>
    <a class="button" href="/app/sites/${siteId}/report.pdf${queryString({ month })}" download>${t.downloadPdf}</a>
    ${site.account_id === ui.user.accountId ? html`<a class="button" href="/app/sites/${siteId}/shares" data-share-links>${t.shareLinks}</a>` : ''}
    <form method="get" action="/app/sites/${siteId}/search" role="search" class="inline-search">
      <input name="q" type="search" minlength="${MIN_QUERY_CHARS}" maxlength="${MAX_QUERY_CHARS}" required aria-label="${t.findInArticles}" placeholder="${t.findInArticles}">
      <button type="submit" class="button">${t.findInArticles}</button>
    </form>
  </div>
</div>
${monthPicker(siteId, month, currentMonth, locale, {
  previous: here({ month: previousMonth, apage: undefined, bpage: undefined }),
  next: nextMonth <= currentMonth ? here({ month: nextMonth, apage: undefined, bpage: undefined }) : undefined,
})}
${reportOverview({ month, span, stats, previous, series }, locale)}
<section aria-labelledby="articles-h" id="articles" class="card">
  <div class="section-head">
    <h2 id="articles-h">${articlesHeading(choice, articlesPeriod, locale)}</h2>
    <a class="button small no-print" href="/app/sites/${siteId}/articles.csv${queryString({ month, status: statusParam(choice) })}" download>${t.exportCsv}</a>
  </div>
  <form class="filters compact no-print" method="get" action="/app/sites/${siteId}#articles">
    <input type="hidden" name="month" value="${month}">
    <label for="status">${t.column.status}</label>
    <select id="status" name="status">
      ${datedStatuses.map((s) => html`<option value="${s}"${s === choice ? html` selected` : ''}>${t.articleStatus[s]}</option>`)}
      <option value="any"${choice === 'any' ? html` selected` : ''}>${t.anyStatus}</option>
    </select>
    <button type="submit" class="button small">${t.filter}</button>
    ${choice !== 'published' ? html`<a href="${here({ status: undefined, apage: undefined }, '#articles')}">${t.publishedOnly}</a>` : ''}
  </form>
  ${pagedTable({
    caption: articlesHeading(choice, articlesPeriod, locale),
    head: articlesHead(locale),
    rows: articleRows(articles.data, locale),
    allRows: allArticles && articleRows(allArticles, locale),
    empty: noArticles(choice, articlesPeriod, locale),
    meta: articles.meta,
    urlFor: (p) => here({ apage: p }, '#articles'),
    kind: 'articles',
    locale,
    phone: 'stacked',
  })}
</section>
<section aria-labelledby="backlinks-h" id="backlinks" class="card">
  <div class="section-head">
    <h2 id="backlinks-h">${t.backlinksAcquiredIn(period)}</h2>
    <a class="button small no-print" href="/app/sites/${siteId}/backlinks.csv${exportQuery}" download>${t.exportCsv}</a>
  </div>
  ${pagedTable({
    caption: t.backlinksAcquiredIn(period),
    head: backlinksHead(locale),
    rows: backlinkRows(backlinks.data, locale),
    allRows: allBacklinks && backlinkRows(allBacklinks, locale),
    empty: t.noBacklinksAcquired(period),
    meta: backlinks.meta,
    urlFor: (p) => here({ bpage: p }, '#backlinks'),
    kind: 'backlinks',
    locale,
    phone: 'stacked',
  })}
</section>`,
    });
  });

  app.get<{ Params: { id: string }; Querystring: ReportQuery }>('/app/sites/:id/report.pdf', async (request, reply) => {
    const ui = uiOf(request);
    const site = await services.sites.visible(ui.actor, idParam(request.params.id, 'site'));
    const month = askedMonth(request.query);
    const pdf = await services.htmlPool.renderReportPdf(ui.actor.accountId, await loadMonthlyReport(services, ui.actor, site, month));
    return sendPdf(reply, `site-${site.id}-report-${month}.pdf`, pdf);
  });

  app.get<{ Params: { id: string }; Querystring: ReportQuery }>('/app/sites/:id/articles.csv', async (request, reply) => {
    const ui = uiOf(request);
    const siteId = idParam(request.params.id, 'site');
    const { t } = reportLocale(await services.sites.visible(ui.actor, siteId));
    const month = askedMonth(request.query);
    const choice = statusChoice(textField(request.query.status));
    const status = choice === 'any' ? undefined : choice;
    const now = services.clock.now();
    const days = articleDays(choice, month, reportSpan(month, now), now);
    const rows = await allPages((page) => services.articles.list(ui.actor, siteId, { ...days, status, ...page }));
    const csv = await toCsv(
      articleColumns.map((column) => t.csv.articles[column]),
      rows.map((a) => [a.id, a.title, a.status, a.published_at, a.target_keyword, a.word_count, a.url]),
    );
    return sendCsv(reply, `site-${siteId}-articles-${month}${choice === 'published' ? '' : `-${choice}`}.csv`, csv);
  });

  app.get<{ Params: { id: string }; Querystring: ReportQuery }>('/app/sites/:id/backlinks.csv', async (request, reply) => {
    const ui = uiOf(request);
    const siteId = idParam(request.params.id, 'site');
    const { t } = reportLocale(await services.sites.visible(ui.actor, siteId));
    const month = askedMonth(request.query);
    const { from, to } = reportSpan(month, services.clock.now());
    const rows = await allPages((page) => services.backlinks.list(ui.actor, siteId, { from, to, ...page }));
    const csv = await toCsv(
      backlinkColumns.map((column) => t.csv.backlinks[column]),
      rows.map((b) => [b.id, b.acquired_at, b.source_domain, b.source_url, b.target_url, b.anchor_text, b.anchor_type, b.status, b.category]),
    );
    return sendCsv(reply, `site-${siteId}-backlinks-${month}.csv`, csv);
  });
}
