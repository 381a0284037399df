import type { AnchorageMigration } from './columns.js';

export const bodySanitizer: AnchorageMigration = {
  name: '012_body_sanitizer',
  async up({ db }) {
    // The sanitiser version whose output the body is (core/html.ts SANITIZER_VERSION): a PATCH of
    // plain text in such a body needs no sanitising. Bodies stored before stay null and take the
    // full path once.
    await db.schema.alterTable('articles').addColumn('body_sanitizer', 'integer').execute();
  },
};
