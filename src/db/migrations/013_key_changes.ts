import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';

/** The channel PostgreSQL notifies when a change may make a key an API request presents invalid. */
export const keyChangesChannel = 'anchorage_key_changes';

export const keyChanges: AnchorageMigration = {
  name: '013_key_changes',
  async up({ db, dialect }) {
    // SQLite: each process sees every other connection's commits (`PRAGMA data_version`).
    if (dialect !== 'postgres') return;
    // Every writer (a node, the CLI, an outside script) tells the nodes that keep valid keys in
    // memory when a key is revoked or changed, or its user changes or goes: the notice is sent
    // when the change commits, and not at all when it rolls back.
    await sql`create function anchorage_key_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify(${sql.lit(keyChangesChannel)}, '');
        return null;
      end $$`.execute(db);
    await sql`create trigger api_keys_changed after update of key_hash, revoked_at, read_only, account_id, user_id or delete or truncate
      on api_keys for each statement execute function anchorage_key_changed()`.execute(db);
    await sql`create trigger users_changed after update of staff, account_id or delete or truncate
      on users for each statement execute function anchorage_key_changed()`.execute(db);
  },
};
