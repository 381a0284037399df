import { type AnchorageMigration, withId } from './columns.js';

export const passwordLinks: AnchorageMigration = {
  name: '022_password_links',
  async up({ db, dialect }) {
    // A one-time link that lets a user staff created choose their password; only its hash is kept.
    await withId(db.schema.createTable('password_links'), dialect)
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_by', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema.createIndex('password_links_user').on('password_links').column('user_id').execute();
  },
};
