import { type Kysely, type SelectQueryBuilder, sql, type Transaction } from 'kysely';
import { type DayCount, undatedDay } from '../core/day-pages.js';
import { dayAfter } from '../core/time.js';
import type { ArticleStatus, BacklinkCategory } from '../core/values.js';
import type { DialectName } from '../db/connect.js';
import type { ArticleDayCountsTable, BacklinkDayCountsTable, Database } from '../db/schema.js';

/** The UTC day a timestamp (ISO-8601 text) falls on, or `undatedDay` when there is none. */
export const dayOf = (timestamp: string | null): string => (timestamp === null ? undatedDay : timestamp.slice(0, 10));

/** Inclusive UTC days; either bound may be absent. Rows without a timestamp match only when both are. */
export interface DayBounds {
  from?: string;
  to?: string;
}

type CounterTable = 'backlink_day_counts' | 'article_day_counts';

/**
 * Keeps counter rows of the inclusive days `from`..`to`, exactly the rows a list's timestamp
 * filter keeps (see `withinDays`): the undated day only when no bound is given.
 */
function withinDayBounds<TB extends CounterTable, O>(
  query: SelectQueryBuilder<Database, TB, O>,
  { from, to }: DayBounds,
): SelectQueryBuilder<Database, TB, O> {
  let filtered = query;
  if (from !== undefined) filtered = filtered.where(sql.ref('day'), '>=', from);
  if (to !== undefined) filtered = filtered.where(sql.ref('day'), '<', dayAfter(to)).where(sql.ref('day'), '<>', undatedDay);
  return filtered;
}

// Four values a row: well under either database's limit on bound parameters.
const upsertBatch = 500;

/**
 * The counter rows one write adds, summed in memory first, so an import of a million rows
 * upserts each (site, day, key) once. Save them in the write's own transaction.
 */
export class DayCountChanges {
  private readonly backlinks = new Map<string, BacklinkDayCountsTable>();
  private readonly articles = new Map<string, ArticleDayCountsTable>();

  addBacklink(row: { site_id: number; acquired_at: string | null; category: BacklinkCategory }): void {
    const day = dayOf(row.acquired_at);
    const key = `${row.site_id} ${day} ${row.category}`;
    const counter = this.backlinks.get(key);
    if (counter) counter.n += 1;
    else this.backlinks.set(key, { site_id: row.site_id, day, category: row.category, n: 1 });
  }

  addArticle(row: { site_id: number; published_at: string | null; status: ArticleStatus | null }): void {
    const day = dayOf(row.published_at);
    const status = row.status ?? '';
    const key = `${row.site_id} ${day} ${status}`;
    const counter = this.articles.get(key);
    if (counter) counter.n += 1;
    else this.articles.set(key, { site_id: row.site_id, day, status, n: 1 });
  }

  async saveIn(trx: Transaction<Database>): Promise<void> {
    const backlinks = [...this.backlinks.values()];
    for (let i = 0; i < backlinks.length; i += upsertBatch) {
      await trx
        .insertInto('backlink_day_counts')
        .values(backlinks.slice(i, i + upsertBatch))
        .onConflict((oc) =>
          oc.columns(['site_id', 'day', 'category']).doUpdateSet((eb) => ({ n: eb('backlink_day_counts.n', '+', eb.ref('excluded.n')) })),
        )
        .execute();
    }
    const articles = [...this.articles.values()];
    for (let i = 0; i < articles.length; i += upsertBatch) {
      await trx
        .insertInto('article_day_counts')
        .values(articles.slice(i, i + upsertBatch))
        .onConflict((oc) =>
          oc.columns(['site_id', 'day', 'status']).doUpdateSet((eb) => ({ n: eb('article_day_counts.n', '+', eb.ref('excluded.n')) })),
        )
        .execute();
    }
  }
}

/**
 * Reads and rebuilds the per-site, per-UTC-day counters of backlinks (by category) and articles
 * (by status). Lists take their totals and deep-page positions from them, stats their counts.
 */
