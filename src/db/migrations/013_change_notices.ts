import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';

/** The channel PostgreSQL notifies when rows a node keeps in memory change; the payload names them. */
export const changesChannel = 'anchorage_changes';

/**
 * What a node keeps in memory, as the payload of a notice: `keys`, the API keys it has looked up
 * (a key or its user changed or went); `sites`, the sites it has read (one changed or went);
 * `articles`, the articles it has answered with (one changed or went: migration 018).
 */
export const changeTopics = ['keys', 'sites', 'articles'] as const;
export type ChangeTopic = (typeof changeTopics)[number];

export const changeNotices: AnchorageMigration = {
  name: '013_change_notices',
  async up({ db, dialect }) {
    // SQLite: migration 017's triggers count the same changes in a table, which each process reads.
    if (dialect !== 'postgres') return;
    // Every writer (a node, the CLI, an outside script) tells the nodes: the notice is sent when
    // the change commits, and not at all when it rolls back. New rows need none (nodes keep only
    // rows they found).
    await sql`create function anchorage_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify(${sql.lit(changesChannel)}, tg_argv[0]);
        return null;
      end $$`.execute(db);
    const notify = (topic: ChangeTopic) => sql.raw(`execute function anchorage_changed('${topic}')`);
    await sql`create trigger api_keys_changed after update of key_hash, revoked_at, read_only, account_id, user_id or delete or truncate
      on api_keys for each statement ${notify('keys')}`.execute(db);
    await sql`create trigger users_changed after update of staff, account_id or delete or truncate
      on users for each statement ${notify('keys')}`.execute(db);
    await sql`create trigger sites_changed after update or delete or truncate on sites for each statement ${notify('sites')}`.execute(db);
  },
};
