import { beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, TestClock, useHarness } from '../helpers/harness.js';
import { apiGet, seedSite, token } from '../helpers/fixtures.js';
import { InjectBrowser } from '../web/browser.js';

// The service clock is years ahead of the wall clock: durations must not depend on it.
const h = useHarness({ clock: new TestClock(new Date('2031-06-15T12:00:00Z')) });
let customer: Awaited<ReturnType<typeof createCustomer>>;
let other: Awaited<ReturnType<typeof createCustomer>>;
let siteId: number;
let expectedSites: unknown;

beforeAll(async () => {
  customer = await createCustomer(h.services);
  other = await createCustomer(h.services);
  ({ siteId } = await seedSite(h.services, customer.email, { name: 'Auth site', website_url: 'https://auth.example' }));
  await seedSite(h.services, other.email, { name: 'Other site' });
  expectedSites = {
    data: [
      {
        id: siteId,
        name: 'Auth site',
        website_url: 'https://auth.example',
        language: null,
        country: null,
        geographic_scope: null,
        industry: null,
      },
    ],
    meta: { page: 1, per_page: 25, total: 1, last_page: 1 },
  };
});

const unknownKey = `ak_${'A'.repeat(40)}`;

function expectUnauthenticated(res: { status: number; body: Record<string, unknown> }) {
  expect(res.status).toBe(401);
  expect(Object.keys(res.body).sort()).toEqual(['error', 'message']);
  expect(res.body.error).toBe('unauthenticated');
  expect(typeof res.body.message).toBe('string');
  expect((res.body.message as string).length).toBeGreaterThan(0);
}

