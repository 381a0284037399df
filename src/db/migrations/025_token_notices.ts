import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';

/**
 * When a trigger of the `tokens` topic fires, in either database: a change to an access token a
 * node may keep (its binding, expiry or revocation), an unrevoked access token deleted (a revoked
 * one was told of when it was revoked), or a change to its connection (revoked, moved to another
 * user or account, its scope changed). Refresh tokens (rotation), a connection's `last_used_at`
 * and new rows need none: a node keeps only access tokens it found.
 */
const tokenChanges = [
  { name: 'oauth_tokens_changed', after: 'update of token_hash, grant_id, kind, resource, expires_at, revoked_at on oauth_tokens', when: `old.kind = 'access'` },
  { name: 'oauth_tokens_deleted', after: 'delete on oauth_tokens', when: `old.kind = 'access' and old.revoked_at is null` },
  { name: 'oauth_grants_changed', after: 'update of user_id, account_id, scope, revoked_at on oauth_grants', when: undefined },
  { name: 'oauth_grants_deleted', after: 'delete on oauth_grants', when: undefined },
];

/** SQLite's triggers of the topic (each row counts once in `change_counts`, as migration 017's do). */
export const sqliteTokenTriggers = tokenChanges.map(
  ({ name, after, when }) =>
    `create trigger ${name} after ${after}${when ? ` when ${when}` : ''} begin update change_counts set n = n + 1 where topic = 'tokens'; end`,
);

/**
 * The `tokens` topic of the change notices (migrations 013 and 017): a node keeps the OAuth access
 * tokens it has accepted (`OAuthTokens.authenticate`) until one may have changed, whoever changes
 * it (another node, the CLI, SQL by hand). Row triggers with conditions, on both databases, so that
 * the refresh of a connection (a new pair, the old refresh token marked rotated) tells no node to
 * forget what it keeps.
 */
export const tokenNotices: AnchorageMigration = {
  name: '025_token_notices',
  async up({ db, dialect }) {
    if (dialect === 'postgres') {
      // PostgreSQL sends a transaction's notices of one topic once, however many rows fired them.
      for (const { name, after, when } of tokenChanges) {
        await sql
          .raw(`create trigger ${name} after ${after} for each row${when ? ` when (${when})` : ''} execute function anchorage_changed('tokens')`)
          .execute(db);
      }
      for (const table of ['oauth_tokens', 'oauth_grants']) {
        await sql.raw(`create trigger ${table}_truncated after truncate on ${table} for each statement execute function anchorage_changed('tokens')`).execute(db);
      }
      return;
    }
    await sql`insert into change_counts (topic, n) values ('tokens', 0) on conflict do nothing`.execute(db);
    for (const trigger of sqliteTokenTriggers) await sql.raw(trigger).execute(db);
  },
};
