import type { AnchorageMigration } from './columns.js';

export const writes: AnchorageMigration = {
  name: '003_writes',
  async up({ db, dialect }) {
    // Article writes per account and UTC day, incremented in the write's own transaction.
    await db.schema
      .createTable('edit_counts')
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('edit_counts_pk', ['account_id', 'day'])
      .execute();

    // Idempotency-Key: the first response per account and key, kept 24 hours.
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('response', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
      .execute();
    await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();

    // Uploaded images when MEDIA_STORE=db, so nodes need no shared disk.
    await db.schema
      .createTable('media')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('bytes', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  },
};
