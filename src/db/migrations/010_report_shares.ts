import { type AnchorageMigration, withId } from './columns.js';

export const reportShares: AnchorageMigration = {
  name: '010_report_shares',
  async up({ db, dialect }) {
    // A read-only link to one site's monthly report: only the token's hash is kept, as for API keys.
    await withId(db.schema.createTable('report_shares'), dialect)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('site_id', 'integer', (c) => c.notNull().references('sites.id'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .addColumn('last_opened_at', 'text')
      .execute();
    await db.schema.createIndex('report_shares_site').on('report_shares').columns(['site_id', 'id']).execute();
  },
};
