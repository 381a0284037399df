import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';
import { type ChangeTopic, changeTopics } from './013_change_notices.js';

/** A trigger named `name` that adds one to `topic`'s count `after` a change of its table. */
export const counting = (name: string, after: string, topic: ChangeTopic): string =>
  `create trigger ${name} after ${after} begin update change_counts set n = n + 1 where topic = '${topic}'; end`;

/**
 * SQLite's counterpart of migration 013's notices: a count per topic (`keys`, `sites`) that
 * triggers move whenever the rows a node keeps in memory change, whoever changes them (a node, the
 * CLI, an outside script). A node reads the counts (`Db.watchChanges`). It watched `PRAGMA
 * data_version` before, which every other connection's commit moves: the off-loop connection's
 * restart of the write-ahead log after each checkpoint then emptied the kept keys and sites four
 * times a second. The triggers watch the same columns as 013's.
 */
export const sqliteChangeTriggers = [
  counting('api_keys_changed', 'update of key_hash, revoked_at, read_only, account_id, user_id on api_keys', 'keys'),
  counting('api_keys_deleted', 'delete on api_keys', 'keys'),
  counting('users_changed', 'update of staff, account_id on users', 'keys'),
  counting('users_deleted', 'delete on users', 'keys'),
  counting('sites_changed', 'update on sites', 'sites'),
  counting('sites_deleted', 'delete on sites', 'sites'),
];

export const changeCounts: AnchorageMigration = {
  name: '017_change_counts',
  async up({ db, dialect }) {
    if (dialect !== 'sqlite') return;
    await sql`create table change_counts (topic text primary key, n integer not null)`.execute(db);
    for (const topic of changeTopics) await sql`insert into change_counts (topic, n) values (${topic}, 0)`.execute(db);
    for (const trigger of sqliteChangeTriggers) await sql.raw(trigger).execute(db);
  },
};
