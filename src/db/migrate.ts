import { type Kysely, sql } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import type { Db, DialectName } from './connect.js';
import type { Database } from './schema.js';
import type { AnchorageMigration, MigrationContext } from './migrations/columns.js';
import { protectedLinksOf } from '../core/protected-anchors.js';
import { foundation } from './migrations/001_foundation.js';
import { sessions } from './migrations/002_sessions.js';
import { writes } from './migrations/003_writes.js';
import { oauth } from './migrations/004_oauth.js';
import { counters } from './migrations/005_counters.js';
import { articleDerived } from './migrations/006_article_derived.js';
import { sessionFlash } from './migrations/007_session_flash.js';
import { activityTime } from './migrations/008_activity_time.js';
import { reportShares } from './migrations/010_report_shares.js';
import { reportMail } from './migrations/011_report_mail.js';
import { bodySanitizer } from './migrations/012_body_sanitizer.js';
import { changeNotices } from './migrations/013_change_notices.js';
import { lz4Bodies } from './migrations/014_lz4_bodies.js';
import { undatedBlocks } from './migrations/015_undated_blocks.js';
import { countsVersion } from './migrations/016_counts_version.js';
import { changeCounts } from './migrations/017_change_counts.js';
import { articleNotices } from './migrations/018_article_notices.js';
import { siteOwner } from './migrations/019_site_owner.js';
import { articleSearch } from './migrations/020_article_search.js';
import { importKeys } from './migrations/021_import_keys.js';
import { passwordLinks } from './migrations/022_password_links.js';
import { leanArticleSearch } from './migrations/023_lean_article_search.js';
import { importUploads } from './migrations/024_import_uploads.js';
import { tokenNotices } from './migrations/025_token_notices.js';
import { importUploadFiles } from './migrations/026_import_upload_files.js';
import { articleChangeIds } from './migrations/027_article_change_ids.js';
import { searchIndexInBackground } from './migrations/028_search_index_in_background.js';

/**
 * Every migration; Kysely's Migrator runs them in the lexical order of their names (each file is
 * named as its migration), pending ones together in one transaction, on SQLite and PostgreSQL alike.
 */
export const migrations: readonly AnchorageMigration[] = [foundation, sessions, writes, oauth, counters, articleDerived, sessionFlash, activityTime, reportShares, reportMail, bodySanitizer, changeNotices, lz4Bodies, undatedBlocks, countsVersion, changeCounts, articleNotices, siteOwner, articleSearch, importKeys, passwordLinks, leanArticleSearch, importUploads, tokenNotices, importUploadFiles, articleChangeIds, searchIndexInBackground];

/** Kysely's bookkeeping table: one row per applied migration. */
const migrationTable = 'kysely_migration';

/**
 * The hand-written runner before the Migrator kept its own table, under names whose order was not
 * their run order; these two were renamed so that it is.
 */
const legacyTable = 'schema_migrations';
const legacyNames: Record<string, string> = { '003_oauth': '004_oauth', '004_writes': '003_writes' };
/** The advisory lock the hand-written runner took, so that it and the adoption take turns. */
const legacyLockId = 7321001;

/** What a migration runs with: the database, its dialect and today's derivations. */
export const migrationContext = (db: MigrationContext['db'], dialect: DialectName): MigrationContext => ({ db, dialect, protectedLinksOf });

class ListedMigrations implements MigrationProvider {
  constructor(private readonly dialect: DialectName) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    return Object.fromEntries(migrations.map((m): [string, Migration] => [m.name, { up: (db) => m.up(migrationContext(db, this.dialect)) }]));
  }
}

async function tableExists(db: Kysely<Database>, dialect: DialectName, table: string): Promise<boolean> {
  const found =
    dialect === 'postgres'
      ? await sql`select 1 from pg_tables where schemaname = current_schema() and tablename = ${table}`.execute(db)
      : await sql`select 1 from sqlite_master where type = 'table' and name = ${table}`.execute(db);
  return found.rows.length > 0;
}

/**
 * A database migrated by the hand-written runner: its applied migrations are recorded in the
 * Migrator's table under their current names, none runs again, and the old table goes, all in one
 * transaction (several nodes starting together take turns on PostgreSQL).
 */
async function adoptLegacyBookkeeping(db: Db): Promise<string[]> {
  return db.kysely.transaction().execute(async (trx) => {
    if (db.dialect === 'postgres') await sql`select pg_advisory_xact_lock(${legacyLockId})`.execute(trx);
    if (!(await tableExists(trx, db.dialect, legacyTable))) return [];
    const legacy = await sql<{ name: string }>`select name from ${sql.table(legacyTable)}`.execute(trx);
    const names = legacy.rows.map((row) => legacyNames[row.name] ?? row.name).sort();
    // The Migrator creates the same table when it finds none.
    await sql`create table if not exists ${sql.table(migrationTable)} (name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(
      trx,
    );
    // One timestamp for all: the Migrator then reads them back in name order, which is their run order.
    const timestamp = new Date().toISOString();
    for (const name of names) {
      await sql`insert into ${sql.table(migrationTable)} (name, timestamp) values (${name}, ${timestamp}) on conflict (name) do nothing`.execute(trx);
    }
    await sql`drop table ${sql.table(legacyTable)}`.execute(trx);
    return names;
  });
}

/** Applies the pending migrations; returns their names. */
export async function migrate(db: Db): Promise<string[]> {
  await adoptLegacyBookkeeping(db);
  const schema =
    db.dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)).rows[0]?.schema : undefined;
  const migrator = new Migrator({
    db: db.kysely,
    provider: new ListedMigrations(db.dialect),
    // The bookkeeping lives beside the tables it describes (the schema of the connection's search_path).
    migrationTableSchema: schema,
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName);
}
