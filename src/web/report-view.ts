import type { ReportLocale } from '../core/i18n/locale.js';
import { en, type ReportMeasure } from '../core/i18n/messages.js';
import type { SiteRow } from '../db/schema.js';
import type { Article } from '../services/articles.js';
import type { Backlink } from '../services/backlinks.js';
import type { MonthlyReport } from '../services/report-pdf.js';
import type { Stats } from '../services/stats.js';
import type { MonthCounts } from '../services/ui-queries.js';
import { addMonths, badge, day, delta, externalLink, tableWrap } from './components.js';
import { html, type SafeHtml } from './html.js';
import type { ReportSpan } from './report-data.js';

// The monthly report's markup that the report page and a share link both show, in the site's
// language (`reportLocale`).

/** What the numbers of the page cover and what they are compared with, in words. */
function spanNote(month: string, span: ReportSpan, locale: ReportLocale): string {
  const previousMonth = locale.month(addMonths(month, -1));
  return span.toDate
    ? locale.t.spanToDate(locale.month(month), locale.days(span.from, span.to), previousMonth, locale.days(span.previousFrom, span.previousTo))
    : locale.t.spanWhole(previousMonth);
}

/** A site's name, or its number (in the report's words) when it has none. */
export const siteName = (site: SiteRow, locale?: ReportLocale): string => site.name ?? (locale?.t ?? en).untitledSite(site.id);

export function siteHeading(site: SiteRow, locale?: ReportLocale): SafeHtml {
  return html`${siteName(site, locale)}`;
}

function statTile(id: ReportMeasure, stats: Stats, previous: Stats, compared: string, locale: ReportLocale): SafeHtml {
  const [now, before] = [stats[id], previous[id]];
  return html`<div class="stat" data-stat="${id}">
  <dt>${locale.t.measures[id]}</dt>
  <dd><span class="stat-value" data-stat-value="${id}">${locale.number(now)}</span>
    <span class="stat-compare">${delta(now, before, locale)} <span class="muted">${locale.t.versus(compared, locale.number(before))}</span></span></dd>
</div>`;
}

function statTiles(stats: Stats, previous: Stats, compared: string, locale: ReportLocale): SafeHtml {
  return html`<dl class="stats">
  ${statTile('articles_published', stats, previous, compared, locale)}
  ${statTile('backlinks_acquired', stats, previous, compared, locale)}
  ${statTile('backlinks_industry', stats, previous, compared, locale)}
  ${statTile('backlinks_local', stats, previous, compared, locale)}
</dl>`;
}

/** The two charts (drawn by /assets/report.js from data-series) and the same numbers as a table. */
function charts(series: MonthCounts[], locale: ReportLocale): SafeHtml {
  const { t, number } = locale;
  const data = JSON.stringify({
    labels: series.map((m) => locale.month(m.month, true)),
    months: series.map((m) => m.month),
    industry: series.map((m) => m.backlinks_industry),
    local: series.map((m) => m.backlinks_local),
    articles: series.map((m) => m.articles_published),
    legend: { industry: t.legend.industry, local: t.legend.local, articles: t.measures.articles_published },
    locale: locale.tag,
  });
  const span = t.monthSpan(locale.month(series[0]!.month), locale.month(series[series.length - 1]!.month));
  return html`<div class="chart-grid">
  <figure class="card chart-card">
    <figcaption><h3>${t.backlinksPerMonth}</h3><p class="muted small">${t.backlinksChartNote(span)}</p></figcaption>
    <div class="chart-box"><canvas id="backlinks-chart" data-chart="backlinks" data-series="${data}" role="img" aria-label="${t.backlinksChartLabel(span)}">${t.backlinksChartFallback}</canvas></div>
  </figure>
  <figure class="card chart-card">
    <figcaption><h3>${t.articlesPerMonth}</h3><p class="muted small">${span}</p></figcaption>
    <div class="chart-box"><canvas id="articles-chart" data-chart="articles" data-series="${data}" role="img" aria-label="${t.articlesChartLabel(span)}">${t.articlesChartFallback}</canvas></div>
  </figure>
</div>
<details class="chart-data">
  <summary>${t.showAsTable}</summary>
  ${tableWrap(
    t.last12Months,
    html`<tr><th scope="col">${t.column.month}</th><th scope="col" class="num">${t.measures.articles_published}</th><th scope="col" class="num">${t.measures.backlinks_industry}</th><th scope="col" class="num">${t.measures.backlinks_local}</th><th scope="col" class="num">${t.allBacklinks}</th></tr>`,
    series.map(
      (m) => html`<tr><th scope="row">${locale.month(m.month)}</th><td class="num">${number(m.articles_published)}</td><td class="num">${number(m.backlinks_industry)}</td><td class="num">${number(m.backlinks_local)}</td><td class="num">${number(m.backlinks_industry + m.backlinks_local)}</td></tr>`,
    ),
    t.noData,
  )}
</details>`;
}

