import { beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/core/secrets.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import {
  authorizationUrl,
  authorizeInBrowser,
  browse,
  CookieJar,
  formFields,
  manualGrant,
  pkce,
  postForm,
  rawMcp,
  registerClient,
  signIn,
} from '../helpers/oauth-client.js';

const harness = useHarness({ listen: true });
let base: string;
let customer: Awaited<ReturnType<typeof createCustomer>>;

beforeAll(async () => {
  base = harness.settings.publicUrl;
  customer = await createCustomer(harness.services);
});

const exchange = (grant: { client: { clientId: string; redirectUri: string } }, code: string, verifier: string, extra: Record<string, string> = {}) =>
  postForm(base, '/oauth/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: grant.client.redirectUri,
    client_id: grant.client.clientId,
    ...extra,
  });

describe('token endpoint refusals', () => {
  it('refuses a wrong PKCE verifier, and the code is spent afterwards', async () => {
    const client = await registerClient(base);
    const { verifier, challenge } = pkce();
    const { callback } = await authorizeInBrowser(base, authorizationUrl(base, client, challenge), customer.email);
    const code = callback.searchParams.get('code')!;
    const wrong = await exchange({ client }, code, pkce().verifier);
    expect(wrong).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'The PKCE code_verifier does not match.' } });
    expect((await exchange({ client }, code, verifier)).body.error).toBe('invalid_grant');
  });

  it('refuses a reused code and revokes what the first exchange issued', async () => {
    const grant = await manualGrant(base, customer.email);
    expect((await rawMcp(base, grant.tokens.access_token as string)).status).toBe(200);
    const again = await exchange(grant, grant.code, grant.verifier);
    expect(again).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'The authorization code was used already.' } });
    expect((await rawMcp(base, grant.tokens.access_token as string)).status).toBe(401);
  });

  it('refuses a redirect URI the client did not register, without redirecting there', async () => {
    const client = await registerClient(base);
    const { challenge } = pkce();
    const url = authorizationUrl(base, client, challenge, { redirect_uri: 'https://evil.example/callback' });
    const jar = new CookieJar();
    const response = await browse(jar, url);
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.text()).toContain('did not register');
  });

  it('refuses a token request whose redirect_uri differs from the authorization request', async () => {
    const client = await registerClient(base, { redirect_uris: ['http://127.0.0.1:7777/callback', 'http://127.0.0.1:7777/other'] });
    const { verifier, challenge } = pkce();
    const { callback } = await authorizeInBrowser(base, authorizationUrl(base, client, challenge), customer.email);
    const result = await exchange({ client }, callback.searchParams.get('code')!, verifier, { redirect_uri: 'http://127.0.0.1:7777/other' });
    expect(result.body.error).toBe('invalid_grant');
  });

  it('binds tokens to the MCP resource: another resource is refused everywhere', async () => {
    const client = await registerClient(base);
    const { verifier, challenge } = pkce();
    const refused = await browse(new CookieJar(), authorizationUrl(base, client, challenge, { resource: 'https://other.example/mcp' }));
    expect(refused.status).toBe(400);
    expect(refused.headers.get('location')).toBeNull();
    expect(await refused.text()).toContain('(invalid_target)');

    const ok = await authorizeInBrowser(base, authorizationUrl(base, client, challenge), customer.email);
    const other = await exchange({ client }, ok.callback.searchParams.get('code')!, verifier, { resource: 'https://other.example/mcp' });
    expect(other).toMatchObject({ status: 400, body: { error: 'invalid_target' } });

    const grant = await manualGrant(base, customer.email);
    const token = grant.tokens.access_token as string;
    expect(await harness.services.oauth.authenticate(token, `${base}/mcp`, null)).toBeDefined();
    expect(await harness.services.oauth.authenticate(token, 'https://other.example/mcp', null)).toBeUndefined();
  });

  it('refuses an expired access token, and an expired refresh token', async () => {
    const grant = await manualGrant(base, customer.email);
    const start = harness.clock.current;
    try {
      harness.clock.set(new Date(start.getTime() + 3600_000 + 1000).toISOString());
      const expired = await rawMcp(base, grant.tokens.access_token as string);
      expect(expired.status).toBe(401);
      expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');
      const refreshed = await postForm(base, '/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: grant.tokens.refresh_token as string,
        client_id: grant.client.clientId,
      });
      expect(refreshed.status).toBe(200);
      expect((await rawMcp(base, refreshed.body.access_token as string)).status).toBe(200);

      harness.clock.set(new Date(start.getTime() + 31 * 86_400_000).toISOString());
      const late = await postForm(base, '/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: refreshed.body.refresh_token as string,
        client_id: grant.client.clientId,
      });
      expect(late).toMatchObject({ status: 400, body: { error: 'invalid_grant', error_description: 'The refresh token has expired.' } });
    } finally {
      harness.clock.current = start;
    }
  });

  it('revokes the whole connection when a rotated refresh token comes back', async () => {
    const grant = await manualGrant(base, customer.email);
    const refresh = (token: string) =>
      postForm(base, '/oauth/token', { grant_type: 'refresh_token', refresh_token: token, client_id: grant.client.clientId, resource: `${base}/mcp` });
    const first = await refresh(grant.tokens.refresh_token as string);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'articles:read articles:write' });
    const replay = await refresh(grant.tokens.refresh_token as string);
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await rawMcp(base, first.body.access_token as string)).status).toBe(401);
    expect((await refresh(first.body.refresh_token as string)).body.error).toBe('invalid_grant');
  });

  it('stores codes and tokens only as SHA-256 hashes', async () => {
    const grant = await manualGrant(base, customer.email);
    const tables = await Promise.all(
      (['oauth_codes', 'oauth_tokens', 'oauth_grants', 'oauth_clients'] as const).map((table) =>
        harness.services.db.kysely.selectFrom(table).selectAll().execute(),
      ),
    );
    const stored = JSON.stringify(tables);
    for (const secret of [grant.code, grant.tokens.access_token as string, grant.tokens.refresh_token as string]) {
      expect(stored).not.toContain(secret);
      expect(stored).toContain(sha256(secret));
    }
  });

  it('revokes quietly (RFC 7009): unknown tokens and other clients’ tokens change nothing', async () => {
    const grant = await manualGrant(base, customer.email);
    const token = grant.tokens.access_token as string;
    expect(await postForm(base, '/oauth/revoke', { token: 'mcp_at_unknown' })).toEqual({ status: 200, body: {} });
    expect((await postForm(base, '/oauth/revoke', { token, client_id: 'mcp_someone_else' })).status).toBe(200);
    expect((await rawMcp(base, token)).status).toBe(200);
    expect(await postForm(base, '/oauth/revoke', {})).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  });

  it('answers RFC 6749 errors for bad requests and unknown clients', async () => {
    expect(await postForm(base, '/oauth/token', { grant_type: 'password', username: 'x', password: 'y' })).toMatchObject({
      status: 400,
      body: { error: 'unsupported_grant_type' },
    });
    expect(await postForm(base, '/oauth/token', { grant_type: 'authorization_code', code: 'x', client_id: 'x' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_request' },
    });
    expect(
      await postForm(base, '/oauth/token', { grant_type: 'authorization_code', code: 'x', code_verifier: 'y', client_id: 'nobody' }),
    ).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
  });
});

