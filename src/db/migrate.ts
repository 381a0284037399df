import { sql } from 'kysely';
import type { Db } from './connect.js';
import type { AnchorageMigration } from './migrations/columns.js';
import { foundation } from './migrations/001_foundation.js';
import { sessions } from './migrations/002_sessions.js';
import { oauth } from './migrations/003_oauth.js';
import { writes } from './migrations/004_writes.js';
import { counters } from './migrations/005_counters.js';
import { articleDerived } from './migrations/006_article_derived.js';
import { sessionFlash } from './migrations/007_session_flash.js';

/** Every migration, in order. Each runs once, in a transaction, on SQLite and PostgreSQL alike. */
const migrations: AnchorageMigration[] = [foundation, sessions, writes, oauth, counters, articleDerived, sessionFlash];

/** Applies the pending migrations; returns their names. */
export async function migrate(db: Db): Promise<string[]> {
  await sql`create table if not exists schema_migrations (name text primary key, applied_at text not null)`.execute(
    db.kysely,
  );
  const applied: string[] = [];
  for (const migration of migrations) {
    await db.kysely.transaction().execute(async (trx) => {
      // Nodes starting together on one PostgreSQL database take turns.
      if (db.dialect === 'postgres') await sql`select pg_advisory_xact_lock(7321001)`.execute(trx);
      const done = await sql<{ name: string }>`select name from schema_migrations where name = ${migration.name}`.execute(trx);
      if (done.rows.length > 0) return;
      await migration.up({ db: trx, dialect: db.dialect });
      await sql`insert into schema_migrations (name, applied_at) values (${migration.name}, ${new Date().toISOString()})`.execute(trx);
      applied.push(migration.name);
    });
  }
  return applied;
}
