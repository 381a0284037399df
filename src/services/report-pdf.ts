import type { SiteRow } from '../db/schema.js';
import type { Article } from './articles.js';
import type { Backlink } from './backlinks.js';
import type { Stats } from './stats.js';
import type { MonthCounts } from './ui-queries.js';

/** One site's monthly report whole: what the report page, a share link and the PDF show. */
export interface MonthlyReport {
  site: SiteRow;
  /** `YYYY-MM`. */
  month: string;
  /** The days reported and the days compared with (the current month runs to today). */
  span: { from: string; to: string; previousFrom: string; previousTo: string; toDate: boolean };
  stats: Stats;
  previous: Stats;
  /** The 12 months to this one, oldest first. */
  series: MonthCounts[];
  /** Articles published in the span, every row (up to the report's limit). */
  articles: Article[];
  /** Backlinks acquired in the span, every row (up to the report's limit). */
  backlinks: Backlink[];
  /** `YYYY-MM-DD`. */
  generatedAt: string;
}
