import type { Kysely } from 'kysely';
import type { Clock } from '../../core/time.js';
import { toTimestamp } from '../../core/time.js';
import type { Database } from '../../db/schema.js';
import type { Scope } from '../actor.js';
import { scopesOf } from './scopes.js';
import type { KeptAccessTokens } from './kept-tokens.js';

export interface GrantSummary {
  id: number;
  clientName: string | null;
  clientId: string;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
}

/** last_used_at is written at most this often per grant, to keep tool calls free of writes. */
const lastUsedGranularityMs = 60_000;

/** A user's connections: what each application was allowed, until the user (or a replay) revokes it. */
export class OAuthGrants {
  private readonly lastUsedWritten = new Map<number, number>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    /** The access tokens this node keeps: a revoked connection's are forgotten at once. */
    private readonly keptTokens: Pick<KeptAccessTokens, 'forget'>,
  ) {}

  /** The user's open connections, newest first. */
  async list(userId: number): Promise<GrantSummary[]> {
    const rows = await this.db
      .selectFrom('oauth_grants')
      .innerJoin('oauth_clients', 'oauth_clients.client_id', 'oauth_grants.client_id')
      .select([
        'oauth_grants.id',
        'oauth_grants.client_id',
        'oauth_grants.scope',
        'oauth_grants.created_at',
        'oauth_grants.last_used_at',
        'oauth_clients.client_name',
      ])
      .where('oauth_grants.user_id', '=', userId)
      .where('oauth_grants.revoked_at', 'is', null)
      .orderBy('oauth_grants.id', 'desc')
      .execute();
    return rows.map((row) => ({
      id: row.id,
      clientName: row.client_name,
      clientId: row.client_id,
      scopes: scopesOf(row.scope),
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
    }));
  }

  /** Revokes one of the user's connections; returns whether there was one to revoke. */
  async revokeOwn(userId: number, grantId: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_grants')
      .set({ revoked_at: toTimestamp(this.clock.now()) })
      .where('id', '=', grantId)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    const revoked = Number(result.numUpdatedRows) > 0;
    if (revoked) this.keptTokens.forget();
    return revoked;
  }

  /**
   * Every token of a revoked grant fails from then on: authentication and refresh check the grant.
   * `conn` is the caller's transaction when the revocation must commit with it; the caller then
   * forgets the kept tokens again once it has committed (`forgetKeptTokens`).
   */
  async revoke(grantId: number, conn: Kysely<Database> = this.db): Promise<void> {
    const result = await conn
      .updateTable('oauth_grants')
      .set({ revoked_at: toTimestamp(this.clock.now()) })
      .where('id', '=', grantId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    // Only a change forgets: a request that changes nothing cannot empty what the node keeps.
    if (Number(result.numUpdatedRows) > 0) this.keptTokens.forget();
  }

  /** After a transaction that revoked a grant committed: a token read meanwhile is not kept. */
  forgetKeptTokens(): void {
    this.keptTokens.forget();
  }

  /** Notes that the connection was used (shown in the UI), at most once a minute. */
  touch(grantId: number): void {
    const now = this.clock.now();
    if (now.getTime() - (this.lastUsedWritten.get(grantId) ?? 0) < lastUsedGranularityMs) return;
    this.lastUsedWritten.set(grantId, now.getTime());
    void this.db
      .updateTable('oauth_grants')
      .set({ last_used_at: toTimestamp(now) })
      .where('id', '=', grantId)
      .execute()
      .catch(() => this.lastUsedWritten.delete(grantId));
  }
}
