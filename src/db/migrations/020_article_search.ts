import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';

/**
 * SQLite: the FTS5 index of every article's title and body, by trigrams, case-sensitive (a
 * case-insensitive search looks up each trigram's case variants). External content: the index
 * holds no copy of the text. Triggers keep it in step with every write, the service's, the
 * CLI's and an operator's SQL alike.
 */
const sqliteStatements = [
  `create virtual table article_search using fts5(title, body, content='articles', content_rowid='id', tokenize='trigram case_sensitive 1')`,
  `create trigger article_search_insert after insert on articles begin
     insert into article_search (rowid, title, body) values (new.id, new.title, new.body);
   end`,
  `create trigger article_search_delete after delete on articles begin
     insert into article_search (article_search, rowid, title, body) values ('delete', old.id, old.title, old.body);
   end`,
  `create trigger article_search_update after update of title, body on articles begin
     insert into article_search (article_search, rowid, title, body) values ('delete', old.id, old.title, old.body);
     insert into article_search (rowid, title, body) values (new.id, new.title, new.body);
   end`,
  `insert into article_search (article_search) values ('rebuild')`,
];

/** Taken while pg_trgm is installed: migrations of several schemas of one database take turns. */
const extensionLock = 7321020;

/**
 * The search index of articles (`searchArticles`): literal substrings of the title or the body.
 * PostgreSQL: a pg_trgm GIN index of both together, which the database keeps in step by itself.
 * The extension goes in `public` unless it is there already, so that dropping one schema (a test
 * database's) never drops it from under the others.
 */
export const articleSearch: AnchorageMigration = {
  name: '020_article_search',
  async up({ db, dialect }) {
    if (dialect === 'postgres') {
      await sql`select pg_advisory_xact_lock(${sql.lit(extensionLock)})`.execute(db);
      await sql`create extension if not exists pg_trgm schema public`.execute(db);
      const found = await sql<{ schema: string }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
      const schema = found.rows[0]!.schema;
      await sql`create index articles_search on articles using gin ((coalesce(title, '') || chr(10) || body) ${sql.id(schema, 'gin_trgm_ops')})`.execute(db);
      return;
    }
    for (const statement of sqliteStatements) await sql.raw(statement).execute(db);
  },
};
