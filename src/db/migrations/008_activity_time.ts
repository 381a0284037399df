import type { AnchorageMigration } from './columns.js';

export const activityTime: AnchorageMigration = {
  name: '008_activity_time',
  async up({ db }) {
    // The activity log is read newest first by time, ties by id: reads are logged in batches and
    // writes inside their transaction, so ids alone are not in the order the calls were made.
    await db.schema.createIndex('activity_account_time').on('activity_log').columns(['account_id', 'created_at', 'id']).execute();
  },
};
