import type { ProtectedLink } from '../core/errors.js';
import type { ReportLocale } from '../core/i18n/locale.js';
import { en, type ReportRows } from '../core/i18n/messages.js';
import type { PageMeta } from '../services/pagination.js';
import { html, type SafeHtml } from './html.js';

/** A query string of the non-empty parameters, with a leading `?` (or nothing). */
export function queryString(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** `2026-11-15T12:00:00Z` as "2026-11-15 12:00 UTC" (or "12:00:00" with `seconds`) in a <time> element. */
export function timestamp(value: string | null | undefined, precision: 'minutes' | 'seconds' = 'minutes'): SafeHtml {
  if (!value) return html`<span class="muted">—</span>`;
  const shown = value.replace('T', ' ').replace(precision === 'seconds' ? /Z$/ : /:\d{2}Z$/, '').replace(/Z$/, '');
  return html`<time datetime="${value}">${shown}<span class="tz"> UTC</span></time>`;
}

/** `2026-11-15T12:00:00Z` as the day only (`2026-11-15`, or as a report's locale writes it). */
export function day(value: string | null | undefined, locale?: ReportLocale): SafeHtml {
  if (!value) return html`<span class="muted">—</span>`;
  return html`<time datetime="${value}">${locale ? locale.day(value) : value.slice(0, 10)}</time>`;
}

const monthNames = [
  'January', 'February', 'March', 'April', 'May', 'June',
  'July', 'August', 'September', 'October', 'November', 'December',
];

/** `2026-11` as "November 2026"; `short` gives "Nov 2026". */
export function monthLabel(month: string, short = false): string {
  const [year, index] = month.split('-').map(Number) as [number, number];
  const name = monthNames[index - 1] ?? month;
  return `${short ? name.slice(0, 3) : name} ${year}`;
}

/** The month `offset` months after `month` (`YYYY-MM`). */
export function addMonths(month: string, offset: number): string {
  const [year, index] = month.split('-').map(Number) as [number, number];
  const date = new Date(Date.UTC(year, index - 1 + offset, 1));
  return date.toISOString().slice(0, 7);
}

/** A small coloured label: statuses, origins, channels. */
export function badge(text: string | null | undefined, tone?: string): SafeHtml {
  if (!text) return html`<span class="muted">—</span>`;
  return html`<span class="badge badge-${tone ?? text}">${text}</span>`;
}

export function notice(kind: 'success' | 'error' | 'info' | 'warning', message: SafeHtml | string): SafeHtml {
  const role = kind === 'error' ? 'alert' : 'status';
  return html`<div class="notice notice-${kind}" role="${role}">${message}</div>`;
}

/** Previous / next links and "page X of Y" for a paged table (in English, or in a report's locale). */
export function pager(meta: PageMeta, urlFor: (page: number) => string, label: string, locale?: ReportLocale): SafeHtml {
  if (meta.total === 0) return html``;
  const words = locale?.t.pager ?? en.pager;
  const n = locale?.number ?? String;
  const first = (meta.page - 1) * meta.per_page + 1;
  const last = Math.min(meta.total, meta.page * meta.per_page);
  const range = first <= meta.total ? words.range(n(first), n(last), n(meta.total)) : words.inAll(n(meta.total));
  if (meta.last_page === 1 && meta.page === 1) return html`<p class="pager"><span class="pager-range">${range}</span></p>`;
  return html`<nav class="pager" aria-label="${words.pages(label)}">
  <span class="pager-range">${range}</span>
  ${meta.page > 1 ? html`<a class="button small" href="${urlFor(meta.page - 1)}" rel="prev">${words.previous}</a>` : html`<span class="button small disabled" aria-disabled="true">${words.previous}</span>`}
  <span class="pager-page">${words.page(n(meta.page), n(meta.last_page))}</span>
  ${meta.page < meta.last_page ? html`<a class="button small" href="${urlFor(meta.page + 1)}" rel="next">${words.next}</a>` : html`<span class="button small disabled" aria-disabled="true">${words.next}</span>`}
</nav>`;
}

/** A table that scrolls sideways on small screens instead of breaking the layout. */
export function tableWrap(caption: string, head: SafeHtml, rows: SafeHtml[], empty: string): SafeHtml {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0">
<table>
<caption class="visually-hidden">${caption}</caption>
<thead>${head}</thead>
<tbody>${rows}</tbody>
</table>
</div>`;
}

/** A paged table of the UI, which a printout holds whole. */
export interface PagedTable {
  caption: string;
  head: SafeHtml;
  /** The rows of the page on screen. */
  rows: SafeHtml[];
  /** Every row of the list (or its first `printRowLimit`), when it has more than one page. */
  allRows?: SafeHtml[];
  empty: string;
  meta: PageMeta;
  urlFor: (page: number) => string;
  /** What the rows are. */
  kind: ReportRows;
  locale: ReportLocale;
}

/**
 * One page on screen, with the pager; in print every row, with how many there are, so a printed
 * or PDF report holds the whole list and not just the page that happened to be open.
 */
export function pagedTable(table: PagedTable): SafeHtml {
  const { t, number } = table.locale;
  const onScreen = html`${tableWrap(table.caption, table.head, table.rows, table.empty)}
  ${pager(table.meta, table.urlFor, t.rowsLabel[table.kind], table.locale)}`;
  if (!table.allRows) return onScreen;
  const count =
    table.allRows.length < table.meta.total
      ? t.firstOfTotal(table.kind, number(table.allRows.length), number(table.meta.total))
      : t.allRows(table.kind, number(table.meta.total));
  return html`<div class="screen-only">${onScreen}</div>
<div class="print-only">
  ${tableWrap(table.caption, table.head, table.allRows, table.empty)}
  <p class="pager"><span class="pager-range">${count}</span></p>
</div>`;
}

/** The protected links of an article (or of a refused edit), each with its lock. */
export function protectedLinkList(links: readonly ProtectedLink[]): SafeHtml {
  return html`<ul class="locked-links">
${links.map(
  (link) => html`<li><span class="lock" aria-hidden="true"></span><span class="badge badge-${link.type}">${link.type}</span>
  <span class="locked-text">“${link.text}”</span> <span class="muted">→</span> <code class="href">${link.href}</code></li>`,
)}
</ul>`;
}

/** A hidden CSRF field for a form of the signed-in UI. */
export const csrfField = (token: string): SafeHtml => html`<input type="hidden" name="_csrf" value="${token}">`;

/** A link only to http(s) addresses; anything else is shown as text. */
export function externalLink(url: string | null | undefined, text?: string | null): SafeHtml {
  if (!url) return html`<span class="muted">—</span>`;
  if (!/^https?:\/\//i.test(url)) return html`${text ?? url}`;
  return html`<a href="${url}" rel="noopener noreferrer nofollow" target="_blank">${text ?? url}</a>`;
}

/** "+3", "−2" or "±0" with a tone for the stat tiles. */
export function delta(current: number, previous: number, locale: ReportLocale): SafeHtml {
  const change = current - previous;
  const tone = change > 0 ? 'up' : change < 0 ? 'down' : 'flat';
  return html`<span class="delta delta-${tone}">${locale.signed(change)}</span>`;
}