/** A value of a closed list in the report's words, on a badge coloured by the value itself. */
function valueBadge<V extends string>(value: V | null, words: Record<V, string>): SafeHtml {
  return value ? badge(words[value] ?? value, value) : badge(value);
}

/** Rows of the articles table; `linked` links each title to its editor (never on a share link). */
export function articleRows(articles: Article[], locale: ReportLocale, linked = true): SafeHtml[] {
  const { t } = locale;
  return articles.map((a) => {
    const title = a.title || t.untitledArticle(a.id);
    return html`<tr>
  <td class="wrap">${linked ? html`<a href="/app/articles/${a.id}">${title}</a>` : title}</td>
  <td>${valueBadge(a.status, t.articleStatus)}</td>
  <td>${day(a.published_at, locale)}</td>
  <td>${a.target_keyword ?? ''}</td>
  <td class="num">${a.word_count === null ? '' : locale.number(a.word_count)}</td>
</tr>`;
  });
}

/** A target URL shown as its path: the site is the same for every row. */
export function targetPath(url: string | null, locale: ReportLocale): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    const path = `${parsed.pathname}${parsed.search}`;
    return path === '/' ? `/ (${locale.t.homePage})` : path;
  } catch {
    return url;
  }
}

export function backlinkRows(backlinks: Backlink[], locale: ReportLocale): SafeHtml[] {
  const { t } = locale;
  return backlinks.map(
    (b) => html`<tr>
  <td>${day(b.acquired_at, locale)}</td>
  <td>${externalLink(b.source_url, b.source_domain ?? b.source_url)}</td>
  <td class="wrap">${b.anchor_text ?? ''}</td>
  <td>${b.anchor_type ? (t.anchorType[b.anchor_type] ?? b.anchor_type) : ''}</td>
  <td>${valueBadge(b.category, t.category)}</td>
  <td>${valueBadge(b.status, t.backlinkStatus)}</td>
  <td class="wrap">${externalLink(b.target_url, targetPath(b.target_url, locale))}</td>
</tr>`,
  );
}

/** A report page's title: the site and the month (the current one "so far"). */
export const reportTitle = (site: SiteRow, month: string, span: ReportSpan, locale: ReportLocale): string =>
  `${siteName(site, locale)} · ${span.toDate ? locale.t.soFar(locale.month(month)) : locale.month(month)}`;

/** The month of a report heading, marked "so far" while it is the current, partial month. */
export const reportMonthHeading = (month: string, span: ReportSpan, locale: ReportLocale): SafeHtml =>
  span.toDate ? html`<span data-partial-month>${locale.t.soFar(locale.month(month))}</span>` : html`${locale.month(month)}`;

/** The report's days in words ("Nov 2026", or "Dec 2026 so far") and the days its numbers are compared with. */
export function reportPeriod(month: string, span: ReportSpan, locale: ReportLocale): { period: string; compared: string } {
  return {
    period: span.toDate ? locale.t.soFar(locale.month(month)) : locale.month(month),
    compared: span.toDate ? locale.days(span.previousFrom, span.previousTo) : locale.month(addMonths(month, -1), true),
  };
}

/** The summary (against the days compared with) and the charts of the last 12 months. */
export function reportOverview({ month, span, stats, previous, series }: Pick<MonthlyReport, 'month' | 'span' | 'stats' | 'previous' | 'series'>, locale: ReportLocale): SafeHtml {
  const { t } = locale;
  return html`<section aria-labelledby="summary-h" class="report-summary">
  <h2 id="summary-h">${t.summary} <span class="muted thin small">${locale.days(stats.from, stats.to)}</span></h2>
  <p class="muted small" data-span-note>${spanNote(month, span, locale)}</p>
  ${statTiles(stats, previous, reportPeriod(month, span, locale).compared, locale)}
</section>
<section aria-labelledby="trend-h">
  <h2 id="trend-h">${t.last12Months}</h2>
  ${charts(series, locale)}
</section>`;
}

export const articlesHead = ({ t: { column } }: ReportLocale): SafeHtml =>
  html`<tr><th scope="col">${column.title}</th><th scope="col">${column.status}</th><th scope="col">${column.date}</th><th scope="col">${column.targetKeyword}</th><th scope="col" class="num">${column.words}</th></tr>`;

export const backlinksHead = ({ t: { column } }: ReportLocale): SafeHtml =>
  html`<tr><th scope="col">${column.acquired}</th><th scope="col">${column.source}</th><th scope="col">${column.anchorText}</th><th scope="col">${column.anchorType}</th><th scope="col">${column.category}</th><th scope="col">${column.status}</th><th scope="col">${column.targetPage}</th></tr>`;
