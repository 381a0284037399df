import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';

/**
 * SQLite: the search index of 020 rebuilt leaner. It keeps no positions (`detail=none`) and no
 * link to the articles' text (contentless, deleted by rowid), so a write tokenizes only the new
 * text and stores one entry per trigram: an index entry now says only that an article holds a
 * trigram, and core checks every candidate's text as before. PostgreSQL's index is unchanged.
 */
const sqliteStatements = [
  'drop trigger article_search_insert',
  'drop trigger article_search_delete',
  'drop trigger article_search_update',
  'drop table article_search',
  `create virtual table article_search using fts5(title, body, content='', contentless_delete=1, detail=none, tokenize='trigram case_sensitive 1')`,
  `create trigger article_search_insert after insert on articles begin
     insert into article_search (rowid, title, body) values (new.id, new.title, new.body);
   end`,
  `create trigger article_search_delete after delete on articles begin
     delete from article_search where rowid = old.id;
   end`,
  `create trigger article_search_update after update of title, body on articles begin
     delete from article_search where rowid = old.id;
     insert into article_search (rowid, title, body) values (new.id, new.title, new.body);
   end`,
  'insert into article_search (rowid, title, body) select id, title, body from articles',
];

export const leanArticleSearch: AnchorageMigration = {
  name: '023_lean_article_search',
  async up({ db, dialect }) {
    if (dialect === 'postgres') return;
    for (const statement of sqliteStatements) await sql.raw(statement).execute(db);
  },
};
