import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';

/** What a site's account owns with it: each row carries the account, so that reads check it alone. */
const moveWithSite = `
  update articles set account_id = new.account_id where site_id = new.id;
  update backlinks set account_id = new.account_id where site_id = new.id;
  update revisions set account_id = new.account_id where article_id in (select id from articles where site_id = new.id);`;

/** A database whose sites were moved before this migration: each row joins its site's account. */
const repairs = [
  'update articles set account_id = (select s.account_id from sites s where s.id = articles.site_id) where account_id <> (select s.account_id from sites s where s.id = articles.site_id)',
  'update backlinks set account_id = (select s.account_id from sites s where s.id = backlinks.site_id) where account_id <> (select s.account_id from sites s where s.id = backlinks.site_id)',
  'update revisions set account_id = (select a.account_id from articles a where a.id = revisions.article_id) where account_id <> (select a.account_id from articles a where a.id = revisions.article_id)',
];

/**
 * Ownership follows the site: whatever moves a site to another account (`anchorage site move`, or
 * an operator's SQL) moves its articles, backlinks and revisions in the same statement, so no read
 * or write can find them under the old account. The moved rows' own triggers tell every node to
 * forget what it kept of them (migrations 013, 017, 018).
 */
export const siteOwner: AnchorageMigration = {
  name: '019_site_owner',
  async up({ db, dialect }) {
    for (const repair of repairs) await sql.raw(repair).execute(db);
    if (dialect === 'postgres') {
      await sql`create function anchorage_site_moved() returns trigger language plpgsql as $$
        begin ${sql.raw(moveWithSite)}
          return null;
        end $$`.execute(db);
      await sql`create trigger sites_owner_moves after update of account_id on sites for each row
        when (old.account_id is distinct from new.account_id) execute function anchorage_site_moved()`.execute(db);
      return;
    }
    await sql`create trigger sites_owner_moves after update of account_id on sites
      when old.account_id is not new.account_id begin ${sql.raw(moveWithSite)} end`.execute(db);
  },
};