describe('credentials', () => {
  it('accepts Authorization: Bearer', async () => {
    const res = await apiGet(h.app, '/api/v1/sites', undefined, { authorization: `Bearer ${customer.key}` });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expectedSites);
  });

  it('accepts X-API-Key', async () => {
    const res = await apiGet(h.app, '/api/v1/sites', undefined, { 'x-api-key': customer.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expectedSites);
  });

  it('accepts the bearer scheme in any case', async () => {
    const res = await apiGet(h.app, '/api/v1/sites', undefined, { authorization: `bearer ${customer.key}` });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expectedSites);
  });

  it('accepts both headers when they carry the same key', async () => {
    const res = await apiGet(h.app, '/api/v1/sites', undefined, {
      authorization: `Bearer ${customer.key}`,
      'x-api-key': customer.key,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expectedSites);
  });

  it('refuses both headers carrying different (even valid) keys', async () => {
    expectUnauthenticated(
      await apiGet(h.app, '/api/v1/sites', undefined, { authorization: `Bearer ${customer.key}`, 'x-api-key': other.key }),
    );
    expectUnauthenticated(
      await apiGet(h.app, '/api/v1/sites', undefined, { authorization: `Bearer ${other.key}`, 'x-api-key': customer.key }),
    );
  });

  it('refuses a request without a key with the Error body', async () => {
    const res = await apiGet(h.app, '/api/v1/sites');
    expectUnauthenticated(res);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  });

  it.each([
    ['Basic scheme', { authorization: 'Basic x' }],
    ['Basic scheme with the key', { authorization: 'Basic <key>' }],
    ['Bearer without a key', { authorization: 'Bearer' }],
    ['Bearer with blank key', { authorization: 'Bearer   ' }],
    ['key without scheme', { authorization: '<key>' }],
    ['two tokens after Bearer', { authorization: 'Bearer <key> extra' }],
    ['empty X-API-Key', { 'x-api-key': '' }],
    ['empty Authorization', { authorization: '' }],
  ])('refuses a malformed credential: %s', async (_name, headers) => {
    const filled = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replace('<key>', customer.key)]));
    expectUnauthenticated(await apiGet(h.app, '/api/v1/sites', undefined, filled));
  });

  it('refuses an unknown key of the right format', async () => {
    expectUnauthenticated(await apiGet(h.app, '/api/v1/sites', unknownKey));
    expectUnauthenticated(await apiGet(h.app, '/api/v1/sites', undefined, { 'x-api-key': unknownKey }));
  });

  it('refuses keys of the wrong format', async () => {
    expectUnauthenticated(await apiGet(h.app, '/api/v1/sites', 'not-a-key'));
    expectUnauthenticated(await apiGet(h.app, '/api/v1/sites', `${customer.key}x`));
    expectUnauthenticated(await apiGet(h.app, '/api/v1/sites', customer.key.slice(0, -1)));
    expectUnauthenticated(await apiGet(h.app, '/api/v1/sites', customer.key.toUpperCase()));
  });

  it('refuses a revoked key at once, on every endpoint', async () => {
    const victim = await createCustomer(h.services);
    const { siteId: victimSite } = await seedSite(h.services, victim.email, {
      articles: [{ status: 'published', published_at: '2026-10-01T09:00:00Z', body: '<p>x</p>' }],
    });
    expect((await apiGet(h.app, '/api/v1/sites', victim.key)).status).toBe(200);
    expect((await apiGet(h.app, `/api/v1/sites/${victimSite}/articles`, victim.key)).status).toBe(200);
    expect(await h.services.keys.revoke(victim.keyId)).toBe(true);
    expectUnauthenticated(await apiGet(h.app, '/api/v1/sites', victim.key));
    expectUnauthenticated(await apiGet(h.app, `/api/v1/sites/${victimSite}/articles`, victim.key));
    expectUnauthenticated(await apiGet(h.app, `/api/v1/sites/${victimSite}/stats`, undefined, { 'x-api-key': victim.key }));
  });

  it('requires a key on every read endpoint', async () => {
    for (const url of [
      '/api/v1/sites',
      `/api/v1/sites/${siteId}/articles`,
      `/api/v1/sites/${siteId}/backlinks`,
      `/api/v1/sites/${siteId}/stats`,
      '/api/v1/articles/1',
    ]) {
      expectUnauthenticated(await apiGet(h.app, url));
    }
  });

  it('takes no browser session: a signed-in cookie is no credential, and no answer of the API sets a cookie', async () => {
    // The cookie plugin runs only in the scope of the UI, the agent interface and OAuth (src/app.ts).
    // An address of its own: refused requests count against their address's limit.
    const remoteAddress = '203.0.113.71';
    const browser = new InjectBrowser(h.app, remoteAddress);
    await browser.signIn(customer.email);
    expect(browser.cookie).toBeDefined();
    const cookie = `anchorage_session=${browser.cookie}`;
    expect((await browser.get('/app')).statusCode).toBe(200);
    const refused = await h.app.inject({ method: 'GET', url: '/api/v1/sites', headers: { cookie }, remoteAddress });
    expectUnauthenticated({ status: refused.statusCode, body: refused.json() });
    const served = await h.app.inject({ method: 'GET', url: '/api/v1/sites', headers: { cookie, authorization: `Bearer ${customer.key}` }, remoteAddress });
    expect(served.statusCode).toBe(200);
    expect(served.json()).toEqual(expectedSites);
    for (const answer of [refused, served]) expect(answer.headers['set-cookie']).toBeUndefined();
  });

  it('serves /api/v1/openapi.json without a key', async () => {
    const res = await apiGet(h.app, '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\.1\./);
  });
});

