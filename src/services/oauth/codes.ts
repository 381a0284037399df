import type { Kysely } from 'kysely';
import { randomBase62, sha256 } from '../../core/secrets.js';
import type { Clock } from '../../core/time.js';
import { toTimestamp } from '../../core/time.js';
import type { Database } from '../../db/schema.js';
import type { OAuthClients } from './clients.js';
import type { OAuthGrants } from './grants.js';
import { pkceHolds } from './pkce.js';
import { invalidGrant, OAuthProblem } from './problems.js';
import { narrowedResource } from './resources.js';
import { issueTokens, type TokenSet } from './tokens.js';

const codeSeconds = 600;

/** Authorization codes: issued after the user's Allow, exchanged once for a connection and its tokens. */
export class OAuthCodes {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly clients: OAuthClients,
    private readonly grants: OAuthGrants,
  ) {}

  /** A single-use authorization code, valid for 10 minutes, bound to everything the token request must repeat. */
  async issue(input: { clientId: string; userId: number; redirectUri: string; codeChallenge: string; resource: string; scope: string }): Promise<string> {
    const code = randomBase62(43);
    const now = this.clock.now();
    // Housekeeping: expired codes can do nothing any more, not even reveal a replay.
    await this.db.deleteFrom('oauth_codes').where('expires_at', '<=', toTimestamp(now)).execute();
    await this.db
      .insertInto('oauth_codes')
      .values({
        code_hash: sha256(code),
        client_id: input.clientId,
        user_id: input.userId,
        redirect_uri: input.redirectUri,
        code_challenge: input.codeChallenge,
        resource: input.resource,
        scope: input.scope,
        created_at: toTimestamp(now),
        expires_at: toTimestamp(new Date(now.getTime() + codeSeconds * 1000)),
      })
      .execute();
    return code;
  }

  /** The authorization_code grant: checks the code, PKCE and bindings, then opens the connection. */
  async exchange(input: {
    code: string;
    clientId: string;
    redirectUri: string | undefined;
    codeVerifier: string;
    resource: string | undefined;
  }): Promise<TokenSet> {
    await this.clients.require(input.clientId);
    const now = toTimestamp(this.clock.now());
    const codeHash = sha256(input.code);
    // One transaction marks the code used and opens the connection: the request that marks it
    // holds the row until its grant is recorded, so a request racing it with the same code waits,
    // finds the code spent with that grant, and revokes it (RFC 6749 §4.1.2). A refusal is
    // returned, not thrown, so that it commits: a failed attempt still spends the code.
    let revokedGrant = false;
    const outcome = await this.db.transaction().execute(async (trx): Promise<TokenSet | OAuthProblem> => {
      const code = await trx
        .updateTable('oauth_codes')
        .set({ used_at: now })
        .where('code_hash', '=', codeHash)
        .where('used_at', 'is', null)
        .returningAll()
        .executeTakeFirst();
      if (!code) {
        const spent = await trx.selectFrom('oauth_codes').select('grant_id').where('code_hash', '=', codeHash).executeTakeFirst();
        if (spent?.grant_id) {
          await this.grants.revoke(spent.grant_id, trx);
          revokedGrant = true;
        }
        return invalidGrant(spent ? 'The authorization code was used already.' : 'The authorization code is unknown.');
      }
      if (code.expires_at <= now) return invalidGrant('The authorization code has expired.');
      if (code.client_id !== input.clientId) return invalidGrant('The authorization code was issued to another client.');
      if (code.redirect_uri !== input.redirectUri) return invalidGrant('redirect_uri differs from the authorization request.');
      if (!pkceHolds(input.codeVerifier, code.code_challenge)) return invalidGrant('The PKCE code_verifier does not match.');
      const resource = narrowedResource(code.resource, input.resource, 'the authorization request');
      if (resource instanceof OAuthProblem) return resource;
      const user = await trx.selectFrom('users').select('account_id').where('id', '=', code.user_id).executeTakeFirstOrThrow();
      const grant = await trx
        .insertInto('oauth_grants')
        .values({ user_id: code.user_id, account_id: user.account_id, client_id: code.client_id, scope: code.scope, created_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx.updateTable('oauth_codes').set({ grant_id: grant.id }).where('code_hash', '=', codeHash).execute();
      return issueTokens(trx, this.clock, grant.id, code.scope, resource);
    });
    if (revokedGrant) this.grants.forgetKeptTokens();
    if (outcome instanceof OAuthProblem) throw outcome;
    return outcome;
  }
}
