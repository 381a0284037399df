import type { AnchorageMigration } from './columns.js';

export const sessionFlash: AnchorageMigration = {
  name: '007_session_flash',
  async up({ db }) {
    // A one-time message for the page after a redirect (POST-redirect-GET), sealed with the
    // session's cookie secret: a new API key is shown once without ever being readable here.
    await db.schema.alterTable('sessions').addColumn('flash', 'text').execute();
  },
};
