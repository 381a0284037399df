import { sql } from 'kysely';
import type { AnchorageMigration, MigrationContext } from './columns.js';

/**
 * A per-site counter table by UTC day or month (`span`) and one more column (`key`: category or
 * status), filled from the rows as they are.
 */
async function createCounts(
  { db, dialect }: MigrationContext,
  table: string,
  rows: { from: string; timestamp: string; span: 'day' | 'month'; key: string },
): Promise<void> {
  let create = db.schema
    .createTable(table)
    .addColumn('site_id', 'integer', (c) => c.notNull().references('sites.id'))
    // `YYYY-MM-DD` or `YYYY-MM`, and '' for rows without a timestamp (counted, and listed last).
    .addColumn(rows.span, 'text', (c) => c.notNull())
    // '' stands for a NULL key: a primary key column cannot hold NULL.
    .addColumn(rows.key, 'text', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint(`${table}_pk`, ['site_id', rows.span, rows.key]);
  // SQLite keeps the rows in primary-key order, so a site's days are read as one range.
  if (dialect === 'sqlite') create = create.modifyEnd(sql`without rowid`);
  await create.execute();
  const span = sql.raw(`coalesce(substr(${rows.timestamp}, 1, ${rows.span === 'day' ? 10 : 7}), '')`);
  const key = sql.raw(`coalesce(${rows.key}, '')`);
  await sql`insert into ${sql.table(table)} (site_id, ${sql.ref(rows.span)}, ${sql.ref(rows.key)}, n)
    select site_id, ${span}, ${key}, count(*) from ${sql.table(rows.from)} group by site_id, ${span}, ${key}`.execute(db);
}

export const counters: AnchorageMigration = {
  name: '005_counters',
  async up(ctx) {
    // Totals, stats and deep pages sum these instead of counting rows; every write keeps them.
    await createCounts(ctx, 'backlink_day_counts', { from: 'backlinks', timestamp: 'acquired_at', span: 'day', key: 'category' });
    await createCounts(ctx, 'backlink_month_counts', { from: 'backlinks', timestamp: 'acquired_at', span: 'month', key: 'category' });
    await createCounts(ctx, 'article_day_counts', { from: 'articles', timestamp: 'published_at', span: 'day', key: 'status' });
    await createCounts(ctx, 'article_month_counts', { from: 'articles', timestamp: 'published_at', span: 'month', key: 'status' });
  },
};