export class CountersService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  /**
   * A list's rows per day in list order (newest day first, undated last), for days `from`..`to`
   * with the same bounds as the list's row filter; `status` narrows the article counters.
   */
  async days(table: CounterTable, siteId: number, bounds: DayBounds, status?: ArticleStatus): Promise<DayCount[]> {
    let query = this.db
      .selectFrom(table)
      .select(['day', (eb) => eb.fn.sum<number | string>('n').as('n')])
      .where('site_id', '=', siteId);
    query = withinDayBounds(query, bounds);
    if (status !== undefined) query = query.where(sql.ref('status'), '=', status);
    const rows = await query.groupBy('day').orderBy('day', 'desc').execute();
    return rows.map((row) => ({ day: row.day, n: Number(row.n) }));
  }

  /** Backlinks per category acquired on the inclusive days `from`..`to`. */
  async backlinksByCategory(siteId: number, from: string, to: string): Promise<Record<BacklinkCategory, number>> {
    const rows = await withinDayBounds(
      this.db
        .selectFrom('backlink_day_counts')
        .select(['category', (eb) => eb.fn.sum<number | string>('n').as('n')])
        .where('site_id', '=', siteId),
      { from, to },
    )
      .groupBy('category')
      .execute();
    const counts: Record<BacklinkCategory, number> = { industry: 0, local: 0 };
    for (const row of rows) counts[row.category] = Number(row.n);
    return counts;
  }

  /** Articles with `status` whose `published_at` falls on the inclusive days `from`..`to`. */
  async articlesWithStatus(siteId: number, status: ArticleStatus, from: string, to: string): Promise<number> {
    const row = await withinDayBounds(
      this.db
        .selectFrom('article_day_counts')
        .select((eb) => eb.fn.sum<number | string | null>('n').as('n'))
        .where('site_id', '=', siteId)
        .where('status', '=', status),
      { from, to },
    ).executeTakeFirstOrThrow();
    return Number(row.n ?? 0);
  }

  /**
   * Rebuilds every counter from the rows, in one transaction (`anchorage recount`). Writes wait
   * meanwhile (PostgreSQL: a share lock on the tables; SQLite: the single writer).
   */
  async recount(): Promise<{ backlink_days: number; article_days: number }> {
    return this.db.transaction().execute(async (trx) => {
      if (this.dialect === 'postgres') await sql`lock table backlinks, articles in share mode`.execute(trx);
      await trx.deleteFrom('backlink_day_counts').execute();
      await trx.deleteFrom('article_day_counts').execute();
      const backlinkDay = sql<string>`coalesce(substr(acquired_at, 1, 10), '')`;
      const articleDay = sql<string>`coalesce(substr(published_at, 1, 10), '')`;
      const articleStatus = sql<ArticleStatus | ''>`coalesce(status, '')`;
      const backlinks = await trx
        .insertInto('backlink_day_counts')
        .columns(['site_id', 'day', 'category', 'n'])
        .expression((eb) =>
          eb
            .selectFrom('backlinks')
            .select(['site_id', backlinkDay.as('day'), 'category', (e) => e.fn.countAll<number>().as('n')])
            .groupBy(['site_id', backlinkDay, 'category']),
        )
        .executeTakeFirst();
      const articles = await trx
        .insertInto('article_day_counts')
        .columns(['site_id', 'day', 'status', 'n'])
        .expression((eb) =>
          eb
            .selectFrom('articles')
            .select(['site_id', articleDay.as('day'), articleStatus.as('status'), (e) => e.fn.countAll<number>().as('n')])
            .groupBy(['site_id', articleDay, articleStatus]),
        )
        .executeTakeFirst();
      return { backlink_days: Number(backlinks.numInsertedOrUpdatedRows ?? 0), article_days: Number(articles.numInsertedOrUpdatedRows ?? 0) };
    });
  }
}
