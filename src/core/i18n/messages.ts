import type { AnchorType, ArticleStatus, BacklinkCategory, BacklinkStatus } from '../values.js';

/** The two row tables of a report. */
export type ReportRows = 'articles' | 'backlinks';

/** The four numbers of a report's summary (the stats API's names). */
export type ReportMeasure = 'articles_published' | 'backlinks_acquired' | 'backlinks_industry' | 'backlinks_local';

/**
 * Every word of a monthly report (page, print, share page, PDF, e-mail, CSV headers) in one
 * language. Values are passed in already formatted (months, days, numbers: see `locale.ts`), so a
 * message only places them.
 */
export interface ReportMessages {
  monthlyReport: string;
  untitledSite: (id: number) => string;
  untitledArticle: (id: number) => string;
  homePage: string;
  measures: Record<ReportMeasure, string>;
  allBacklinks: string;
  articleStatus: Record<ArticleStatus, string>;
  backlinkStatus: Record<BacklinkStatus, string>;
  anchorType: Record<AnchorType, string>;
  category: Record<BacklinkCategory, string>;
  anyStatus: string;

  /** The current month, reported up to today. */
  soFar: (month: string) => string;
  /** Under the current month in the charts: its numbers are of the days so far. */
  soFarNote: string;
  spanToDate: (month: string, days: string, previousMonth: string, previousDays: string) => string;
  spanWhole: (previousMonth: string) => string;
  /** A stat tile's comparison: the period compared with and its number. */
  versus: (compared: string, previous: string) => string;
  /** The first and last of the 12 months. */
  monthSpan: (from: string, to: string) => string;

  summary: string;
  last12Months: string;
  backlinksPerMonth: string;
  backlinksChartNote: (span: string) => string;
  backlinksChartLabel: (span: string) => string;
  backlinksChartFallback: string;
  articlesPerMonth: string;
  articlesChartLabel: (span: string) => string;
  articlesChartFallback: string;
  showAsTable: string;
  noData: string;
  legend: { industry: string; local: string; articles: string };
  column: {
    month: string;
    title: string;
    status: string;
    date: string;
    targetKeyword: string;
    words: string;
    acquired: string;
    source: string;
    anchorText: string;
    anchorType: string;
    category: string;
    targetPage: string;
    published: string;
    measure: string;
    change: string;
  };

  articlesPublishedIn: (period: string) => string;
  articlesDatedIn: (period: string) => string;
  /** `status` is already in words (`articleStatus`). */
  statusArticlesDatedIn: (status: string, period: string) => string;
  noArticlesPublished: (period: string) => string;
  noArticlesDated: (status: string | undefined, period: string) => string;
  backlinksAcquiredIn: (period: string) => string;
  noBacklinksAcquired: (period: string) => string;

  printReport: string;
  downloadPdf: string;
  shareLinks: string;
  /** The site page's search box (`searchArticles`). */
  findInArticles: string;
  show: string;
  exportCsv: string;
  filter: string;
  publishedOnly: string;
  months: string;
  notAMonth: (asked: string, month: string) => string;

  /** What a table's rows are, as a pager's label ("Articles"). */
  rowsLabel: Record<ReportRows, string>;
  pager: {
    range: (first: string, last: string, total: string) => string;
    inAll: (total: string) => string;
    previous: string;
    next: string;
    page: (page: string, last: string) => string;
    pages: (label: string) => string;
  };
  /** Under a printed table that holds fewer rows than the list. */
  firstOfTotal: (rows: ReportRows, shown: string, total: string) => string;
  allRows: (rows: ReportRows, total: string) => string;
  /** Under a share page's table cut at the report's limit. */
  firstRows: (rows: ReportRows, limit: string) => string;

  pdf: {
    compared: (days: string, previousDays: string, generated: string) => string;
    summaryOf: (period: string) => string;
  };
  mail: {
    subject: (site: string, month: string) => string;
    heading: (site: string, month: string) => string;
    comparedWith: (month: string) => string;
    attached: string;
    unsubscribe: (url: string) => string;
  };
  /** CSV column headers, by the API's field names. */
  csv: {
    articles: Record<'id' | 'title' | 'status' | 'published_at' | 'target_keyword' | 'word_count' | 'url', string>;
    backlinks: Record<'id' | 'acquired_at' | 'source_domain' | 'source_url' | 'target_url' | 'anchor_text' | 'anchor_type' | 'status' | 'category', string>;
  };
}

const capitalised = (text: string): string => `${text[0]!.toUpperCase()}${text.slice(1)}`;

