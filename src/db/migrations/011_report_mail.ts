import { type AnchorageMigration, withId } from './columns.js';

export const reportMail: AnchorageMigration = {
  name: '011_report_mail',
  async up({ db, dialect }) {
    // An address that receives one site's monthly report; its unsubscribe token only ever unsubscribes it.
    await withId(db.schema.createTable('report_subscriptions'), dialect)
      .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
      .addColumn('site_id', 'integer', (c) => c.notNull().references('sites.id'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('unsubscribe_token', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('report_subscriptions_site_address').unique().on('report_subscriptions').columns(['site_id', 'address']).execute();
    // One row per report sent: the primary key makes a restart or a second node skip what went out.
    await db.schema
      .createTable('report_mail_sent')
      .addColumn('subscription_id', 'integer', (c) => c.notNull())
      .addColumn('month', 'text', (c) => c.notNull())
      .addColumn('sent_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('report_mail_sent_pk', ['subscription_id', 'month'])
      .execute();
  },
};
