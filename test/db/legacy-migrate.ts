import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { migrationContext, migrations } from '../../src/db/migrate.js';

/**
 * The hand-written migration runner as it was before Kysely's Migrator (commit da4bb6f), kept to
 * build databases as that code left them: its own `schema_migrations` table, its run order, and
 * the names it recorded (003_oauth ran after 004_writes). `upTo` stops early, as an older release did.
 */
const legacyRunOrder: [legacyName: string, name: string][] = [
  ['001_foundation', '001_foundation'],
  ['002_sessions', '002_sessions'],
  ['004_writes', '003_writes'],
  ['003_oauth', '004_oauth'],
  ['005_counters', '005_counters'],
  ['006_article_derived', '006_article_derived'],
];

export async function legacyMigrate(db: Db, upTo = legacyRunOrder.length): Promise<string[]> {
  await sql`create table if not exists schema_migrations (name text primary key, applied_at text not null)`.execute(
    db.kysely,
  );
  const applied: string[] = [];
  for (const [legacyName, name] of legacyRunOrder.slice(0, upTo)) {
    const migration = migrations.find((m) => m.name === name)!;
    await db.kysely.transaction().execute(async (trx) => {
      if (db.dialect === 'postgres') await sql`select pg_advisory_xact_lock(7321001)`.execute(trx);
      const done = await sql<{ name: string }>`select name from schema_migrations where name = ${legacyName}`.execute(trx);
      if (done.rows.length > 0) return;
      await migration.up(migrationContext(trx, db.dialect));
      await sql`insert into schema_migrations (name, applied_at) values (${legacyName}, ${new Date().toISOString()})`.execute(trx);
      applied.push(legacyName);
    });
  }
  return applied;
}
