import { sql } from 'kysely';
import { type AnchorageMigration, daySpanSql } from './columns.js';

/** The day counter tables, and the rows and columns they count. */
const dayCounts = [
  { table: 'backlink_day_counts', from: 'backlinks', timestamp: 'acquired_at', key: 'category' },
  { table: 'article_day_counts', from: 'articles', timestamp: 'published_at', key: 'status' },
] as const;

export const undatedBlocks: AnchorageMigration = {
  name: '015_undated_blocks',
  async up({ db, dialect }) {
    // Rows without a timestamp were counted under one day, ''; the day counters now count them by
    // block of ids (`undatedBlockOf`), so a page deep among them seeks to its block. The month
    // counters still count them under '', as one span.
    for (const { table, from, timestamp, key } of dayCounts) {
      const span = daySpanSql(dialect, timestamp);
      await sql`delete from ${sql.table(table)} where day = ''`.execute(db);
      await sql`insert into ${sql.table(table)} (site_id, day, ${sql.ref(key)}, n)
        select site_id, ${span}, coalesce(${sql.ref(key)}, ''), count(*) from ${sql.table(from)}
        where ${sql.ref(timestamp)} is null group by site_id, ${span}, coalesce(${sql.ref(key)}, '')`.execute(db);
    }
  },
};
