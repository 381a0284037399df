import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';

/**
 * SQLite: a written article's text goes into the search index (023) after the write, in the
 * off-loop connection's thread (`db/search-index.ts`), no longer in the write's own statements. The
 * triggers note the article in `article_search_pending`; a search also checks the site's noted
 * articles, so it stays exact until the index has them. A deleted article leaves the
 * index at once (a contentless delete by rowid costs no tokenizing). PostgreSQL's index is unchanged.
 */
const sqliteStatements = [
  'create table article_search_pending (article_id integer primary key)',
  'drop trigger article_search_insert',
  'drop trigger article_search_update',
  'drop trigger article_search_delete',
  `create trigger article_search_insert after insert on articles begin
     insert or ignore into article_search_pending (article_id) values (new.id);
   end`,
  `create trigger article_search_update after update of title, body on articles begin
     insert or ignore into article_search_pending (article_id) values (new.id);
   end`,
  `create trigger article_search_delete after delete on articles begin
     delete from article_search where rowid = old.id;
     delete from article_search_pending where article_id = old.id;
   end`,
];

export const searchIndexInBackground: AnchorageMigration = {
  name: '028_search_index_in_background',
  async up({ db, dialect }) {
    if (dialect === 'postgres') return;
    for (const statement of sqliteStatements) await sql.raw(statement).execute(db);
  },
};
