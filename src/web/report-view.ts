import { reportPalette } from '../core/report-palette.js';
import type { SiteRow } from '../db/schema.js';
import type { Article } from '../services/articles.js';
import type { Backlink } from '../services/backlinks.js';
import type { MonthlyReport } from '../services/report-pdf.js';
import type { Stats } from '../services/stats.js';
import type { MonthCounts } from '../services/ui-queries.js';
import { addMonths, badge, breakableAddress, day, delta, externalLink, monthLabel, tableWrap } from './components.js';
import { html, type SafeHtml } from './html.js';
import type { ReportSpan } from './report-data.js';

// The monthly report's markup that the report page and a share link both show.

/** Days of one month as "1–23 Nov 2026" (or "1 Nov 2026"). */
function daysLabel(from: string, to: string): string {
  const first = Number(from.slice(8));
  const last = Number(to.slice(8));
  return `${first === last ? first : `${first}–${last}`} ${monthLabel(from.slice(0, 7), true)}`;
}

/** What the numbers of the page cover and what they are compared with, in words. */
function spanNote(month: string, span: ReportSpan): string {
  const previousMonth = monthLabel(addMonths(month, -1));
  return span.toDate
    ? `${monthLabel(month)} so far: ${daysLabel(span.from, span.to)}, compared with the same days of ${previousMonth} (${daysLabel(span.previousFrom, span.previousTo)}).`
    : `The whole month, compared with the whole of ${previousMonth}.`;
}

export function siteHeading(site: SiteRow): SafeHtml {
  return html`${site.name ?? `Site ${site.id}`}`;
}

function statTile(label: string, current: number, previous: number, compared: string, id: string): SafeHtml {
  return html`<div class="stat" data-stat="${id}">
  <dt>${label}</dt>
  <dd><span class="stat-value" data-stat-value="${id}">${current}</span>
    <span class="stat-compare">${delta(current, previous)} <span class="muted">vs ${compared} (${previous})</span></span></dd>
</div>`;
}

function statTiles(stats: Stats, previous: Stats, compared: string): SafeHtml {
  return html`<dl class="stats">
  ${statTile('Articles published', stats.articles_published, previous.articles_published, compared, 'articles_published')}
  ${statTile('Backlinks acquired', stats.backlinks_acquired, previous.backlinks_acquired, compared, 'backlinks_acquired')}
  ${statTile('Industry backlinks', stats.backlinks_industry, previous.backlinks_industry, compared, 'backlinks_industry')}
  ${statTile('Local backlinks', stats.backlinks_local, previous.backlinks_local, compared, 'backlinks_local')}
</dl>`;
}

/** Under the current month in the charts: its numbers are of the days so far, not of a whole month. */
const partialMonthNote = 'so far';

/**
 * The two charts (drawn by /assets/report.js from data-series, in the palette the PDF uses too)
 * and the same numbers as a table. `partialMonth`, the current month reported to date, is drawn
 * hatched and noted "so far".
 */
function charts(series: MonthCounts[], partialMonth: string | undefined): SafeHtml {
  const data = JSON.stringify({
    labels: series.map((m) => monthLabel(m.month, true)),
    months: series.map((m) => m.month),
    partial: series.findIndex((m) => m.month === partialMonth),
    partialNote: partialMonthNote,
    colours: reportPalette,
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

/** The articles table's columns: its head, and each cell's label where a phone stacks the rows. */
const articleColumns = { title: 'Title', status: 'Status', date: 'Date', keyword: 'Target keyword', words: 'Words' } as const;

/** Rows of the articles table; `linked` links each title to its editor (never on a share link). */
export function articleRows(articles: Article[], linked = true): SafeHtml[] {
  return articles.map(
    (a) => html`<tr>
  <td class="wrap row-title" data-label="${articleColumns.title}">${linked ? html`<a href="/app/articles/${a.id}">${a.title || `Untitled article ${a.id}`}</a>` : a.title || `Untitled article ${a.id}`}</td>
  <td data-label="${articleColumns.status}">${badge(a.status)}</td>
  <td data-label="${articleColumns.date}">${day(a.published_at)}</td>
  <td data-label="${articleColumns.keyword}">${a.target_keyword ?? ''}</td>
  <td class="num" data-label="${articleColumns.words}">${a.word_count ?? ''}</td>
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

/** The backlinks table's columns: its head, and each cell's label where a phone stacks the rows. */
const backlinkColumns = {
  acquired: 'Acquired',
  source: 'Source',
  anchor: 'Anchor text',
  anchorType: 'Anchor type',
  category: 'Category',
  status: 'Status',
  target: 'Target page',
} as const;

export function backlinkRows(backlinks: Backlink[]): SafeHtml[] {
  return backlinks.map(
    (b) => html`<tr>
  <td data-label="${backlinkColumns.acquired}">${day(b.acquired_at)}</td>
  <td class="source" data-label="${backlinkColumns.source}">${externalLink(b.source_url, breakableAddress(b.source_domain ?? b.source_url ?? ''))}</td>
  <td class="wrap" data-label="${backlinkColumns.anchor}">${breakableAddress(b.anchor_text ?? '')}</td>
  <td data-label="${backlinkColumns.anchorType}">${b.anchor_type ?? ''}</td>
  <td data-label="${backlinkColumns.category}">${badge(b.category)}</td>
  <td data-label="${backlinkColumns.status}">${badge(b.status)}</td>
  <td class="wrap" data-label="${backlinkColumns.target}">${externalLink(b.target_url, b.target_url ? breakableAddress(targetPath(b.target_url)!) : null)}</td>
</tr>`,
  );
}

/** A report page's title: the site and the month. */
export const reportTitle = (site: SiteRow, month: string): string => `${site.name ?? `Site ${site.id}`} · ${monthLabel(month)}`;

/** The report's days in words ("Nov 2026", or "Dec 2026 so far") and the days its numbers are compared with. */
export function reportPeriod(month: string, span: ReportSpan): { period: string; compared: string } {
  return {
    period: span.toDate ? `${monthLabel(month)} so far` : monthLabel(month),
    compared: span.toDate ? daysLabel(span.previousFrom, span.previousTo) : monthLabel(addMonths(month, -1), true),
  };
}

/** The summary (against the days compared with) and the charts of the last 12 months. */
export function reportOverview({ month, span, stats, previous, series }: Pick<MonthlyReport, 'month' | 'span' | 'stats' | 'previous' | 'series'>): SafeHtml {
  return html`<section aria-labelledby="summary-h" class="report-summary">
  <h2 id="summary-h">Summary <span class="muted thin small">${stats.from} to ${stats.to}</span></h2>
  <p class="muted small" data-span-note>${spanNote(month, span)}</p>
  ${statTiles(stats, previous, reportPeriod(month, span).compared)}
</section>
<section aria-labelledby="trend-h">
  <h2 id="trend-h">The last 12 months</h2>
  ${charts(series, span.toDate ? month : undefined)}
</section>`;
}

export const articlesHead = html`<tr>${Object.entries(articleColumns).map(([name, label]) => html`<th scope="col"${name === 'words' ? html` class="num"` : ''}>${label}</th>`)}</tr>`;

export const backlinksHead = html`<tr>${Object.values(backlinkColumns).map((label) => html`<th scope="col">${label}</th>`)}</tr>`;
