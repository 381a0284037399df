import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';

/**
 * An upload's file in a table of its own, written and read only by the child process that checks
 * and applies it: SQLite rewrites a whole row on any update, so a serving node that moved an
 * upload's state rewrote its megabytes too, holding its event loop. Deleting an upload deletes
 * its file.
 */
export const importUploadFiles: AnchorageMigration = {
  name: '026_import_upload_files',
  async up({ db, dialect }) {
    await db.schema
      .createTable('import_upload_files')
      .addColumn('upload_id', 'integer', (c) => c.primaryKey().references('import_uploads.id').onDelete('cascade'))
      .addColumn('bytes', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
      .execute();
    await sql`insert into import_upload_files (upload_id, bytes) select id, bytes from import_uploads where length(bytes) > 0`.execute(db);
    await db.schema.alterTable('import_uploads').dropColumn('bytes').execute();
  },
};
