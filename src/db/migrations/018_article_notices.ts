import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';
import { counting } from './017_change_counts.js';

/** The columns of an article a read answers with, its owner and its version. */
const answered = 'site_id, account_id, title, url, status, published_at, target_keyword, word_count, featured_image_url, meta_description, body, protected_links, version';

/** SQLite: the triggers that count the changes of articles (a row each: not an import's update of each new article's revision). */
export const sqliteArticleTriggers = [
  counting('articles_changed', `update of ${answered} on articles`, 'articles'),
  counting('articles_deleted', 'delete on articles', 'articles'),
];

/**
 * The `articles` topic of migrations 013 (PostgreSQL's notices) and 017 (SQLite's counts): a node
 * keeps the answers of the articles it read (`ArticlesService.getAnswer`) until one changes,
 * whoever changes it. A new article needs none (a node keeps only articles it found); on SQLite, a
 * change of what no answer shows (its current revision, its sanitizer's version) needs none either.
 */
export const articleNotices: AnchorageMigration = {
  name: '018_article_notices',
  async up({ db, dialect }) {
    if (dialect === 'postgres') {
      // Any update: a transaction's notices of one topic arrive as one, so an import's update of
      // each new article's revision costs one; and no column of articles depends on the trigger.
      await sql`create trigger articles_changed after update or delete or truncate on articles for each statement execute function anchorage_changed('articles')`.execute(db);
      return;
    }
    // A database made at this version has the row already (017 counts every topic).
    await sql`insert into change_counts (topic, n) values ('articles', 0) on conflict do nothing`.execute(db);
    for (const trigger of sqliteArticleTriggers) await sql.raw(trigger).execute(db);
  },
};
