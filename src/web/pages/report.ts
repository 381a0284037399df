import type { FastifyInstance } from 'fastify';
import { periodRange } from '../../core/periods.js';
import { toDay } from '../../core/time.js';
import { articleStatuses, type ArticleStatus } from '../../core/values.js';
import type { Article } from '../../services/articles.js';
import type { Backlink } from '../../services/backlinks.js';
import type { SiteRow } from '../../db/schema.js';
import type { Stats } from '../../services/stats.js';
import type { MonthCounts } from '../../services/ui-queries.js';
import {
  addMonths,
  badge,
  day,
  delta,
  externalLink,
  monthLabel,
  notice,
  pager,
  queryString,
  tableWrap,
} from '../components.js';
import { idParam, pageParam, textField, type UiContext, uiOf, type WebOptions } from '../context.js';
import { allPages, sendCsv, toCsv } from '../csv.js';
import { html, type SafeHtml } from '../html.js';
import { sendPage } from '../respond.js';

interface ReportQuery {
  month?: string;
  status?: string;
  apage?: string;
  bpage?: string;
}

const perPage = 20;

/** A `YYYY-MM` the stats service accepts as a period, or undefined. */
export function validMonth(value: string): string | undefined {
  return /^\d{4}-\d{2}$/.test(value) && periodRange(value, new Date()) ? value : undefined;
}

const validStatus = (value: string): ArticleStatus | undefined =>
  (articleStatuses as readonly string[]).includes(value) ? (value as ArticleStatus) : undefined;

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

export function siteHeading(site: SiteRow): SafeHtml {
  return html`${site.name ?? `Site ${site.id}`}`;
}

function statTile(label: string, current: number, previous: number, previousMonth: string, id: string): SafeHtml {
  return html`<div class="stat" data-stat="${id}">
  <dt>${label}</dt>
  <dd><span class="stat-value" data-stat-value="${id}">${current}</span>
    <span class="stat-compare">${delta(current, previous)} <span class="muted">vs ${monthLabel(previousMonth, true)} (${previous})</span></span></dd>
</div>`;
}

function statTiles(stats: Stats, previous: Stats, previousMonth: string): SafeHtml {
  return html`<dl class="stats">
  ${statTile('Articles published', stats.articles_published, previous.articles_published, previousMonth, 'articles_published')}
  ${statTile('Backlinks acquired', stats.backlinks_acquired, previous.backlinks_acquired, previousMonth, 'backlinks_acquired')}
  ${statTile('Industry backlinks', stats.backlinks_industry, previous.backlinks_industry, previousMonth, 'backlinks_industry')}
  ${statTile('Local backlinks', stats.backlinks_local, previous.backlinks_local, previousMonth, 'backlinks_local')}
</dl>`;
}

/** The two charts (drawn by /assets/report.js from data-series) and the same numbers as a table. */
function charts(series: MonthCounts[]): SafeHtml {
  const data = JSON.stringify({
    labels: series.map((m) => monthLabel(m.month, true)),
    months: series.map((m) => m.month),
    industry: series.map((m) => m.backlinks_industry),
    local: series.map((m) => m.backlinks_local),
    articles: series.map((m) => m.articles_published),
  });
  const span = `${monthLabel(series[0]!.month)} to ${monthLabel(series[series.length - 1]!.month)}`;
  return html`<div class="chart-grid">
  <figure class="card chart-card">
    <figcaption><h3>Backlinks per month</h3><p class="muted small">Industry and local, ${span}</p></figcaption>
    <div class="chart-box"><canvas id="backlinks-chart" data-chart="backlinks" data-series="${data}" role="img" aria-label="Bar chart of backlinks acquired per month, industry and local, ${span}. The same numbers are in the table below.">Backlinks per month; see the table below.</canvas></div>
  </figure>
  <figure class="card chart-card">
    <figcaption><h3>Articles published per month</h3><p class="muted small">${span}</p></figcaption>
    <div class="chart-box"><canvas id="articles-chart" data-chart="articles" data-series="${data}" role="img" aria-label="Chart of articles published per month, ${span}. The same numbers are in the table below.">Articles per month; see the table below.</canvas></div>
  </figure>
</div>
<details class="chart-data">
  <summary>Show the last 12 months as a table</summary>
  ${tableWrap(
    'The last 12 months',
    html`<tr><th scope="col">Month</th><th scope="col" class="num">Articles published</th><th scope="col" class="num">Industry backlinks</th><th scope="col" class="num">Local backlinks</th><th scope="col" class="num">All backlinks</th></tr>`,
    series.map(
      (m) => html`<tr><th scope="row">${monthLabel(m.month)}</th><td class="num">${m.articles_published}</td><td class="num">${m.backlinks_industry}</td><td class="num">${m.backlinks_local}</td><td class="num">${m.backlinks_industry + m.backlinks_local}</td></tr>`,
    ),
    'No data.',
  )}
</details>`;
}

