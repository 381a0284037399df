import type { Kysely } from 'kysely';
import { z } from 'zod';
import { sha256 } from '../../core/secrets.js';
import type { Clock } from '../../core/time.js';
import { toTimestamp } from '../../core/time.js';
import type { Database } from '../../db/schema.js';
import { type DocumentFetcher, fetchClientMetadataDocument, isMetadataDocumentUrl } from './metadata-documents.js';
import { OAuthProblem } from './problems.js';
import { redirectUriProblem } from './redirect-uris.js';

export interface OAuthClient {
  clientId: string;
  kind: 'dcr' | 'cimd';
  name: string | null;
  redirectUris: string[];
}

/** A client metadata document is fetched again after this long. */
const documentCacheMs = 3_600_000;

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

/** The applications that may ask for access: registered (RFC 7591) or described by a metadata document. */
export class OAuthClients {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly fetchDocument: DocumentFetcher = fetchClientMetadataDocument,
  ) {}

  /**
   * Registers a public client (RFC 7591). The id is derived from the metadata, so a client that
   * registers again on every connection gets the same id back instead of a new row each time.
   * `admitNew` runs only when the metadata is new: re-registering a known client is always free.
   */
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
   * `admitFetch` runs before every fetch, and may refuse it; without it nothing is fetched, and a
   * document client is known only as it was last kept.
   */
  async client(clientId: string, admitFetch?: () => Promise<void>): Promise<OAuthClient | undefined> {
    const known = await this.known(clientId);
    if (!isMetadataDocumentUrl(clientId)) return known?.client.kind === 'dcr' ? known.client : undefined;
    if (known && (!admitFetch || this.clock.now().getTime() - Date.parse(known.fetchedAt) < documentCacheMs)) return known.client;
    if (!admitFetch) return undefined;
    await admitFetch();
    let document: unknown;
    try {
      document = await this.fetchDocument(clientId);
    } catch {
      // One answer for every failure: telling a refused connection from a timeout or a status
      // would let anyone probe hosts and ports through this server.
      throw new OAuthProblem('invalid_client', 'The client metadata document could not be loaded.');
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

  /** The token endpoint's check: the client is one we know (no fetching). */
  async require(clientId: string): Promise<void> {
    if (!clientId) throw new OAuthProblem('invalid_request', 'client_id is required.');
    if (!(await this.known(clientId))) throw new OAuthProblem('invalid_client', 'The client is unknown.', 401);
  }

  /** A client as stored (no fetching). */
  private async known(clientId: string): Promise<{ client: OAuthClient; fetchedAt: string } | undefined> {
    // No client id holds U+0000, which PostgreSQL text cannot even be compared with: unknown.
    if (clientId.includes('\0')) return undefined;
    const row = await this.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
    if (!row) return undefined;
    const redirectUris = JSON.parse(row.redirect_uris) as string[];
    return { client: { clientId: row.client_id, kind: row.kind, name: row.client_name, redirectUris }, fetchedAt: row.created_at };
  }
}