describe('authorization endpoint', () => {
  it('sends someone not signed in to the sign-in page first, and back', async () => {
    const client = await registerClient(base);
    const url = authorizationUrl(base, client, pkce().challenge);
    const jar = new CookieJar();
    const first = await browse(jar, url);
    expect(first.status).toBe(302);
    const location = first.headers.get('location')!;
    expect(location).toBe(`/app/sign-in?next=${encodeURIComponent(`${url.pathname}${url.search}`)}`);
    const next = await signIn(base, jar, location, customer.email);
    expect(next).toBe(`${url.pathname}${url.search}`);
  });

  it('redirects Deny back with error=access_denied, state and iss', async () => {
    const client = await registerClient(base);
    const { callback, status } = await authorizeInBrowser(base, authorizationUrl(base, client, pkce().challenge), customer.email, {
      decision: 'deny',
    });
    expect(status).toBe(303);
    expect(`${callback.origin}${callback.pathname}`).toBe(client.redirectUri);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe('state-123');
    expect(callback.searchParams.get('iss')).toBe(base);
    expect(callback.searchParams.get('code')).toBeNull();
  });

  it('refuses a consent POST without the CSRF token', async () => {
    const client = await registerClient(base);
    const jar = new CookieJar();
    const url = authorizationUrl(base, client, pkce().challenge);
    const first = await browse(jar, url);
    await signIn(base, jar, first.headers.get('location')!, customer.email);
    const consent = await browse(jar, url);
    const { _csrf, ...fields } = formFields(await consent.text(), '/oauth/authorize');
    expect(_csrf).toBeTruthy();
    const refused = await browse(jar, new URL('/oauth/authorize', base), { ...fields, decision: 'allow' });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('location')).toBeNull();
    const forged = await browse(jar, new URL('/oauth/authorize', base), { ...fields, _csrf: 'forged', decision: 'allow' });
    expect(forged.status).toBe(403);
  });

  it('shows the client name escaped, the redirect host and the scopes, and forbids framing', async () => {
    const client = await registerClient(base, {
      client_name: '<script>alert(1)</script>Evil "App"',
      redirect_uris: ['https://client.example/cb'],
    });
    const { consent, consentHeaders } = await authorizeInBrowser(base, authorizationUrl(base, client, pkce().challenge), customer.email, {
      decision: 'deny',
    });
    expect(consent).not.toContain('<script>alert(1)</script>');
    expect(consent).toContain('&lt;script&gt;alert(1)&lt;/script&gt;Evil &quot;App&quot;');
    expect(consent).toContain('client.example');
    expect(consent).toContain('Read your sites, articles, backlinks and reports');
    expect(consent).toContain('and edit article content');
    const csp = consentHeaders.get('content-security-policy')!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' https://client.example");
    expect(consentHeaders.get('x-frame-options')).toBe('DENY');
  });

  it('offers read only when the client asks only to read', async () => {
    const client = await registerClient(base);
    const url = authorizationUrl(base, client, pkce().challenge, { scope: 'articles:read' });
    const { consent } = await authorizeInBrowser(base, url, customer.email, { decision: 'deny' });
    expect(consent).toContain('Read your sites, articles, backlinks and reports');
    expect(consent).not.toContain('edit article content');
  });

  it('shows requests without S256 PKCE, with another response type, a foreign resource or prompt=none on its own page, never redirecting', async () => {
    const client = await registerClient(base);
    const signedOut = new CookieJar();
    const signedIn = new CookieJar();
    const first = await browse(signedIn, authorizationUrl(base, client, pkce().challenge));
    await signIn(base, signedIn, first.headers.get('location')!, customer.email);
    const cases: [Record<string, string>, string][] = [
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge_method: '' }, 'invalid_request'],
      [{ code_challenge: '' }, 'invalid_request'],
      [{ code_challenge: 'short' }, 'invalid_request'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ response_type: '' }, 'unsupported_response_type'],
      [{ resource: 'https://evil.example/mcp' }, 'invalid_target'],
      [{ prompt: 'none' }, 'consent_required'],
    ];
    for (const jar of [signedOut, signedIn]) {
      for (const [extra, error] of cases) {
        const response = await browse(jar, authorizationUrl(base, client, pkce().challenge, extra));
        expect(response.status, JSON.stringify(extra)).toBe(400);
        expect(response.headers.get('location')).toBeNull();
        expect(response.headers.get('content-type')).toMatch(/^text\/html/);
        expect(await response.text()).toContain(`(${error})`);
      }
    }
  });

  it('accepts the scope tokens and prompt the SDK client adds', async () => {
    const client = await registerClient(base);
    const { callback } = await authorizeInBrowser(
      base,
      authorizationUrl(base, client, pkce().challenge, { scope: 'mcp offline_access', prompt: 'consent' }),
      customer.email,
    );
    expect(callback.searchParams.get('code')).toBeTruthy();
  });
});

