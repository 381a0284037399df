import { type Kysely, sql } from 'kysely';
import { randomBase62, sha256 } from '../../core/secrets.js';
import type { Clock } from '../../core/time.js';
import { toTimestamp } from '../../core/time.js';
import { precompiled } from '../../db/precompiled.js';
import type { Database } from '../../db/schema.js';
import type { Actor, RequestInfo } from '../actor.js';
import type { OAuthClients } from './clients.js';
import type { OAuthGrants } from './grants.js';
import type { KeptAccessTokens } from './kept-tokens.js';
import { invalidGrant, OAuthProblem } from './problems.js';
import { narrowedResource, resourcesOf } from './resources.js';
import { scopesOf } from './scopes.js';

export interface TokenSet {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const accessTokenSeconds = 3600;
const refreshTokenSeconds = 30 * 24 * 3600;

const accessTokenPattern = /^mcp_at_[0-9A-Za-z]{40}$/;

/** A new access and refresh token pair for a grant, stored as hashes inside the caller's transaction. */
export async function issueTokens(trx: Kysely<Database>, clock: Clock, grantId: number, scope: string, resource: string): Promise<TokenSet> {
  const now = clock.now();
  const accessToken = `mcp_at_${randomBase62(40)}`;
  const refreshToken = `mcp_rt_${randomBase62(40)}`;
  const row = (token: string, kind: 'access' | 'refresh', seconds: number) => ({
    token_hash: sha256(token),
    grant_id: grantId,
    kind,
    resource,
    created_at: toTimestamp(now),
    expires_at: toTimestamp(new Date(now.getTime() + seconds * 1000)),
  });
  await trx
    .insertInto('oauth_tokens')
    .values([row(accessToken, 'access', accessTokenSeconds), row(refreshToken, 'refresh', refreshTokenSeconds)])
    .execute();
  return { access_token: accessToken, token_type: 'Bearer', expires_in: accessTokenSeconds, refresh_token: refreshToken, scope };
}

/** Access tokens (1 hour) and refresh tokens (30 days, rotating) of the connections. */
export class OAuthTokens {
  /** The unrevoked access token of an open connection with a hash. */
  private readonly accessByHash;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly clients: OAuthClients,
    private readonly grants: OAuthGrants,
    /**
     * Access tokens already accepted, as API keys are kept (`KeysService`): a tool call's token
     * costs no query. A revocation elsewhere is heard through the `tokens` change watch; this
     * process's own revocations forget them at once.
     */
    private readonly kept: KeptAccessTokens,
  ) {
    this.accessByHash = precompiled(
      db,
      db
        .selectFrom('oauth_tokens')
        .innerJoin('oauth_grants', 'oauth_grants.id', 'oauth_tokens.grant_id')
        .select(['oauth_tokens.grant_id', 'oauth_tokens.resource', 'oauth_tokens.expires_at', 'oauth_grants.user_id', 'oauth_grants.account_id', 'oauth_grants.scope'])
        .where('oauth_tokens.token_hash', '=', '')
        // A literal: the one parameter is the hash.
        .where('oauth_tokens.kind', '=', sql.lit('access'))
        .where('oauth_tokens.revoked_at', 'is', null)
        .where('oauth_grants.revoked_at', 'is', null),
    );
  }

