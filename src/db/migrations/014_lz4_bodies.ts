import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';

/** Columns that hold article bodies, up to megabytes each. */
const bodyColumns = [
  ['articles', 'body'],
  ['revisions', 'body'],
] as const;

export const lz4Bodies: AnchorageMigration = {
  name: '014_lz4_bodies',
  async up({ db, dialect }) {
    if (dialect !== 'postgres') return;
    // PostgreSQL compresses a large value as it stores it, with pglz unless told otherwise; lz4
    // compresses and decompresses several times faster. Bodies stored from now on use it (those
    // stored before stay as they are, and read as before). Only where the server has it: 14 or
    // later, built with lz4 (`default_toast_compression` then offers it).
    const offered = await sql<{ lz4: boolean }>`select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`.execute(db);
    if (!offered.rows[0]?.lz4) return;
    for (const [table, column] of bodyColumns) {
      await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} set compression lz4`.execute(db);
    }
  },
};