describe('connected apps page', () => {
  it('lists the user’s connections and revokes one; its token is refused at once', async () => {
    const jar = new CookieJar();
    const grant = await manualGrant(base, customer.email, { jar });
    const token = grant.tokens.access_token as string;
    expect((await rawMcp(base, token)).status).toBe(200);
    const page = await browse(jar, new URL('/app/connections', base));
    expect(page.status).toBe(200);
    const markup = await page.text();
    expect(markup).toContain('Manual client');
    // Revoke asks first (data-confirm, handled by the page's script).
    expect(markup).toContain('data-confirm=');
    expect(markup).toContain('<script src="/assets/copy.js" defer></script>');
    const grantId = (await harness.services.oauth.authenticate(token, `${base}/mcp`, null))!.credential;
    expect(grantId.kind).toBe('mcp_grant');
    const id = grantId.kind === 'mcp_grant' ? grantId.id : 0;
    const action = `/app/connections/${id}/revoke`;
    expect(markup).toContain(action);
    const { _csrf } = formFields(markup, action);
    expect((await browse(jar, new URL(action, base), {})).status).toBe(403);
    const revoked = await browse(jar, new URL(action, base), { _csrf: _csrf! });
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('location')).toBe('/app/connections?revoked=1');
    expect((await rawMcp(base, token)).status).toBe(401);
    const after = await (await browse(jar, new URL('/app/connections', base))).text();
    expect(after).not.toContain(action);
    expect((await browse(jar, new URL(action, base), { _csrf: _csrf! })).status).toBe(404);
  });

  it('cannot revoke another user’s connection: 404 like an unknown id, and it keeps working', async () => {
    const other = await createCustomer(harness.services);
    const grant = await manualGrant(base, other.email);
    const token = grant.tokens.access_token as string;
    const actor = (await harness.services.oauth.authenticate(token, `${base}/mcp`, null))!;
    const id = actor.credential.kind === 'mcp_grant' ? actor.credential.id : 0;
    const jar = new CookieJar();
    const first = await browse(jar, new URL('/app/connections', base));
    await signIn(base, jar, first.headers.get('location')!, customer.email);
    const markup = await (await browse(jar, new URL('/app/connections', base))).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(markup)![1]!;
    for (const target of [String(id), '999999999', 'abc', '0']) {
      const response = await browse(jar, new URL(`/app/connections/${target}/revoke`, base), { _csrf: csrf });
      expect(response.status, target).toBe(404);
      expect(response.headers.get('location')).toBeNull();
    }
    expect((await rawMcp(base, token)).status).toBe(200);
  });
});

