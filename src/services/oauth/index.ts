import type { Kysely } from 'kysely';
import { KeptRows } from '../../core/kept-rows.js';
import type { Clock } from '../../core/time.js';
import type { Database } from '../../db/schema.js';
import { OAuthClients } from './clients.js';
import { OAuthCodes } from './codes.js';
import { OAuthGrants } from './grants.js';
import { type DocumentFetcher, fetchClientMetadataDocument } from './metadata-documents.js';
import type { KeptAccessToken } from './kept-tokens.js';
import { OAuthTokens } from './tokens.js';

export type { OAuthClient } from './clients.js';
export type { GrantSummary } from './grants.js';
export { type DocumentFetcher, fetchClientMetadataDocument, isMetadataDocumentUrl, isPublicAddress } from './metadata-documents.js';
export { s256 } from './pkce.js';
export { type OAuthErrorCode, OAuthProblem } from './problems.js';
export { redirectUriMatches, redirectUriProblem } from './redirect-uris.js';
export { everyResource } from './resources.js';
export { readScope, requestsWrite, scopeOf, scopesOf, supportedScopes, writeScope } from './scopes.js';
export type { TokenSet } from './tokens.js';
export { type Listener, type OAuthUrls, oauthUrlsOf, otherResourceMessage, ourResource } from './urls.js';

/** Access tokens a node keeps in memory (by hash); past this many the oldest is dropped. */
const keptTokensMax = 10_000;

/**
 * The authorization server's state, one noun per module: clients, codes, grants (a user's
 * connections) and tokens. Codes and tokens are random and stored only as SHA-256 hashes.
 */
export class OAuthService {
  private readonly clients: OAuthClients;
  private readonly codes: OAuthCodes;
  private readonly connections: OAuthGrants;
  private readonly tokens: OAuthTokens;
  private readonly keptTokens: KeptRows<string, KeptAccessToken>;

  /**
   * `tokensChangedElsewhere` is the `tokens` change watch (`Db.watchChanges('tokens')`); without
   * one, nothing is kept and every token is looked up.
   */
  constructor(
    db: Kysely<Database>,
    clock: Clock,
    fetchDocument: DocumentFetcher = fetchClientMetadataDocument,
    tokensChangedElsewhere: () => boolean = () => true,
  ) {
    this.keptTokens = new KeptRows<string, KeptAccessToken>(tokensChangedElsewhere, keptTokensMax);
    this.clients = new OAuthClients(db, clock, fetchDocument);
    this.connections = new OAuthGrants(db, clock, this.keptTokens);
    this.codes = new OAuthCodes(db, clock, this.clients, this.connections);
    this.tokens = new OAuthTokens(db, clock, this.clients, this.connections, this.keptTokens);
  }

  /** Forgets the access tokens this process keeps: connections changed here outside this service (an account deleted). */
  forgetKeptTokens(): void {
    this.keptTokens.forget();
  }

  register: OAuthClients['register'] = (input, admitNew) => this.clients.register(input, admitNew);
  client: OAuthClients['client'] = (clientId, admitFetch) => this.clients.client(clientId, admitFetch);
  issueCode: OAuthCodes['issue'] = (input) => this.codes.issue(input);
  exchangeCode: OAuthCodes['exchange'] = (input) => this.codes.exchange(input);
  refresh: OAuthTokens['refresh'] = (input) => this.tokens.refresh(input);
  revokeToken: OAuthTokens['revoke'] = (token, clientId) => this.tokens.revoke(token, clientId);
  authenticate: OAuthTokens['authenticate'] = (accessToken, expectedResource, request) =>
    this.tokens.authenticate(accessToken, expectedResource, request);
  grants: OAuthGrants['list'] = (userId) => this.connections.list(userId);
  revokeGrant: OAuthGrants['revokeOwn'] = (userId, grantId) => this.connections.revokeOwn(userId, grantId);
}