/** English, and the words of every language without a catalogue. CSV headers stay the API's field names, which scripts already read. */
export const en: ReportMessages = {
  monthlyReport: 'Monthly report',
  untitledSite: (id) => `Site ${id}`,
  untitledArticle: (id) => `Untitled article ${id}`,
  homePage: 'home page',
  measures: { articles_published: 'Articles published', backlinks_acquired: 'Backlinks acquired', backlinks_industry: 'Industry backlinks', backlinks_local: 'Local backlinks' },
  allBacklinks: 'All backlinks',
  articleStatus: { draft: 'draft', scheduled: 'scheduled', published: 'published', archived: 'archived' },
  backlinkStatus: { pending: 'pending', live: 'live', lost: 'lost' },
  anchorType: { exact: 'exact', partial: 'partial', branded: 'branded', url: 'url', generic: 'generic' },
  category: { industry: 'industry', local: 'local' },
  anyStatus: 'any status',

  soFar: (month) => `${month} so far`,
  soFarNote: 'so far',
  spanToDate: (month, days, previousMonth, previousDays) => `${month} so far: ${days}, compared with the same days of ${previousMonth} (${previousDays}).`,
  spanWhole: (previousMonth) => `The whole month, compared with the whole of ${previousMonth}.`,
  versus: (compared, previous) => `vs ${compared} (${previous})`,
  monthSpan: (from, to) => `${from} to ${to}`,

  summary: 'Summary',
  last12Months: 'The last 12 months',
  backlinksPerMonth: 'Backlinks per month',
  backlinksChartNote: (span) => `Industry and local, ${span}`,
  backlinksChartLabel: (span) => `Bar chart of backlinks acquired per month, industry and local, ${span}. The same numbers are in the table below.`,
  backlinksChartFallback: 'Backlinks per month; see the table below.',
  articlesPerMonth: 'Articles published per month',
  articlesChartLabel: (span) => `Chart of articles published per month, ${span}. The same numbers are in the table below.`,
  articlesChartFallback: 'Articles per month; see the table below.',
  showAsTable: 'Show the last 12 months as a table',
  noData: 'No data.',
  legend: { industry: 'Industry', local: 'Local', articles: 'Articles' },
  column: {
    month: 'Month',
    title: 'Title',
    status: 'Status',
    date: 'Date',
    targetKeyword: 'Target keyword',
    words: 'Words',
    acquired: 'Acquired',
    source: 'Source',
    anchorText: 'Anchor text',
    anchorType: 'Anchor type',
    category: 'Category',
    targetPage: 'Target page',
    published: 'Published',
    measure: 'Measure',
    change: 'Change',
  },

  articlesPublishedIn: (period) => `Articles published in ${period}`,
  articlesDatedIn: (period) => `Articles dated in ${period}, any status`,
  statusArticlesDatedIn: (status, period) => `${capitalised(status)} articles dated in ${period}`,
  noArticlesPublished: (period) => `No articles were published in ${period}.`,
  noArticlesDated: (status, period) => `No ${status ? `${status} ` : ''}articles are dated in ${period}.`,
  backlinksAcquiredIn: (period) => `Backlinks acquired in ${period}`,
  noBacklinksAcquired: (period) => `No backlinks were acquired in ${period}.`,

  printReport: 'Print report',
  downloadPdf: 'Download PDF',
  shareLinks: 'Share links',
  findInArticles: 'Find in articles',
  show: 'Show',
  exportCsv: 'Export CSV',
  filter: 'Filter',
  publishedOnly: 'Published only',
  months: 'Months',
  notAMonth: (asked, month) => `“${asked}” is not a month (YYYY-MM); showing ${month}.`,

  rowsLabel: { articles: 'Articles', backlinks: 'Backlinks' },
  pager: {
    range: (first, last, total) => `${first}–${last} of ${total}`,
    inAll: (total) => `${total} in all`,
    previous: '← Previous',
    next: 'Next →',
    page: (page, last) => `Page ${page} of ${last}`,
    pages: (label) => `${label} pages`,
  },
  firstOfTotal: (rows, shown, total) => `The first ${shown} of ${total} ${rows}; the CSV export holds every row.`,
  allRows: (rows, total) => `All ${total} ${rows}.`,
  firstRows: (rows, limit) => `The first ${limit} ${rows}.`,

  pdf: {
    compared: (days, previousDays, generated) => `${days}, compared with ${previousDays}. Generated ${generated}.`,
    summaryOf: (period) => `Summary: ${period}`,
  },
  mail: {
    subject: (site, month) => `${site}: monthly report for ${month}`,
    heading: (site, month) => `Monthly report for ${site}: ${month}`,
    comparedWith: (month) => `Compared with ${month}:`,
    attached: 'The full report, with every article and backlink, is attached as a PDF.',
    unsubscribe: (url) => `Stop receiving this report: ${url}`,
  },
  csv: {
    articles: { id: 'id', title: 'title', status: 'status', published_at: 'published_at', target_keyword: 'target_keyword', word_count: 'word_count', url: 'url' },
    backlinks: {
      id: 'id',
      acquired_at: 'acquired_at',
      source_domain: 'source_domain',
      source_url: 'source_url',
      target_url: 'target_url',
      anchor_text: 'anchor_text',
      anchor_type: 'anchor_type',
      status: 'status',
      category: 'category',
    },
  },
};
