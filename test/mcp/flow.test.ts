import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../src/operations/index.js';
import { apiGet, seedSites, type SeededSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { connectWithOAuth, modes, type TestOAuthProvider } from '../helpers/oauth-client.js';
import { expectTextForm } from './result-forms.js';

const protectedLink = '<a href="https://partner.example/dentists" data-service-protected="backlink">family dentist</a>';

const siteFixtures = [
  {
    name: 'Bright Smile Dental',
    website_url: 'https://brightsmile.example',
    language: 'en',
    country: 'US',
    geographic_scope: 'local',
    industry: 'Dental care',
    articles: [
      {
        status: 'published' as const,
        title: 'How often should you see a dentist?',
        url: 'https://brightsmile.example/blog/check-up',
        published_at: '2026-10-01T09:00:00Z',
        target_keyword: 'dental check-up',
        meta_description: 'Twice a year is the rule of thumb.',
        body: `<p>See a ${protectedLink} twice a year.</p><p>Brush daily.</p>`,
      },
      { status: 'published' as const, title: 'Flossing', published_at: '2026-10-20T09:00:00Z', body: '<p>Floss every day.</p>' },
      { status: 'draft' as const, title: 'Whitening', body: '<p>Soon.</p>' },
    ],
    backlinks: [
      { category: 'industry' as const, acquired_at: '2026-10-03T10:00:00Z', source_domain: 'dental.example', anchor_type: 'exact' as const, status: 'live' as const },
      { category: 'local' as const, acquired_at: '2026-10-15T10:00:00Z', source_domain: 'city.example', anchor_type: 'branded' as const, status: 'pending' as const },
      { category: 'local' as const, acquired_at: '2026-09-15T10:00:00Z', source_domain: 'old.example' },
    ],
  },
  { name: 'Second site', website_url: 'https://second.example', articles: [], backlinks: [] },
];

/** get_article's meta for a body that fits in one window. */
const wholeBodyMeta = (body: string) => ({ body_offset: 0, body_length: [...body].length, body_total_length: [...body].length, next_offset: null });

/** The structured result of a successful call, checked against its text content. */
async function structured(client: Client, name: string, args: Record<string, unknown>): Promise<unknown> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  expectTextForm(result);
  return result.structuredContent;
}

async function errorOf(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError).toBe(true);
  const content = result.content as { type: string; text: string }[];
  // The Error body is the text alone: structuredContent is kept for the success outputSchema.
  expect(result.structuredContent).toBeUndefined();
  return JSON.parse(content[0]!.text) as Record<string, unknown>;
}

