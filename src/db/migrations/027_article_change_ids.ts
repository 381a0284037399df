import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';

/** The columns of an article a read answers with, its owner and its version (migration 018's list). */
const answered = 'site_id, account_id, title, url, status, published_at, target_keyword, word_count, featured_image_url, meta_description, body, protected_links, version';

/** Changes a SQLite node has not read yet stay this many behind the newest before they go. */
const kept = 10_000;

/** SQLite: the triggers that log the id of each changed or deleted article, and drop old entries. */
export const sqliteArticleTriggers = [
  `create trigger articles_changed after update of ${answered} on articles begin insert into article_changes (article_id) values (old.id); end`,
  'create trigger articles_deleted after delete on articles begin insert into article_changes (article_id) values (old.id); end',
  `create trigger article_changes_pruned after insert on article_changes when new.seq % 1000 = 0 begin delete from article_changes where seq <= new.seq - ${kept}; end`,
];

/** PostgreSQL: the trigger that sends the notice of each changed or deleted article. */
export const postgresArticleTrigger = `create trigger articles_changed after update of ${answered} or delete on articles for each row execute function anchorage_article_changed()`;

/**
 * The `articles` topic names the articles that changed, so that a node forgets only their kept
 * answers (`ArticlesService.getAnswer`), not every one (migration 018 told only that some article
 * changed). PostgreSQL: a notice `articles:<id>` per changed row; a truncation still says
 * `articles`. SQLite: the id goes in `article_changes`, which a node reads from where it last
 * stopped (`Db.watchArticleChanges`); each thousandth entry drops those `kept` behind it.
 */
export const articleChangeIds: AnchorageMigration = {
  name: '027_article_change_ids',
  async up({ db, dialect }) {
    if (dialect === 'postgres') {
      await sql`create function anchorage_article_changed() returns trigger language plpgsql as $$
        begin
          perform pg_notify('anchorage_changes', 'articles:' || old.id);
          return null;
        end $$`.execute(db);
      await sql`drop trigger articles_changed on articles`.execute(db);
      await sql.raw(postgresArticleTrigger).execute(db);
      await sql`create trigger articles_truncated after truncate on articles for each statement execute function anchorage_changed('articles')`.execute(db);
      return;
    }
    await sql`create table article_changes (seq integer primary key autoincrement, article_id integer not null)`.execute(db);
    await sql`drop trigger articles_changed`.execute(db);
    await sql`drop trigger articles_deleted`.execute(db);
    for (const trigger of sqliteArticleTriggers) await sql.raw(trigger).execute(db);
  },
};