describe('activity log', () => {
  type Row = Record<string, unknown>;

  async function rowsWithAgent(agent: string): Promise<Row[]> {
    await h.services.activity.flush();
    return (await h.services.db.kysely.selectFrom('activity_log').selectAll().where('user_agent', '=', agent).execute()) as Row[];
  }

  it('records an unauthenticated request with its operation, status and error', async () => {
    const agent = `auth-test-anon/${token()}`;
    const before = Date.now();
    const res = await apiGet(h.app, '/api/v1/sites?per_page=5', undefined, { 'user-agent': agent });
    expect(res.status).toBe(401);
    const rows = await rowsWithAgent(agent);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row).toMatchObject({
      channel: 'api',
      operation: 'listSites',
      method: 'GET',
      path: '/api/v1/sites',
      status: 401,
      error: 'unauthenticated',
      user_agent: agent,
      account_id: null,
      user_id: null,
      api_key_id: null,
      mcp_grant_id: null,
      tool: null,
    });
    expect(typeof row.duration_ms).toBe('number');
    expect(row.duration_ms as number).toBeGreaterThanOrEqual(0);
    // Measured in wall-clock time, not against the (injected, far-ahead) service clock.
    expect(row.duration_ms as number).toBeLessThan(Date.now() - before + 1000);
    expect(row.client_ip).toBe('127.0.0.1');
    expect(typeof row.created_at).toBe('string');
    expect(row.created_at as string).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });

  it('records an authenticated request with account, user and key id', async () => {
    const agent = `auth-test-ok/${token()}`;
    const res = await apiGet(h.app, `/api/v1/sites/${siteId}/articles?page=1`, customer.key, { 'user-agent': agent });
    expect(res.status).toBe(200);
    const rows = await rowsWithAgent(agent);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      channel: 'api',
      operation: 'listArticles',
      method: 'GET',
      path: `/api/v1/sites/${siteId}/articles`,
      status: 200,
      error: null,
      account_id: customer.accountId,
      user_id: customer.userId,
      api_key_id: customer.keyId,
      mcp_grant_id: null,
    });
  });

  it('records an unknown key as unauthenticated, a 404 with its error id', async () => {
    const agent = `auth-test-mixed/${token()}`;
    await apiGet(h.app, '/api/v1/sites', unknownKey, { 'user-agent': agent });
    await apiGet(h.app, '/api/v1/articles/999999', customer.key, { 'user-agent': agent });
    const rows = (await rowsWithAgent(agent)).sort((a, b) => (a.id as number) - (b.id as number));
    expect(rows.map((r) => [r.operation, r.status, r.error, r.api_key_id])).toEqual([
      ['listSites', 401, 'unauthenticated', null],
      ['getArticle', 404, 'not_found', customer.keyId],
    ]);
  });

  it('never stores key material, in any column of any row', async () => {
    const agent = `auth-test-secret/${token()}`;
    await apiGet(h.app, '/api/v1/sites', customer.key, { 'user-agent': agent });
    await apiGet(h.app, '/api/v1/sites', undefined, { 'x-api-key': customer.key, 'user-agent': agent });
    await apiGet(h.app, '/api/v1/sites', unknownKey, { 'user-agent': agent });
    await apiGet(h.app, '/api/v1/sites', undefined, { authorization: `Basic ${customer.key}`, 'user-agent': agent });
    await apiGet(h.app, '/api/v1/sites', undefined, {
      authorization: `Bearer ${customer.key}`,
      'x-api-key': other.key,
      'user-agent': agent,
    });
    // A key pasted into the query string is not part of the logged path either (nor of the 422 naming api_key).
    const pasted = await apiGet(h.app, `/api/v1/sites?api_key=${customer.key}`, customer.key, { 'user-agent': agent });
    expect(pasted.status).toBe(422);
    expect(pasted.text).not.toContain(customer.key);
    await apiGet(h.app, `/api/v1/nowhere?key=${customer.key}`, customer.key, { 'user-agent': agent });

    const mine = await rowsWithAgent(agent);
    expect(mine.map((r) => r.status).sort()).toEqual([200, 200, 401, 401, 401, 404, 422]);

    const all = (await h.services.db.kysely.selectFrom('activity_log').selectAll().execute()) as Row[];
    expect(all.length).toBeGreaterThanOrEqual(mine.length);
    const secrets = [customer.key, other.key, unknownKey, customer.key.slice(3), 'ak_'];
    for (const row of all) {
      for (const [column, value] of Object.entries(row)) {
        if (value === null || value === undefined) continue;
        const text = String(value);
        for (const secret of secrets) {
          expect(text.includes(secret), `activity_log.${column} = ${text}`).toBe(false);
        }
      }
    }
  });
});