describe.each(modes)('MCP with the official client, $name', ({ negotiation, protocol }) => {
  const harness = useHarness({ listen: true });
  let base: string;
  let customer: Awaited<ReturnType<typeof createCustomer>>;
  let other: Awaited<ReturnType<typeof createCustomer>>;
  let sites: SeededSite[];
  let otherSite: SeededSite;
  let client: Client;
  let provider: TestOAuthProvider;
  let consent: string;

  beforeAll(async () => {
    base = harness.settings.publicUrl;
    customer = await createCustomer(harness.services);
    other = await createCustomer(harness.services);
    sites = await seedSites(harness.services, customer.email, siteFixtures);
    [otherSite] = await seedSites(harness.services, other.email, [
      { name: 'Not yours', articles: [{ status: 'published', title: 'Secret', body: '<p>x</p>' }] },
    ]);
    ({ client, provider, consent } = await connectWithOAuth(base, customer.email, negotiation));
  });
  afterAll(async () => {
    await client?.close();
  });

  const rest = async (path: string) => {
    const response = await apiGet(harness.app, `/api/v1${path}`, customer.key);
    expect(response.status, response.text).toBe(200);
    return response.body as unknown;
  };

  it('signs in through the real pages and negotiates the protocol revision', async () => {
    expect(consent).toContain('Anchorage test client');
    expect(consent).toContain('Read your sites, articles, backlinks and reports, and edit article content');
    expect(client.getServerVersion()?.name).toBe('anchorage');
    const transport = (client as unknown as { transport?: { protocolVersion?: string } }).transport;
    expect(transport?.protocolVersion).toBe(protocol);
  });

  it('lists every tool of the operation list with schemas and annotations', async () => {
    const listed = (await client.listTools()).tools;
    expect(listed.map((t) => t.name)).toEqual(tools.map((t) => t.name));
    expect(listed.map((t) => t.name)).toEqual(
      expect.arrayContaining(['list_sites', 'list_articles', 'get_article', 'list_backlinks', 'get_stats', 'update_article', 'replace_featured_image']),
    );
    for (const tool of listed) {
      const declared = tools.find((t) => t.name === tool.name)!;
      expect(tool.title).toBe(declared.title);
      expect(tool.description).toBe(declared.description);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.annotations).toMatchObject(declared.annotations);
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(typeof tool.annotations?.[hint]).toBe('boolean');
      }
    }
  });

  it('answers every read tool exactly as its REST twin', async () => {
    const [site] = sites;
    const siteId = site!.siteId;
    const articleId = site!.articleIds[0]!;
    const pairs: [string, Record<string, unknown>, string][] = [
      ['list_sites', {}, '/sites'],
      ['list_sites', { page: 2, per_page: 1 }, '/sites?page=2&per_page=1'],
      ['list_articles', { site_id: siteId }, `/sites/${siteId}/articles`],
      ['list_articles', { site_id: siteId, status: 'published', from: '2026-10-01', to: '2026-10-10' }, `/sites/${siteId}/articles?status=published&from=2026-10-01&to=2026-10-10`],
      ['get_article', { article_id: articleId }, `/articles/${articleId}`],
      ['list_backlinks', { site_id: siteId }, `/sites/${siteId}/backlinks`],
      ['list_backlinks', { site_id: siteId, from: '2026-10-01', to: '2026-10-31', per_page: 1 }, `/sites/${siteId}/backlinks?from=2026-10-01&to=2026-10-31&per_page=1`],
      ['get_stats', { site_id: siteId, period: '2026-10' }, `/sites/${siteId}/stats?period=2026-10`],
      ['get_stats', { site_id: siteId, from: '2026-09-01', to: '2026-10-31' }, `/sites/${siteId}/stats?from=2026-09-01&to=2026-10-31`],
      ['get_stats', { site_id: siteId }, `/sites/${siteId}/stats`],
    ];
    for (const [name, args, path] of pairs) {
      // get_article holds the whole body as one window (meta says where it lies); the rest is REST's.
      const expected = (await rest(path)) as { data: { body: string } };
      if (name === 'get_article') Object.assign(expected, { meta: wholeBodyMeta(expected.data.body) });
      expect(await structured(client, name, args), `${name} ${JSON.stringify(args)}`).toEqual(expected);
    }
    const stats = (await structured(client, 'get_stats', { site_id: siteId, period: '2026-10' })) as { data: Record<string, number> };
    expect(stats.data).toMatchObject({ articles_published: 2, backlinks_acquired: 2, backlinks_industry: 1, backlinks_local: 1 });
  });

  it('answers errors as tool results carrying the Error body', async () => {
    const invalid = await errorOf(client, 'list_articles', { site_id: sites[0]!.siteId, per_page: 500 });
    expect(invalid).toMatchObject({ error: 'validation_failed', fields: { per_page: [expect.any(String)] } });
    expect(await errorOf(client, 'get_stats', { site_id: sites[0]!.siteId, period: 'last_month', from: '2026-10-01', to: '2026-10-02' })).toMatchObject({
      error: 'validation_failed',
    });
    expect(await errorOf(client, 'get_article', { article_id: otherSite.articleIds[0]! })).toMatchObject({ error: 'not_found' });
    expect(await errorOf(client, 'list_articles', { site_id: otherSite.siteId })).toMatchObject({ error: 'not_found' });
    // The staff filters are not arguments of the tool: refused by name.
    expect(await errorOf(client, 'list_sites', { account: other.email })).toMatchObject({
      error: 'validation_failed',
      fields: { account: ['This tool does not take this argument.'] },
    });
  });

  it('edits through update_article under the API rules, with origin mcp', async () => {
    const articleId = sites[0]!.articleIds[0]!;
    const refused = await errorOf(client, 'update_article', {
      article_id: articleId,
      replacements: [{ find: protectedLink, replace: 'a dentist' }],
    });
    expect(refused).toMatchObject({ error: 'protected_links_violation', protected_links: [{ type: 'backlink', text: 'family dentist' }] });

    const edited = (await structured(client, 'update_article', {
      article_id: articleId,
      replacements: [{ find: 'Brush daily.', replace: 'Brush twice daily.' }],
      reason: 'clearer advice',
    })) as { data: { body: string } };
    expect(edited.data.body).toContain('Brush twice daily.');
    expect(edited.data.body).toContain(protectedLink);
    const stored = (await rest(`/articles/${articleId}`)) as { data: { body: string } };
    expect(await structured(client, 'get_article', { article_id: articleId })).toEqual({ ...stored, meta: wholeBodyMeta(stored.data.body) });

    const revision = await harness.services.db.kysely
      .selectFrom('revisions')
      .selectAll()
      .where('article_id', '=', articleId)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(revision).toMatchObject({ origin: 'mcp', reason: 'clearer advice' });
    // The revision history names the assistant that made the change.
    const [latest] = await harness.services.revisions.list(articleId);
    expect(latest).toMatchObject({ id: revision.id, origin: 'mcp', client_name: 'Anchorage test client', user_email: customer.email });
    expect(revision.mcp_grant_id).toEqual(expect.any(Number));

    const image = (await structured(client, 'replace_featured_image', {
      article_id: articleId,
      url: 'https://images.example/check-up.jpg',
    })) as { data: { featured_image_url: string } };
    expect(image.data.featured_image_url).toBe('https://images.example/check-up.jpg');
  });

  it('logs each tool call once (channel mcp, tool name, grant) and never a token', async () => {
    await harness.services.activity.flush();
    const rows = await harness.services.db.kysely.selectFrom('activity_log').selectAll().where('channel', '=', 'mcp').execute();
    const calls = rows.filter((row) => row.tool !== null && row.status !== 401);
    const grantIds = new Set(calls.map((row) => row.mcp_grant_id));
    expect(grantIds.size).toBe(1);
    expect([...grantIds][0]).toEqual(expect.any(Number));
    expect(calls.every((row) => row.account_id === customer.accountId && row.user_id === customer.userId && row.path === '/mcp')).toBe(true);
    expect(new Set(calls.map((row) => row.tool))).toEqual(
      new Set(['list_sites', 'list_articles', 'get_article', 'list_backlinks', 'get_stats', 'update_article', 'replace_featured_image']),
    );
    expect(calls.find((row) => row.tool === 'get_stats')).toMatchObject({ operation: 'getStats', status: 200, error: null });
    expect(calls.find((row) => row.error === 'protected_links_violation')).toMatchObject({ tool: 'update_article', status: 422 });
    // The successful edit was logged with its change, not a second time by the transport.
    expect(calls.filter((row) => row.tool === 'update_article' && row.status === 200)).toHaveLength(1);
    // Calls other than tools are logged too, under their JSON-RPC method.
    const others = rows.filter((row) => row.tool === null && row.status === 200).map((row) => row.operation);
    expect(others).toContain('tools/list');
    expect(others.every((operation) => operation !== null)).toBe(true);
    const tokens = provider.tokens()!;
    const everything = JSON.stringify(await harness.services.db.kysely.selectFrom('activity_log').selectAll().execute());
    expect(everything).not.toContain(tokens.access_token);
    expect(everything).not.toContain(tokens.refresh_token!);
  });

  it('refreshes transparently when the access token is refused, rotating the refresh token', async () => {
    const before = provider.tokens()!;
    const revoked = await fetch(`${base}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: before.access_token, token_type_hint: 'access_token' }),
    });
    expect(revoked.status).toBe(200);
    await structured(client, 'list_sites', {});
    const after = provider.tokens()!;
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.scope).toBe('articles:read articles:write');
  });

  it('stops working once the connection is revoked: 401 with the challenge', async () => {
    const { access_token, refresh_token } = provider.tokens()!;
    const revoked = await fetch(`${base}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refresh_token! }),
    });
    expect(revoked.status).toBe(200);
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="articles:read articles:write", error="invalid_token", error_description="The access token is invalid, expired or revoked."`,
    );
    expect(await response.json()).toMatchObject({ error: 'unauthenticated' });
    await expect(client.callTool({ name: 'list_sites', arguments: {} })).rejects.toThrow();
  });
});
