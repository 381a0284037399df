import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type Db } from '../../src/db/connect.js';
import { migrate, migrationContext, migrations } from '../../src/db/migrate.js';
import { dialectName, testDatabaseUrl } from '../helpers/harness.js';
import { legacyMigrate } from './legacy-migrate.js';

const names = migrations.map((m) => m.name);
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function admin(query: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  await client.query(query);
  await client.end();
}

/** An empty database of its own: a fresh SQLite file, or a fresh PostgreSQL schema. */
async function emptyDatabase(): Promise<() => Db> {
  if (testDatabaseUrl) {
    const schema = `m_${randomBytes(6).toString('hex')}`;
    await admin(`create schema ${schema}`);
    cleanups.push(() => admin(`drop schema ${schema} cascade`));
    const url = new URL(testDatabaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    return () => open(connect(url.toString(), ''));
  }
  const dir = mkdtempSync(join(tmpdir(), 'anchorage-migrate-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return () => open(connect(undefined, dir));
}

function open(db: Db): Db {
  cleanups.push(() => db.kysely.destroy());
  return db;
}

async function tables(db: Db): Promise<string[]> {
  const rows =
    db.dialect === 'postgres'
      ? await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema()`.execute(db.kysely)
      : await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db.kysely);
  return rows.rows.map((r) => r.name).sort();
}

async function recorded(db: Db): Promise<string[]> {
  const rows = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db.kysely);
  return rows.rows.map((r) => r.name);
}

describe(`migrations through Kysely's Migrator (${dialectName})`, () => {
  it('are files named as their migrations, every file listed, their lexical order the run order', () => {
    const files = readdirSync(join(import.meta.dirname, '../../src/db/migrations'))
      .filter((file) => /^\d+_.*\.ts$/.test(file))
      .map((file) => file.replace(/\.ts$/, ''));
    expect(names).toEqual(files.sort());
    expect(names).toEqual([...names].sort());
  });

  it('apply every migration once to an empty database, in name order, and nothing the second time', async () => {
    const db = (await emptyDatabase())();
    expect(await migrate(db)).toEqual(names);
    expect(await recorded(db)).toEqual(names);
    expect(await migrate(db)).toEqual([]);
    expect(await tables(db)).not.toContain('schema_migrations');
  });

  it('adopt a database the hand-written runner migrated: nothing runs again, the rows stay, the old table goes', async () => {
    const db = (await emptyDatabase())();
    expect(await legacyMigrate(db)).toEqual(['001_foundation', '002_sessions', '004_writes', '003_oauth', '005_counters', '006_article_derived']);
    await db.kysely.insertInto('accounts').values({ name: 'Kept', created_at: '2026-11-15T12:00:00Z' }).execute();
    const before = await tables(db);
    // What the hand-written runner applied stays applied; only migrations added since then run.
    expect(await migrate(db)).toEqual(names.slice(6));
    expect(await recorded(db)).toEqual(names);
    const after = await tables(db);
    expect(after).toEqual(expect.arrayContaining([...before.filter((t) => t !== 'schema_migrations'), 'kysely_migration', 'kysely_migration_lock']));
    expect(after).not.toContain('schema_migrations');
    expect(await db.kysely.selectFrom('accounts').select('name').execute()).toEqual([{ name: 'Kept' }]);
    expect(await migrate(db)).toEqual([]);
  });

  it('drop a bookkeeping table an old node left beside the new one, recording nothing twice', async () => {
    const db = (await emptyDatabase())();
    await migrate(db);
    await sql`create table schema_migrations (name text primary key, applied_at text not null)`.execute(db.kysely);
    await sql`insert into schema_migrations (name, applied_at) values ('001_foundation', '2026-11-01T00:00:00.000Z')`.execute(db.kysely);
    expect(await migrate(db)).toEqual([]);
    expect(await recorded(db)).toEqual(names);
    expect(await tables(db)).not.toContain('schema_migrations');
  });

  it('adopt an older release’s database and run only what it lacks', async () => {
    const db = (await emptyDatabase())();
    await legacyMigrate(db, 5);
    const account = await db.kysely.insertInto('accounts').values({ name: 'Old', created_at: '2026-11-15T12:00:00Z' }).returning('id').executeTakeFirstOrThrow();
    const site = await db.kysely
      .insertInto('sites')
      .values({ account_id: account.id, created_at: '2026-11-15T12:00:00Z' } as never)
      .returning('id')
      .executeTakeFirstOrThrow();
    await db.kysely
      .insertInto('articles')
      .values({
        site_id: site.id,
        account_id: account.id,
        body: '<p><a href="https://partner.example/" data-service-protected="backlink">partner</a></p>',
        created_at: '2026-11-15T12:00:00Z',
        updated_at: '2026-11-15T12:00:00Z',
      } as never)
      .execute();
    expect(await migrate(db)).toEqual(names.slice(5));
    expect(await recorded(db)).toEqual(names);
    const article = await db.kysely.selectFrom('articles').select('protected_links').executeTakeFirstOrThrow();
    expect(JSON.parse(article.protected_links!)).toHaveLength(1);
  });

  it('019 gives a moved site’s articles, backlinks and revisions its account, and moves them with it from then on', async () => {
    const db = (await emptyDatabase())();
    const before = migrations.filter((m) => m.name < '019_site_owner');
    const schema = db.dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)).rows[0]?.schema : undefined;
    const migrator = new Migrator({
      db: db.kysely,
      migrationTableSchema: schema,
      provider: { getMigrations: async () => Object.fromEntries(before.map((m) => [m.name, { up: (kysely: Kysely<unknown>) => m.up(migrationContext(kysely, db.dialect)) }])) },
    });
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const at = '2026-11-15T12:00:00Z';
    const account = async (name: string) => (await db.kysely.insertInto('accounts').values({ name, created_at: at }).returning('id').executeTakeFirstOrThrow()).id;
    const [first, second] = [await account('First'), await account('Second')];
    const site = (await db.kysely.insertInto('sites').values({ account_id: first, created_at: at } as never).returning('id').executeTakeFirstOrThrow()).id;
    const article = (
      await db.kysely
        .insertInto('articles')
        .values({ site_id: site, account_id: first, body: '<p>x</p>', created_at: at, updated_at: at } as never)
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    await db.kysely.insertInto('backlinks').values({ site_id: site, account_id: first, category: 'industry' } as never).execute();
    await db.kysely.insertInto('revisions').values({ article_id: article, account_id: first, body: '<p>x</p>', origin: 'rewrite', created_at: at } as never).execute();
    // An operator's move before this migration: the rows stayed with the old account.
    await db.kysely.updateTable('sites').set({ account_id: second }).where('id', '=', site).execute();
    const owners = async () =>
      Promise.all(
        (['articles', 'backlinks', 'revisions'] as const).map(async (table) => (await db.kysely.selectFrom(table).select('account_id').execute()).map((row) => row.account_id)),
      );
    expect(await owners()).toEqual([[first], [first], [first]]);

    expect(await migrate(db)).toEqual(migrations.filter((m) => m.name >= '019_site_owner').map((m) => m.name));
    expect(await owners()).toEqual([[second], [second], [second]]);
    // The search index (020, rebuilt by 023 on SQLite) holds the article written before it.
    const indexed = db.dialect === 'postgres'
      ? await sql`select id from articles where (coalesce(title, '') || chr(10) || body) like '%<p>x%'`.execute(db.kysely)
      : await sql`select rowid from article_search where article_search match '"<p>" AND "p>x"'`.execute(db.kysely);
    expect(indexed.rows).toHaveLength(1);
    await db.kysely.updateTable('sites').set({ account_id: first }).where('id', '=', site).execute();
    expect(await owners()).toEqual([[first], [first], [first]]);
  });

  it.skipIf(!testDatabaseUrl)('let nodes starting together on one PostgreSQL database take turns, old bookkeeping or new', async () => {
    const fresh = await emptyDatabase();
    const results = await Promise.all([migrate(fresh()), migrate(fresh()), migrate(fresh())]);
    expect(results.flat().sort()).toEqual(names);
    const legacy = await emptyDatabase();
    await legacyMigrate(legacy());
    const adopted = await Promise.all([migrate(legacy()), migrate(legacy()), migrate(legacy())]);
    expect(adopted.flat()).toEqual(names.slice(6));
    expect(await recorded(legacy())).toEqual(names);
  });

  it.skipIf(dialectName !== 'postgres')('PostgreSQL: article and revision bodies are compressed with lz4 from 014 on', async () => {
    const db = (await emptyDatabase())();
    await migrate(db);
    const compression = await sql<{ table: string; method: string }>`select c.relname as "table", a.attcompression as method
      from pg_attribute a join pg_class c on c.oid = a.attrelid
      where c.relnamespace = current_schema()::regnamespace and a.attname = 'body' and c.relname in ('articles', 'revisions')
      order by c.relname`.execute(db.kysely);
    expect(compression.rows).toEqual([
      { table: 'articles', method: 'l' },
      { table: 'revisions', method: 'l' },
    ]);
  });

  it('refuse a database that recorded a migration this code does not know, changing nothing', async () => {
    const db = (await emptyDatabase())();
    await migrate(db);
    await sql`insert into kysely_migration (name, timestamp) values ('999_future', ${new Date().toISOString()})`.execute(db.kysely);
    await expect(migrate(db)).rejects.toThrow(/999_future is missing/);
  });
});
