import type { AnchorageMigration } from './columns.js';
import { withId } from './columns.js';

export const oauth: AnchorageMigration = {
  name: '004_oauth',
  async up({ db, dialect }) {
    // MCP clients: registered (RFC 7591) or known by their metadata document URL (CIMD).
    await db.schema
      .createTable('oauth_clients')
      .addColumn('client_id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('client_name', 'text')
      .addColumn('redirect_uris', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    // One row per connection a user allowed; revoking it ends every token issued under it.
    await withId(db.schema.createTable('oauth_grants'), dialect)
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.client_id'))
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('oauth_grants_user').on('oauth_grants').columns(['user_id', 'id']).execute();

    await db.schema
      .createTable('oauth_codes')
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.client_id'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('code_challenge', 'text', (c) => c.notNull())
      .addColumn('resource', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      // The grant the code was exchanged for, so a replayed code can revoke it.
      .addColumn('grant_id', 'integer', (c) => c.references('oauth_grants.id'))
      .execute();

    await db.schema
      .createTable('oauth_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('grant_id', 'integer', (c) => c.notNull().references('oauth_grants.id'))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('resource', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('rotated_at', 'text')
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('oauth_tokens_grant').on('oauth_tokens').column('grant_id').execute();
  },
};
