import { sql } from 'kysely';
import type { AnchorageMigration, MigrationContext } from './columns.js';

/** A per-site, per-UTC-day counter table keyed by one more column (category or status). */
async function createDayCounts({ db, dialect }: MigrationContext, table: string, key: string): Promise<void> {
  let create = db.schema
    .createTable(table)
    .addColumn('site_id', 'integer', (c) => c.notNull().references('sites.id'))
    // `YYYY-MM-DD`, or '' for rows without a timestamp (they are counted, and listed last).
    .addColumn('day', 'text', (c) => c.notNull())
    // '' stands for a NULL key: a primary key column cannot hold NULL.
    .addColumn(key, 'text', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint(`${table}_pk`, ['site_id', 'day', key]);
  // SQLite keeps the rows in primary-key order, so a site's days are read as one range.
  if (dialect === 'sqlite') create = create.modifyEnd(sql`without rowid`);
  await create.execute();
}

export const counters: AnchorageMigration = {
  name: '005_counters',
  async up(ctx) {
    // Totals, stats and deep pages sum these instead of counting rows; every write keeps them.
    await createDayCounts(ctx, 'backlink_day_counts', 'category');
    await createDayCounts(ctx, 'article_day_counts', 'status');
    await sql`insert into backlink_day_counts (site_id, day, category, n)
      select site_id, coalesce(substr(acquired_at, 1, 10), ''), category, count(*)
      from backlinks group by site_id, coalesce(substr(acquired_at, 1, 10), ''), category`.execute(ctx.db);
    await sql`insert into article_day_counts (site_id, day, status, n)
      select site_id, coalesce(substr(published_at, 1, 10), ''), coalesce(status, ''), count(*)
      from articles group by site_id, coalesce(substr(published_at, 1, 10), ''), coalesce(status, '')`.execute(ctx.db);
  },
};