function articleRows(articles: Article[]): SafeHtml[] {
  return articles.map(
    (a) => html`<tr>
  <td class="wrap"><a href="/app/articles/${a.id}">${a.title || `Untitled article ${a.id}`}</a></td>
  <td>${badge(a.status)}</td>
  <td>${day(a.published_at)}</td>
  <td>${a.target_keyword ?? ''}</td>
  <td class="num">${a.word_count ?? ''}</td>
</tr>`,
  );
}

/** A target URL shown as its path: the site is the same for every row. */
function targetPath(url: string | null): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    const path = `${parsed.pathname}${parsed.search}`;
    return path === '/' ? '/ (home page)' : path;
  } catch {
    return url;
  }
}

function backlinkRows(backlinks: Backlink[]): SafeHtml[] {
  return backlinks.map(
    (b) => html`<tr>
  <td>${day(b.acquired_at)}</td>
  <td>${externalLink(b.source_url, b.source_domain ?? b.source_url)}</td>
  <td class="wrap">${b.anchor_text ?? ''}</td>
  <td>${b.anchor_type ?? ''}</td>
  <td>${badge(b.category)}</td>
  <td>${badge(b.status)}</td>
  <td class="wrap">${externalLink(b.target_url, targetPath(b.target_url))}</td>
</tr>`,
  );
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
    const status = validStatus(textField(request.query.status));
    const apage = pageParam(request.query.apage);
    const bpage = pageParam(request.query.bpage);
    const previousMonth = addMonths(month, -1);
    const months = Array.from({ length: 12 }, (_, i) => addMonths(month, i - 11));

    const [stats, previous, series, where] = await Promise.all([
      services.stats.get(ui.actor, siteId, { period: month }),
      services.stats.get(ui.actor, siteId, { period: previousMonth }),
      services.uiQueries.monthlySeries(siteId, months),
      accountContext(options, ui, site.account_id),
    ]);
    const range = { from: stats.from, to: stats.to };
    const [articles, backlinks] = await Promise.all([
      services.articles.list(ui.actor, siteId, { ...range, status, page: apage, per_page: perPage }),
      services.backlinks.list(ui.actor, siteId, { ...range, page: bpage, per_page: perPage }),
    ]);

    const here = (params: Partial<Record<keyof ReportQuery, string | number | undefined>>, anchor = '') =>
      `/app/sites/${siteId}${queryString({ month, status, apage, bpage, ...params })}${anchor}`;
    const exportQuery = queryString({ month });
    const facts = [site.industry, site.country, site.language, site.geographic_scope].filter(Boolean).join(' · ');

    return sendPage(reply, ui, {
      title: `${site.name ?? `Site ${site.id}`} · ${monthLabel(month)}`,
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
<section aria-labelledby="summary-h" class="report-summary">
  <h2 id="summary-h">Summary <span class="muted thin small">${stats.from} to ${stats.to}</span></h2>
  ${statTiles(stats, previous, previousMonth)}
</section>
<section aria-labelledby="trend-h">
  <h2 id="trend-h">The last 12 months</h2>
  ${charts(series)}
</section>
<section aria-labelledby="articles-h" id="articles" class="card">
  <div class="section-head">
    <h2 id="articles-h">Articles published in ${monthLabel(month)}</h2>
    <a class="button small no-print" href="/app/sites/${siteId}/articles.csv${queryString({ month, status })}" download>Export CSV</a>
  </div>
  <form class="filters compact no-print" method="get" action="/app/sites/${siteId}#articles">
    <input type="hidden" name="month" value="${month}">
    <label for="status">Status</label>
    <select id="status" name="status">
      <option value="">Any status</option>
      ${articleStatuses.map((s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${s}</option>`)}
    </select>
    <button type="submit" class="button small">Filter</button>
    ${status ? html`<a href="${here({ status: undefined, apage: undefined }, '#articles')}">Clear</a>` : ''}
  </form>
  ${tableWrap(
    `Articles of ${monthLabel(month)}`,
    html`<tr><th scope="col">Title</th><th scope="col">Status</th><th scope="col">Published</th><th scope="col">Target keyword</th><th scope="col" class="num">Words</th></tr>`,
    articleRows(articles.data),
    status ? `No ${status} articles in ${monthLabel(month)}.` : `No articles were published in ${monthLabel(month)}.`,
  )}
  ${pager(articles.meta, (p) => here({ apage: p }, '#articles'), 'Articles')}
</section>
<section aria-labelledby="backlinks-h" id="backlinks" class="card">
  <div class="section-head">
    <h2 id="backlinks-h">Backlinks acquired in ${monthLabel(month)}</h2>
    <a class="button small no-print" href="/app/sites/${siteId}/backlinks.csv${exportQuery}" download>Export CSV</a>
  </div>
  ${tableWrap(
    `Backlinks of ${monthLabel(month)}`,
    html`<tr><th scope="col">Acquired</th><th scope="col">Source</th><th scope="col">Anchor text</th><th scope="col">Anchor type</th><th scope="col">Category</th><th scope="col">Status</th><th scope="col">Target page</th></tr>`,
    backlinkRows(backlinks.data),
    `No backlinks were acquired in ${monthLabel(month)}.`,
  )}
  ${pager(backlinks.meta, (p) => here({ bpage: p }, '#backlinks'), 'Backlinks')}
</section>`,
    });
  });

  app.get<{ Params: { id: string }; Querystring: ReportQuery }>('/app/sites/:id/articles.csv', async (request, reply) => {
    const ui = uiOf(request);
    const siteId = idParam(request.params.id, 'site');
    const month = validMonth(textField(request.query.month)) ?? currentMonth();
    const status = validStatus(textField(request.query.status));
    const range = periodRange(month, services.clock.now())!;
    const rows = await allPages((page) => services.articles.list(ui.actor, siteId, { ...range, status, ...page }));
    const csv = toCsv(
      ['id', 'title', 'status', 'published_at', 'target_keyword', 'word_count', 'url'],
      rows.map((a) => [a.id, a.title, a.status, a.published_at, a.target_keyword, a.word_count, a.url]),
    );
    return sendCsv(reply, `site-${siteId}-articles-${month}${status ? `-${status}` : ''}.csv`, csv);
  });

  app.get<{ Params: { id: string }; Querystring: ReportQuery }>('/app/sites/:id/backlinks.csv', async (request, reply) => {
    const ui = uiOf(request);
    const siteId = idParam(request.params.id, 'site');
    const month = validMonth(textField(request.query.month)) ?? currentMonth();
    const range = periodRange(month, services.clock.now())!;
    const rows = await allPages((page) => services.backlinks.list(ui.actor, siteId, { ...range, ...page }));
    const csv = toCsv(
      ['id', 'acquired_at', 'source_domain', 'source_url', 'target_url', 'anchor_text', 'anchor_type', 'status', 'category'],
      rows.map((b) => [b.id, b.acquired_at, b.source_domain, b.source_url, b.target_url, b.anchor_text, b.anchor_type, b.status, b.category]),
    );
    return sendCsv(reply, `site-${siteId}-backlinks-${month}.csv`, csv);
  });
}
