import { registrationsPerHour } from '../../src/services/limits.js';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  fetchClientMetadataDocument,
  isMetadataDocumentUrl,
  isPublicAddress,
  OAuthService,
  redirectUriMatches,
  requestsWrite,
} from '../../src/services/oauth/index.js';
import { createCustomer, startHarness, useHarness } from '../helpers/harness.js';
import {
  authorizationUrl,
  authorizeInBrowser,
  browse,
  connectWithOAuth,
  CookieJar,
  formFields,
  pkce,
  registerClient,
  signIn,
  TestOAuthProvider,
} from '../helpers/oauth-client.js';

const harness = useHarness({ listen: true });
let base: string;

beforeAll(async () => {
  base = harness.settings.publicUrl;
});

const register = (body: unknown) =>
  fetch(`${base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('metadata', () => {
  it('serves protected-resource metadata at both addresses, naming our issuer and resource', async () => {
    const root = await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json();
    const mcp = await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(root).toEqual(mcp);
    expect(mcp).toMatchObject({
      resource: `${base}/mcp`,
      authorization_servers: [base],
      scopes_supported: ['articles:read', 'articles:write'],
      bearer_methods_supported: ['header'],
    });
  });

  it('serves authorization-server metadata (RFC 8414 and the OpenID address alike)', async () => {
    const metadata = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json();
    expect(await (await fetch(`${base}/.well-known/openid-configuration`)).json()).toEqual(metadata);
    expect(metadata).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['articles:read', 'articles:write'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
  });

  it('keeps MCP and OAuth out of the API’s OpenAPI document', async () => {
    const document = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths).filter((path) => /mcp|oauth|well-known/.test(path))).toEqual([]);
  });

  it('takes the resource and issuer from the settings, never from the request', async () => {
    const separate = await startHarness({ env: { PUBLIC_URL: 'https://anchorage.example', MCP_PUBLIC_URL: 'https://mcp.anchorage.example/mcp' } });
    try {
      const metadata = await separate.app.inject({ url: '/.well-known/oauth-protected-resource/mcp', headers: { host: 'evil.example' } });
      expect(metadata.json()).toMatchObject({ resource: 'https://mcp.anchorage.example/mcp', authorization_servers: ['https://anchorage.example'] });
      const unauthorized = await separate.app.inject({ method: 'POST', url: '/mcp', headers: { host: 'evil.example' }, payload: {} });
      expect(unauthorized.headers['www-authenticate']).toBe(
        'Bearer resource_metadata="https://anchorage.example/.well-known/oauth-protected-resource/mcp", scope="articles:read articles:write"',
      );
    } finally {
      await separate.close();
    }
  });
});

describe('dynamic client registration', () => {
  it('registers a public client, and the same metadata again gets the same client', async () => {
    const metadata = {
      client_name: 'Claude',
      redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'mcp offline_access',
    };
    const first = await register(metadata);
    expect(first.status).toBe(201);
    const body = (await first.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      client_name: 'Claude',
      redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    });
    expect(body.client_secret).toBeUndefined();
    const again = (await (await register(metadata)).json()) as Record<string, unknown>;
    expect(again.client_id).toBe(body.client_id);
    const rows = await harness.services.db.kysely.selectFrom('oauth_clients').selectAll().where('client_id', '=', body.client_id as string).execute();
    expect(rows).toHaveLength(1);
  });

  it('refuses redirect URIs that are not https or loopback http, and bad metadata', async () => {
    const cases: [unknown, string][] = [
      [{ redirect_uris: ['http://client.example/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['myapp://callback'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://client.example/cb#frag'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['not a url'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [] }, 'invalid_client_metadata'],
      [{ client_name: 'x' }, 'invalid_client_metadata'],
      [{ redirect_uris: ['https://client.example/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
      [{ redirect_uris: ['https://client.example/cb'], response_types: ['token'] }, 'invalid_client_metadata'],
    ];
    for (const [metadata, error] of cases) {
      const response = await register(metadata);
      expect(response.status, JSON.stringify(metadata)).toBe(400);
      expect(await response.json()).toMatchObject({ error });
    }
    const huge = await register({ redirect_uris: ['https://client.example/cb'], client_name: 'x'.repeat(20_000) });
    expect(huge.status).toBe(400);
    expect(await huge.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('matches redirect URIs exactly, except for the port of a loopback address', () => {
    const registered = ['http://127.0.0.1/callback', 'http://localhost:33418/', 'https://client.example/cb'];
    expect(redirectUriMatches(registered, 'http://127.0.0.1:51234/callback')).toBe(true);
    expect(redirectUriMatches(registered, 'http://localhost:9/')).toBe(true);
    expect(redirectUriMatches(registered, 'https://client.example/cb')).toBe(true);
    expect(redirectUriMatches(registered, 'http://127.0.0.1:51234/other')).toBe(false);
    expect(redirectUriMatches(registered, 'https://client.example/cb/')).toBe(false);
    expect(redirectUriMatches(registered, 'https://client.example:8443/cb')).toBe(false);
    expect(redirectUriMatches(registered, 'https://client.example/cb?x=1')).toBe(false);
    expect(redirectUriMatches(['http://[::1]/cb'], 'http://[::1]:4000/cb')).toBe(true);
  });

  it('reads the requested scopes tolerantly', () => {
    expect(requestsWrite('articles:read')).toBe(false);
    expect(requestsWrite('articles:read articles:write')).toBe(true);
    expect(requestsWrite('mcp offline_access')).toBe(true);
    expect(requestsWrite(undefined)).toBe(true);
  });

  it('lets a registered loopback client come back on any port', async () => {
    const customer = await createCustomer(harness.services);
    const response = await register({ client_name: 'Inspector', redirect_uris: ['http://localhost:6274/oauth/callback'] });
    const { client_id: clientId } = (await response.json()) as { client_id: string };
    const client = { clientId, redirectUri: 'http://localhost:40123/oauth/callback' };
    const { callback } = await authorizeInBrowser(base, authorizationUrl(base, client, pkce().challenge), customer.email);
    expect(callback.origin).toBe('http://localhost:40123');
    expect(callback.searchParams.get('code')).toBeTruthy();
  });
});

describe('client ID metadata documents', () => {
  const documentUrl = 'https://client.example/oauth/metadata.json';
  const document = (overrides: Record<string, unknown> = {}) => ({
    client_id: documentUrl,
    client_name: 'Document client',
    redirect_uris: ['http://127.0.0.1:8976/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...overrides,
  });

  it('accepts https client ids with a path only', () => {
    expect(isMetadataDocumentUrl(documentUrl)).toBe(true);
    expect(isMetadataDocumentUrl('https://client.example/')).toBe(false);
    expect(isMetadataDocumentUrl('http://client.example/metadata.json')).toBe(false);
    expect(isMetadataDocumentUrl('https://user:pw@client.example/metadata.json')).toBe(false);
    expect(isMetadataDocumentUrl('https://client.example/a/../metadata.json')).toBe(false);
    expect(isMetadataDocumentUrl('https://client.example/metadata.json#x')).toBe(false);
    expect(isMetadataDocumentUrl('mcp_0123')).toBe(false);
  });

  it('checks the fetched document and keeps it for an hour', async () => {
    let fetched = 0;
    let served: unknown = document();
    const service = new OAuthService(harness.services.db.kysely, harness.clock, async (url) => {
      expect(url).toBe(documentUrl);
      fetched += 1;
      return served;
    });
    const admit = async () => {};
    // Without an admission nothing is fetched: the sign-in page names known clients only.
    expect(await service.client(documentUrl)).toBeUndefined();
    expect(fetched).toBe(0);
    expect(await service.client(documentUrl, admit)).toEqual({
      clientId: documentUrl,
      kind: 'cimd',
      name: 'Document client',
      redirectUris: ['http://127.0.0.1:8976/callback'],
    });
    await service.client(documentUrl, admit);
    expect(fetched).toBe(1);
    const start = harness.clock.current;
    try {
      harness.clock.set(new Date(start.getTime() + 3_600_001).toISOString());
      served = document({ client_id: 'https://someone-else.example/metadata.json' });
      await expect(service.client(documentUrl, admit)).rejects.toMatchObject({ error: 'invalid_client' });
      served = document({ token_endpoint_auth_method: 'private_key_jwt' });
      await expect(service.client(documentUrl, admit)).rejects.toMatchObject({ error: 'invalid_client' });
      served = document({ redirect_uris: ['http://client.example/cb'] });
      await expect(service.client(documentUrl, admit)).rejects.toMatchObject({ error: 'invalid_redirect_uri' });
    } finally {
      harness.clock.current = start;
    }
    const failing = new OAuthService(harness.services.db.kysely, harness.clock, async () => {
      throw new Error('connect ECONNREFUSED 203.0.113.9:8443');
    });
    await expect(failing.client('https://down.example/metadata.json', admit)).rejects.toMatchObject({
      error: 'invalid_client',
      message: 'The client metadata document could not be loaded.',
    });
  });

  it('connects the official client by its metadata URL instead of registering', async () => {
    const customer = await createCustomer(harness.services);
    const real = harness.services.oauth;
    Object.assign(harness.services, { oauth: new OAuthService(harness.services.db.kysely, harness.clock, async () => document()) });
    try {
      const provider = new TestOAuthProvider();
      Object.assign(provider, { clientMetadataUrl: documentUrl });
      const { client, consent } = await connectWithOAuth(base, customer.email, { mode: 'auto' }, { provider });
      expect(consent).toContain('Document client');
      expect(consent).toContain('client.example');
      expect(provider.clientInformation()).toMatchObject({ client_id: documentUrl });
      expect((await client.callTool({ name: 'list_sites', arguments: {} })).isError).toBeFalsy();
      await client.close();
    } finally {
      Object.assign(harness.services, { oauth: real });
    }
  });

  it('never fetches from private, loopback or link-local addresses', async () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.9', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    for (const address of ['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111']) {
      expect(isPublicAddress(address), address).toBe(true);
    }
    await expect(fetchClientMetadataDocument('https://127.0.0.1/metadata.json')).rejects.toThrow('not a public address');
    await expect(fetchClientMetadataDocument('https://[::1]/metadata.json')).rejects.toThrow('not a public address');
    await expect(fetchClientMetadataDocument('https://localhost/metadata.json')).rejects.toThrow('non-public address');
  });

  it('refuses an unknown client id on the authorization page', async () => {
    const jar = new CookieJar();
    const url = authorizationUrl(base, { clientId: 'mcp_unknown', redirectUri: 'http://127.0.0.1:1/cb' }, pkce().challenge);
    const response = await browse(jar, url);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('not registered');
  });

  it('never redirects before the decision: unknown client, unregistered redirect URI, bad request; a tampered consent form is refused on our page', async () => {
    const customer = await createCustomer(harness.services);
    const client = await registerClient(base, { redirect_uris: ['https://client.example/cb'] });
    const hostile: Record<string, string>[] = [
      { client_id: 'mcp_unknown' },
      { client_id: '' },
      { redirect_uri: 'https://evil.example/cb' },
      { redirect_uri: 'https://client.example/cb/../evil' },
      { redirect_uri: 'https://client.example/cb?x=1' },
      { redirect_uri: '' },
      { response_type: 'token' },
      { code_challenge_method: 'plain' },
      { resource: 'https://evil.example/mcp' },
    ];
    const jar = new CookieJar();
    for (const extra of hostile) {
      const response = await browse(jar, authorizationUrl(base, client, pkce().challenge, extra));
      expect(response.status, JSON.stringify(extra)).toBe(400);
      expect(response.headers.get('location')).toBeNull();
    }
    const url = authorizationUrl(base, client, pkce().challenge);
    await signIn(base, jar, (await browse(jar, url)).headers.get('location')!, customer.email);
    const fields = formFields(await (await browse(jar, url)).text(), '/oauth/authorize');
    for (const extra of hostile) {
      const answer = await browse(jar, new URL('/oauth/authorize', base), { ...fields, ...extra, decision: 'allow' });
      expect(answer.status, JSON.stringify(extra)).toBe(400);
      expect(answer.headers.get('location')).toBeNull();
    }
    const denied = await browse(jar, new URL('/oauth/authorize', base), { ...fields, decision: 'deny' });
    expect(denied.status).toBe(303);
    expect(new URL(denied.headers.get('location')!).origin).toBe('https://client.example');
  });

  // Last in this file: it uses up this address's window for new clients.
  it('limits new clients per address, says when to retry, and still answers known ones', async () => {
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < registrationsPerHour + 1 && !refused; i++) {
      const response = await register({ redirect_uris: [`http://127.0.0.1:${4000 + i}/cb`], client_name: `Flood ${i}` });
      statuses.push(response.status);
      if (response.status === 429) refused = response;
    }
    expect(refused, `statuses ${statuses.join(',')}`).toBeDefined();
    expect(statuses.filter((s) => s === 201).length).toBeLessThanOrEqual(registrationsPerHour);
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused!.json()).toMatchObject({ error: 'temporarily_unavailable' });
    // A client that registers on every connection keeps working: known metadata is not new.
    const known = await register({ redirect_uris: ['http://127.0.0.1:4000/cb'], client_name: 'Flood 0' });
    expect(known.status).toBe(201);
  });
});
