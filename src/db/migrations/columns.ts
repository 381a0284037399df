import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely } from 'kysely';
import { type RawBuilder, sql } from 'kysely';

// Migrations are frozen: they import nothing from the live code, which may change after they ran.
// What they need of it comes in their context.

type DialectName = 'sqlite' | 'postgres';

/** Rows per undated day-counter span, as it was when migration 015 ran (`UNDATED_BLOCK` now). */
const undatedBlock = 4096;

/**
 * What a migration gets: the database and its dialect, for the few statements that differ, and
 * the live derivations a backfill must compute as reads expect them today.
 */
export interface MigrationContext {
  // Migrations run against the schema as it was, not as the current types describe it.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: Kysely<any>;
  dialect: DialectName;
  /** The protected links of a body, as an article read returns them. */
  protectedLinksOf(body: string): unknown[];
}

export interface AnchorageMigration {
  name: string;
  up(ctx: MigrationContext): Promise<void>;
}

/** An auto-incrementing integer primary key on either database. */
export function withId<T extends string>(
  table: CreateTableBuilder<T, never>,
  dialect: DialectName,
): CreateTableBuilder<T, 'id'> {
  return table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) =>
    dialect === 'postgres' ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement(),
  );
}

/** A descending index whose NULLs sort last on both databases (SQLite already sorts them last). */
export async function createDescendingIndex(
  ctx: MigrationContext,
  name: string,
  table: string,
  leading: string[],
  descending: string,
): Promise<void> {
  const nulls = ctx.dialect === 'postgres' ? ' nulls last' : '';
  const columns = [...leading, `${descending} desc${nulls}`, 'id desc'].join(', ');
  await sql.raw(`create index ${name} on ${table} (${columns})`).execute(ctx.db);
}

/**
 * The day counters' span of a row (`undatedBlockOf` where `timestamp` is NULL): what the counters
 * of migrations group the rows by.
 */
export function daySpanSql(dialect: DialectName, timestamp: string): RawBuilder<string> {
  const block = sql`${sql.ref('id')} / ${sql.lit(undatedBlock)}`;
  const padded = dialect === 'postgres' ? sql`lpad((${block})::text, 10, '0')` : sql`substr('0000000000' || (${block}), -10)`;
  return sql<string>`case when ${sql.ref(timestamp)} is null then 'u' || ${padded} else substr(${sql.ref(timestamp)}, 1, 10) end`;
}
