import type { AnchorageMigration } from './columns.js';
import { createDescendingIndex, withId } from './columns.js';

export const foundation: AnchorageMigration = {
  name: '001_foundation',
  async up(ctx) {
    const { db, dialect } = ctx;
    await withId(db.schema.createTable('accounts'), dialect)
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await withId(db.schema.createTable('users'), dialect)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('staff', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('users_account').on('users').column('account_id').execute();

    await withId(db.schema.createTable('api_keys'), dialect)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('display_prefix', 'text', (c) => c.notNull())
      .addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id', 'id']).execute();

    await withId(db.schema.createTable('sites'), dialect)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('name', 'text')
      .addColumn('website_url', 'text')
      .addColumn('website_url_lc', 'text')
      .addColumn('language', 'text')
      .addColumn('country', 'text')
      .addColumn('geographic_scope', 'text')
      .addColumn('industry', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sites_account').on('sites').columns(['account_id', 'id']).execute();

    await withId(db.schema.createTable('articles'), dialect)
      .addColumn('site_id', 'integer', (c) => c.notNull().references('sites.id'))
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('title', 'text')
      .addColumn('url', 'text')
      .addColumn('status', 'text')
      .addColumn('published_at', 'text')
      .addColumn('target_keyword', 'text')
      .addColumn('word_count', 'integer')
      .addColumn('featured_image_url', 'text')
      .addColumn('meta_description', 'text')
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('current_revision_id', 'integer')
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // listArticles: by site, newest first, with or without a status filter; stats count on the second.
    await createDescendingIndex(ctx, 'articles_site_published', 'articles', ['site_id'], 'published_at');
    await createDescendingIndex(ctx, 'articles_site_status_published', 'articles', ['site_id', 'status'], 'published_at');

    await withId(db.schema.createTable('backlinks'), dialect)
      .addColumn('site_id', 'integer', (c) => c.notNull().references('sites.id'))
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('acquired_at', 'text')
      .addColumn('source_domain', 'text')
      .addColumn('source_url', 'text')
      .addColumn('target_url', 'text')
      .addColumn('anchor_text', 'text')
      .addColumn('anchor_type', 'text')
      .addColumn('status', 'text')
      .addColumn('category', 'text', (c) => c.notNull())
      .execute();
    await createDescendingIndex(ctx, 'backlinks_site_acquired', 'backlinks', ['site_id'], 'acquired_at');
    // getStats: counts per category in a date range without touching the rows.
    await db.schema
      .createIndex('backlinks_site_category_acquired')
      .on('backlinks')
      .columns(['site_id', 'category', 'acquired_at'])
      .execute();

    await withId(db.schema.createTable('revisions'), dialect)
      .addColumn('article_id', 'integer', (c) => c.notNull().references('articles.id'))
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('title', 'text')
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('meta_description', 'text')
      .addColumn('featured_image_url', 'text')
      .addColumn('origin', 'text', (c) => c.notNull())
      .addColumn('user_id', 'integer')
      .addColumn('api_key_id', 'integer')
      .addColumn('mcp_grant_id', 'integer')
      .addColumn('reason', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('revisions_article').on('revisions').columns(['article_id', 'id']).execute();

    await withId(db.schema.createTable('activity_log'), dialect)
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('account_id', 'integer')
      .addColumn('user_id', 'integer')
      .addColumn('api_key_id', 'integer')
      .addColumn('mcp_grant_id', 'integer')
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('operation', 'text')
      .addColumn('method', 'text')
      .addColumn('path', 'text')
      .addColumn('tool', 'text')
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('client_ip', 'text')
      .addColumn('user_agent', 'text')
      .addColumn('request_id', 'text')
      .execute();
    await db.schema.createIndex('activity_account_id').on('activity_log').columns(['account_id', 'id']).execute();
  },
};
