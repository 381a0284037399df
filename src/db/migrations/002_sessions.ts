import type { AnchorageMigration } from './columns.js';

export const sessions: AnchorageMigration = {
  name: '002_sessions',
  async up({ db }) {
    // Browser sessions: a row from the first visit (for CSRF), bound to a user on sign-in.
    await db.schema
      .createTable('sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'integer', (c) => c.references('users.id'))
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
  },
};
