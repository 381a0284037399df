import type { AnchorageMigration } from './columns.js';

export const countsVersion: AnchorageMigration = {
  name: '016_counts_version',
  async up({ db }) {
    // Moves whenever a site's counters change other than by the import that creates the site
    // (`anchorage recount`; a migration that rewrites counters must move it too). A node keeps the
    // counters it read with their version, and the statement that reads a page with them checks
    // that the version still holds.
    await db.schema
      .alterTable('sites')
      .addColumn('counts_version', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
