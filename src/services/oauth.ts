import { createHash, timingSafeEqual } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { randomBase62, sha256 } from '../core/secrets.js';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import type { Database } from '../db/schema.js';
import type { Actor, RequestInfo, Scope } from './actor.js';

/** The OAuth scopes of the agent interface and the credential scopes they carry. */
export const readScope = 'articles:read';
export const writeScope = 'articles:write';
export const supportedScopes = [readScope, writeScope];

const accessTokenSeconds = 3600;
const refreshTokenSeconds = 30 * 24 * 3600;
const codeSeconds = 600;
/** A client metadata document is fetched again after this long. */
const documentCacheMs = 3_600_000;
/** last_used_at is written at most this often per grant, to keep tool calls free of writes. */
const lastUsedGranularityMs = 60_000;

const accessTokenPattern = /^mcp_at_[0-9A-Za-z]{40}$/;

/** The error codes of RFC 6749 §5.2, RFC 7591 §3.2.2 and RFC 8707 that we answer with. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'invalid_target'
  | 'invalid_client_metadata'
  | 'invalid_redirect_uri'
  | 'temporarily_unavailable';

/** An OAuth protocol error: sent as `{error, error_description}`, not as the API's Error body. */
export class OAuthProblem extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    description: string,
    readonly status = 400,
  ) {
    super(description);
  }

  toBody(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.message };
  }
}

const invalidGrant = (description: string) => new OAuthProblem('invalid_grant', description);

export interface OAuthClient {
  clientId: string;
  kind: 'dcr' | 'cimd';
  name: string | null;
  redirectUris: string[];
}