  /** The refresh_token grant: rotates the pair; a rotated token presented again revokes the connection. */
  async refresh(input: { refreshToken: string; clientId: string; resource: string | undefined }): Promise<TokenSet> {
    await this.clients.require(input.clientId);
    const now = toTimestamp(this.clock.now());
    const tokenHash = sha256(input.refreshToken);
    const token = await this.db
      .selectFrom('oauth_tokens')
      .innerJoin('oauth_grants', 'oauth_grants.id', 'oauth_tokens.grant_id')
      .select([
        'oauth_tokens.grant_id',
        'oauth_tokens.resource',
        'oauth_tokens.expires_at',
        'oauth_tokens.rotated_at',
        'oauth_tokens.revoked_at',
        'oauth_grants.client_id',
        'oauth_grants.scope',
        'oauth_grants.revoked_at as grant_revoked_at',
      ])
      .where('oauth_tokens.token_hash', '=', tokenHash)
      .where('oauth_tokens.kind', '=', 'refresh')
      .executeTakeFirst();
    if (!token || token.client_id !== input.clientId) throw invalidGrant('The refresh token is unknown.');
    if (token.rotated_at !== null) {
      await this.grants.revoke(token.grant_id);
      throw invalidGrant('The refresh token was used already; the connection has been revoked.');
    }
    if (token.revoked_at !== null || token.grant_revoked_at !== null) throw invalidGrant('The connection has been revoked.');
    if (token.expires_at <= now) throw invalidGrant('The refresh token has expired.');
    const resource = narrowedResource(token.resource, input.resource, 'the one the token was issued for');
    if (resource instanceof OAuthProblem) throw resource;
    const outcome = await this.db.transaction().execute(async (trx): Promise<TokenSet | OAuthProblem> => {
      const rotated = await trx
        .updateTable('oauth_tokens')
        .set({ rotated_at: now })
        .where('token_hash', '=', tokenHash)
        .where('rotated_at', 'is', null)
        .executeTakeFirst();
      // Two requests raced with one token, and only one can rotate it: the other is a replay, and
      // the revocation commits with this transaction (returned, not thrown), ending what the
      // winner was issued too.
      if (Number(rotated.numUpdatedRows) === 0) {
        await this.grants.revoke(token.grant_id, trx);
        return invalidGrant('The refresh token was used already; the connection has been revoked.');
      }
      // The connection's expired tokens stay for housekeeping: deleting them here would tell every
      // node to forget the access tokens it keeps (migration 025), at each refresh.
      return issueTokens(trx, this.clock, token.grant_id, token.scope, resource);
    });
    if (outcome instanceof OAuthProblem) {
      // The replay's revocation has committed: a token read meanwhile is not kept.
      this.grants.forgetKeptTokens();
      throw outcome;
    }
    return outcome;
  }

  /**
   * Token revocation (RFC 7009): a refresh token ends its whole connection, an access token
   * only itself. Unknown tokens and other clients' tokens change nothing, silently.
   */
  async revoke(token: string, clientId: string | undefined): Promise<void> {
    const row = await this.db
      .selectFrom('oauth_tokens')
      .innerJoin('oauth_grants', 'oauth_grants.id', 'oauth_tokens.grant_id')
      .select(['oauth_tokens.token_hash', 'oauth_tokens.kind', 'oauth_tokens.grant_id', 'oauth_grants.client_id'])
      .where('oauth_tokens.token_hash', '=', sha256(token))
      .executeTakeFirst();
    if (!row || (clientId !== undefined && clientId !== row.client_id)) return;
    if (row.kind === 'refresh') return this.grants.revoke(row.grant_id);
    const result = await this.db
      .updateTable('oauth_tokens')
      .set({ revoked_at: toTimestamp(this.clock.now()) })
      .where('token_hash', '=', row.token_hash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    // Only a change forgets: revoking a revoked token again cannot empty what the node keeps.
    if (Number(result.numUpdatedRows) > 0) this.kept.forget();
  }

  /** The actor of a valid access token bound to `expectedResource` (among others, if it names none), or undefined. */
  async authenticate(accessToken: string, expectedResource: string, request: RequestInfo | null): Promise<Actor | undefined> {
    if (!accessTokenPattern.test(accessToken)) return undefined;
    const hash = sha256(accessToken);
    const token = await this.kept.get(hash, async () => {
      const row = (await this.accessByHash(hash))[0];
      return (
        row && {
          grantId: row.grant_id,
          userId: row.user_id,
          accountId: row.account_id,
          scopes: scopesOf(row.scope),
          resources: resourcesOf(row.resource),
          expiresAt: Date.parse(row.expires_at),
        }
      );
    });
    if (!token || token.expiresAt <= this.clock.now().getTime() || !token.resources.includes(expectedResource)) return undefined;
    this.grants.touch(token.grantId);
    return {
      accountId: token.accountId,
      userId: token.userId,
      credential: { kind: 'mcp_grant', id: token.grantId },
      channel: 'mcp',
      // A connection sees its user's own account only, even for staff.
      staff: false,
      scopes: token.scopes,
      request,
    };
  }
}
