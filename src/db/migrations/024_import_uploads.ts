import { type AnchorageMigration, withId } from './columns.js';

/**
 * An import file a staff member uploaded in the UI, kept between its dry run and its apply: in
 * the database, so whichever node answers the next request finds it, with the apply's progress.
 */
export const importUploads: AnchorageMigration = {
  name: '024_import_uploads',
  async up({ db, dialect }) {
    await withId(db.schema.createTable('import_uploads'), dialect)
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('session_hash', 'text', (c) => c.notNull())
      .addColumn('bytes', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('plan', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('progress', 'text')
      .addColumn('outcome', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('import_uploads_created').on('import_uploads').column('created_at').execute();
  },
};