export interface TokenSet {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface GrantSummary {
  id: number;
  clientName: string | null;
  clientId: string;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
}

/** The credential scopes of an OAuth scope string; `articles:read` is always granted. */
export const scopesOf = (scope: string): Scope[] => (scope.split(' ').includes(writeScope) ? ['read', 'write'] : ['read']);

export const scopeOf = (write: boolean): string => (write ? `${readScope} ${writeScope}` : readScope);

/** Whether a requested scope string asks for writing; tokens we do not know (`mcp`, `offline_access`) are ignored. */
export function requestsWrite(requested: string | undefined): boolean {
  const ours = (requested ?? '').split(' ').filter((s) => supportedScopes.includes(s));
  return ours.length === 0 || ours.includes(writeScope);
}

/** PKCE S256: base64url(SHA-256(verifier)). */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');

const verifierPattern = /^[A-Za-z0-9\-._~]{43,128}$/;

function pkceHolds(verifier: string, challenge: string): boolean {
  if (!verifierPattern.test(verifier)) return false;
  const expected = Buffer.from(challenge);
  const actual = Buffer.from(s256(verifier));
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Why a redirect URI cannot be registered: https only, except http on a loopback host (RFC 8252). */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${uri} is not an absolute URL.`;
  }
  if (url.hash || uri.includes('#')) return `${uri} must not carry a fragment.`;
  if (url.username || url.password) return `${uri} must not carry user information.`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && loopbackHosts.has(url.hostname)) return undefined;
  return `${uri} must use https (http only on 127.0.0.1, [::1] or localhost).`;
}

/** Exact match, except that a loopback http redirect may use any port (RFC 8252 §7.3). */
export function redirectUriMatches(registered: readonly string[], uri: string): boolean {
  if (registered.includes(uri)) return true;
  if (redirectUriProblem(uri) !== undefined) return false;
  const withoutPort = (u: string) => {
    const url = new URL(u);
    if (url.protocol !== 'http:' || !loopbackHosts.has(url.hostname)) return undefined;
    url.port = '';
    return url.href;
  };
  const presented = withoutPort(uri);
  return presented !== undefined && registered.some((r) => redirectUriProblem(r) === undefined && withoutPort(r) === presented);
}

/** A client id that names a Client ID Metadata Document: https, a path, nothing ambiguous. */
export function isMetadataDocumentUrl(clientId: string): boolean {
  if (!clientId.startsWith('https://') || clientId.length > 2000) return false;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  const segments = url.pathname.split('/');
  return (
    url.href === clientId &&
    url.pathname !== '/' &&
    !url.hash &&
    !url.username &&
    !url.password &&
    !segments.includes('.') &&
    !segments.includes('..')
  );
}

/** Addresses a fetched client metadata URL must never reach: private, loopback, link-local, reserved. */
const nonPublic = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
}
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are checked against the IPv4 rules by BlockList itself.
for (const [network, prefix] of [
  ['::', 127],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && !nonPublic.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Resolves like dns.lookup, but fails when any address is not public, so a rebinding name cannot slip through. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    if (addresses.length === 0 || addresses.some((a) => !isPublicAddress(a.address))) {
      return callback(new Error(`${hostname} resolves to a non-public address.`), '', 0);
    }
    if (options.all) return callback(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};

const documentMaxBytes = 5 * 1024;
const documentTimeoutMs = 5_000;

export type DocumentFetcher = (url: string) => Promise<unknown>;

/** GETs a client metadata document: public addresses only, at most 5 KB, within 5 s, no redirects. */
export const fetchClientMetadataDocument: DocumentFetcher = (url) =>
  new Promise((resolve, reject) => {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !isPublicAddress(host)) return reject(new Error(`${host} is not a public address.`));
    const request = httpsRequest(
      url,
      { method: 'GET', lookup: publicOnlyLookup, headers: { accept: 'application/json' }, signal: AbortSignal.timeout(documentTimeoutMs) },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          return reject(new Error(`The document answered ${response.statusCode}; redirects are not followed.`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > documentMaxBytes) request.destroy(new Error('The document is larger than 5 KB.'));
          else chunks.push(chunk);
        });
        response.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(new Error('The document is not JSON.'));
          }
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end();
  });

/**
 * Registration metadata (RFC 7591 §2), read tolerantly: other members are ignored, and the
 * requested token_endpoint_auth_method is replaced by "none" (every client here is public).
 */
const clientMetadataSchema = z.object({
  redirect_uris: z.array(z.string().max(2000)).min(1).max(10),
  client_name: z.string().optional(),
  grant_types: z.array(z.string()).optional(),
  response_types: z.array(z.string()).optional(),
});

/** Control characters would let a name pretend to be something else on the consent page. */
const cleanName = (name: string | undefined): string | null =>
  name === undefined ? null : name.replace(/[\p{Cc}\p{Cf}]/gu, '').trim().slice(0, 100) || null;

/** Checks client metadata; the accepted form is always a public client using the code flow. */
function acceptedMetadata(input: unknown): { client_name: string | null; redirect_uris: string[] } {
  const parsed = clientMetadataSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new OAuthProblem('invalid_client_metadata', `${issue.path.join('.') || 'metadata'}: ${issue.message}`);
  }
  const metadata = parsed.data;
  for (const uri of metadata.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthProblem('invalid_redirect_uri', problem);
  }
  if (metadata.grant_types && !metadata.grant_types.includes('authorization_code')) {
    throw new OAuthProblem('invalid_client_metadata', 'grant_types must include authorization_code.');
  }
  if (metadata.response_types && !metadata.response_types.includes('code')) {
    throw new OAuthProblem('invalid_client_metadata', 'response_types must include code.');
  }
  return { client_name: cleanName(metadata.client_name), redirect_uris: metadata.redirect_uris };
}

/**
 * The authorization server's state: clients, codes, grants (a user's connections) and tokens.
 * Codes and tokens are random and stored only as SHA-256 hashes.
 */
export class OAuthService {
  private readonly lastUsedWritten = new Map<number, number>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly fetchDocument: DocumentFetcher = fetchClientMetadataDocument,
  ) {}

  /**
   * Registers a public client (RFC 7591). The id is derived from the metadata, so a client that
   * registers again on every connection gets the same id back instead of a new row each time.
   */
  /** `admitNew` runs only when the metadata is new: re-registering a known client is always free. */
  async register(input: unknown, admitNew: () => Promise<void>) {
    const metadata = acceptedMetadata(input);
    const canonical = JSON.stringify(metadata);
    const clientId = `mcp_${sha256(canonical).slice(0, 32)}`;
    const known = await this.db.selectFrom('oauth_clients').select('client_id').where('client_id', '=', clientId).executeTakeFirst();
    if (!known) await admitNew();
    await this.db
      .insertInto('oauth_clients')
      .values({
        client_id: clientId,
        kind: 'dcr',
        client_name: metadata.client_name,
        redirect_uris: JSON.stringify(metadata.redirect_uris),
        metadata: canonical,
        created_at: toTimestamp(this.clock.now()),
      })
      .onConflict((oc) => oc.column('client_id').doNothing())
      .execute();
    const row = await this.db.selectFrom('oauth_clients').select('created_at').where('client_id', '=', clientId).executeTakeFirstOrThrow();
    return {
      client_id: clientId,
      client_id_issued_at: Math.floor(Date.parse(row.created_at) / 1000),
      ...(metadata.client_name !== null ? { client_name: metadata.client_name } : {}),
      redirect_uris: metadata.redirect_uris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  /**
   * The client of an authorization request: registered, or described by the metadata document
   * at its https client id (fetched, checked, and kept for an hour). Undefined when unknown.
   */
  async client(clientId: string): Promise<OAuthClient | undefined> {
    const known = await this.knownClient(clientId);
    if (!isMetadataDocumentUrl(clientId)) return known?.client.kind === 'dcr' ? known.client : undefined;
    if (known && this.clock.now().getTime() - Date.parse(known.fetchedAt) < documentCacheMs) return known.client;
    let document: unknown;
    try {
      document = await this.fetchDocument(clientId);
    } catch (error) {
      throw new OAuthProblem('invalid_client', `The client metadata document could not be loaded: ${(error as Error).message}`);
    }
    const metadata = acceptedMetadata(document);
    const declared = document as { client_id?: unknown; token_endpoint_auth_method?: unknown; client_secret?: unknown };
    if (declared.client_id !== clientId) {
      throw new OAuthProblem('invalid_client', 'The client metadata document names a different client_id.');
    }
    if ((declared.token_endpoint_auth_method ?? 'none') !== 'none' || declared.client_secret !== undefined) {
      throw new OAuthProblem('invalid_client', 'Only public clients (token_endpoint_auth_method "none") are supported.');
    }
    const row = {
      kind: 'cimd' as const,
      client_name: metadata.client_name,
      redirect_uris: JSON.stringify(metadata.redirect_uris),
      metadata: JSON.stringify(metadata),
      created_at: toTimestamp(this.clock.now()),
    };
    await this.db
      .insertInto('oauth_clients')
      .values({ client_id: clientId, ...row })
      .onConflict((oc) => oc.column('client_id').doUpdateSet(row))
      .execute();
    return { clientId, kind: 'cimd', name: metadata.client_name, redirectUris: metadata.redirect_uris };
  }

  /** A client as stored (no fetching): what the token endpoint checks against. */
  private async knownClient(clientId: string): Promise<{ client: OAuthClient; fetchedAt: string } | undefined> {
    const row = await this.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
    if (!row) return undefined;
    const redirectUris = JSON.parse(row.redirect_uris) as string[];
    return { client: { clientId: row.client_id, kind: row.kind, name: row.client_name, redirectUris }, fetchedAt: row.created_at };
  }

  /** A single-use authorization code, valid for 10 minutes, bound to everything the token request must repeat. */
  async issueCode(input: {
    clientId: string;
    userId: number;
    redirectUri: string;
    codeChallenge: string;
    resource: string;
    scope: string;
  }): Promise<string> {
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
  async exchangeCode(input: {
    code: string;
    clientId: string;
    redirectUri: string | undefined;
    codeVerifier: string;
    resource: string | undefined;
  }): Promise<TokenSet> {
    await this.requireClient(input.clientId);
    const now = toTimestamp(this.clock.now());
    const codeHash = sha256(input.code);
    // Marking the code used comes first and on its own: a failed attempt still spends it.
    const code = await this.db
      .updateTable('oauth_codes')
      .set({ used_at: now })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    if (!code) {
      const spent = await this.db.selectFrom('oauth_codes').select('grant_id').where('code_hash', '=', codeHash).executeTakeFirst();
      // RFC 6749 §4.1.2: a code presented twice revokes what it was exchanged for.
      if (spent?.grant_id) await this.revokeGrantById(spent.grant_id);
      throw invalidGrant(spent ? 'The authorization code was used already.' : 'The authorization code is unknown.');
    }
    if (code.expires_at <= now) throw invalidGrant('The authorization code has expired.');
    if (code.client_id !== input.clientId) throw invalidGrant('The authorization code was issued to another client.');
    if (code.redirect_uri !== input.redirectUri) throw invalidGrant('redirect_uri differs from the authorization request.');
    if (!pkceHolds(input.codeVerifier, code.code_challenge)) throw invalidGrant('The PKCE code_verifier does not match.');
    if (input.resource !== undefined && input.resource !== code.resource) {
      throw new OAuthProblem('invalid_target', 'resource differs from the authorization request.');
    }
    return this.db.transaction().execute(async (trx) => {
      const user = await trx.selectFrom('users').select('account_id').where('id', '=', code.user_id).executeTakeFirstOrThrow();
      const grant = await trx
        .insertInto('oauth_grants')
        .values({ user_id: code.user_id, account_id: user.account_id, client_id: code.client_id, scope: code.scope, created_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx.updateTable('oauth_codes').set({ grant_id: grant.id }).where('code_hash', '=', codeHash).execute();
      return this.issueTokens(trx, grant.id, code.scope, code.resource);
    });
  }

  /** The refresh_token grant: rotates the pair; a rotated token presented again revokes the connection. */
  async refresh(input: { refreshToken: string; clientId: string; resource: string | undefined }): Promise<TokenSet> {
    await this.requireClient(input.clientId);
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
      await this.revokeGrantById(token.grant_id);
      throw invalidGrant('The refresh token was used already; the connection has been revoked.');
    }
    if (token.revoked_at !== null || token.grant_revoked_at !== null) throw invalidGrant('The connection has been revoked.');
    if (token.expires_at <= now) throw invalidGrant('The refresh token has expired.');
    if (input.resource !== undefined && input.resource !== token.resource) {
      throw new OAuthProblem('invalid_target', 'resource differs from the one the token was issued for.');
    }
    return this.db.transaction().execute(async (trx) => {
      const rotated = await trx
        .updateTable('oauth_tokens')
        .set({ rotated_at: now })
        .where('token_hash', '=', tokenHash)
        .where('rotated_at', 'is', null)
        .executeTakeFirst();
      // Two requests raced with one token: one of them is a replay.
      if (Number(rotated.numUpdatedRows) === 0) throw invalidGrant('The refresh token was used already.');
      // Housekeeping: the connection's expired tokens can do nothing any more.
      await trx.deleteFrom('oauth_tokens').where('grant_id', '=', token.grant_id).where('expires_at', '<=', now).execute();
      return this.issueTokens(trx, token.grant_id, token.scope, token.resource);
    });
  }

  private async requireClient(clientId: string): Promise<void> {
    if (!clientId) throw new OAuthProblem('invalid_request', 'client_id is required.');
    if (!(await this.knownClient(clientId))) throw new OAuthProblem('invalid_client', 'The client is unknown.', 401);
  }

  private async issueTokens(trx: Kysely<Database>, grantId: number, scope: string, resource: string): Promise<TokenSet> {
    const now = this.clock.now();
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

  /**
   * Token revocation (RFC 7009): a refresh token ends its whole connection, an access token
   * only itself. Unknown tokens and other clients' tokens change nothing, silently.
   */
  async revokeToken(token: string, clientId: string | undefined): Promise<void> {
    const row = await this.db
      .selectFrom('oauth_tokens')
      .innerJoin('oauth_grants', 'oauth_grants.id', 'oauth_tokens.grant_id')
      .select(['oauth_tokens.token_hash', 'oauth_tokens.kind', 'oauth_tokens.grant_id', 'oauth_grants.client_id'])
      .where('oauth_tokens.token_hash', '=', sha256(token))
      .executeTakeFirst();
    if (!row || (clientId !== undefined && clientId !== row.client_id)) return;
    if (row.kind === 'refresh') return this.revokeGrantById(row.grant_id);
    await this.db
      .updateTable('oauth_tokens')
      .set({ revoked_at: toTimestamp(this.clock.now()) })
      .where('token_hash', '=', row.token_hash)
      .execute();
  }

  /** The actor of a valid access token issued for `expectedResource`, or undefined. */
  async authenticate(accessToken: string, expectedResource: string, request: RequestInfo | null): Promise<Actor | undefined> {
    if (!accessTokenPattern.test(accessToken)) return undefined;
    const row = await this.db
      .selectFrom('oauth_tokens')
      .innerJoin('oauth_grants', 'oauth_grants.id', 'oauth_tokens.grant_id')
      .select(['oauth_tokens.grant_id', 'oauth_tokens.resource', 'oauth_grants.user_id', 'oauth_grants.account_id', 'oauth_grants.scope'])
      .where('oauth_tokens.token_hash', '=', sha256(accessToken))
      .where('oauth_tokens.kind', '=', 'access')
      .where('oauth_tokens.revoked_at', 'is', null)
      .where('oauth_tokens.expires_at', '>', toTimestamp(this.clock.now()))
      .where('oauth_grants.revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row || row.resource !== expectedResource) return undefined;
    this.touch(row.grant_id);
    return {
      accountId: row.account_id,
      userId: row.user_id,
      credential: { kind: 'mcp_grant', id: row.grant_id },
      channel: 'mcp',
      // A connection sees its user's own account only, even for staff.
      staff: false,
      scopes: scopesOf(row.scope),
      request,
    };
  }

  /** The user's open connections, newest first. */
  async grants(userId: number): Promise<GrantSummary[]> {
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
  async revokeGrant(userId: number, grantId: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_grants')
      .set({ revoked_at: toTimestamp(this.clock.now()) })
      .where('id', '=', grantId)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Every token of a revoked grant fails from then on: authentication and refresh check the grant. */
  private async revokeGrantById(grantId: number): Promise<void> {
    await this.db
      .updateTable('oauth_grants')
      .set({ revoked_at: toTimestamp(this.clock.now()) })
      .where('id', '=', grantId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  private touch(grantId: number): void {
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
