import { beforeAll, describe, expect, it } from 'vitest';
import { seedSite, type SeededSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import {
  connectWithOAuth,
  manualGrant,
  rawMcp,
} from '../helpers/oauth-client.js';

const harness = useHarness({ listen: true });
let base: string;
let customer: Awaited<ReturnType<typeof createCustomer>>;
let site: SeededSite;
let otherSite: SeededSite;

beforeAll(async () => {
  base = harness.settings.publicUrl;
  customer = await createCustomer(harness.services);
  const other = await createCustomer(harness.services);
  site = await seedSite(harness.services, customer.email, {
    name: 'Mine',
    articles: [{ status: 'published', title: 'Mine', body: '<p>Mine.</p>' }],
  });
  otherSite = await seedSite(harness.services, other.email, {
    name: 'Theirs',
    articles: [{ status: 'published', title: 'Theirs', body: '<p>Theirs.</p>' }],
  });
});

const callTool = (token: string, name: string, args: Record<string, unknown>) =>
  rawMcp(base, token, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } });

/** The Error body of a tools/call that came back as a tool error. */
async function toolError(response: Response): Promise<Record<string, unknown>> {
  expect(response.status).toBe(200);
  const { result } = (await response.json()) as { result: { isError?: boolean; structuredContent?: unknown; content: { text: string }[] } };
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  return JSON.parse(result.content[0]!.text) as Record<string, unknown>;
}

describe('what a connection may do', () => {
  it('a read-only grant reads but gets insufficient_scope on writes', async () => {
    const grant = await manualGrant(base, customer.email, { access: 'read' });
    expect(grant.tokens.scope).toBe('articles:read');
    const token = grant.tokens.access_token as string;
    const read = await callTool(token, 'get_article', { article_id: site.articleIds[0]! });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { result: { isError?: boolean } }).result.isError).toBeFalsy();
    const write = await callTool(token, 'update_article', { article_id: site.articleIds[0]!, title: 'Changed' });
    expect(await toolError(write)).toMatchObject({ error: 'insufficient_scope' });
    const image = await callTool(token, 'replace_featured_image', { article_id: site.articleIds[0]!, url: 'https://images.example/x.jpg' });
    expect(await toolError(image)).toMatchObject({ error: 'insufficient_scope' });
    const article = await harness.services.db.kysely.selectFrom('articles').select('title').where('id', '=', site.articleIds[0]!).executeTakeFirstOrThrow();
    expect(article.title).toBe('Mine');
  });

  it('another account’s site and article are not found, also for staff', async () => {
    const staff = await createCustomer(harness.services, { staff: true });
    const grant = await manualGrant(base, staff.email);
    const token = grant.tokens.access_token as string;
    expect(await toolError(await callTool(token, 'get_article', { article_id: otherSite.articleIds[0]! }))).toMatchObject({
      error: 'not_found',
    });
    expect(await toolError(await callTool(token, 'list_backlinks', { site_id: otherSite.siteId }))).toMatchObject({ error: 'not_found' });
    expect(await toolError(await callTool(token, 'update_article', { article_id: otherSite.articleIds[0]!, title: 'x' }))).toMatchObject({
      error: 'not_found',
    });
    const sites = await callTool(token, 'list_sites', {});
    const { result } = (await sites.json()) as { result: { structuredContent: { data: unknown[] } } };
    expect(result.structuredContent.data).toEqual([]);
  });
});

describe('the MCP endpoint over HTTP', () => {
  it('answers 401 with the resource metadata and scope challenge', async () => {
    const response = await rawMcp(base, undefined);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="articles:read articles:write"`,
    );
    expect(await response.json()).toMatchObject({ error: 'unauthenticated' });
    expect((await rawMcp(base, 'mcp_at_not-a-real-token')).status).toBe(401);
    expect((await rawMcp(base, customer.key)).status).toBe(401);
  });

  it('refuses a browser Origin that is not ours or loopback, before anything else', async () => {
    const grant = await manualGrant(base, customer.email);
    const token = grant.tokens.access_token as string;
    const evil = await rawMcp(base, token, undefined, { origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect(await evil.json()).toMatchObject({ error: 'forbidden' });
    expect((await rawMcp(base, undefined, undefined, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await rawMcp(base, token, undefined, { origin: 'null' })).status).toBe(403);
    for (const origin of [base, 'http://localhost:6274', 'http://127.0.0.1:9999']) {
      const allowed = await rawMcp(base, token, undefined, { origin });
      expect(allowed.status, origin).toBe(200);
      expect(allowed.headers.get('access-control-allow-origin')).toBe(origin);
    }
  });

  it('answers CORS preflights for /mcp, the metadata and the token endpoints', async () => {
    const preflight = (path: string, origin: string) =>
      fetch(`${base}${path}`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, mcp-protocol-version' },
      });
    const mcp = await preflight('/mcp', 'http://localhost:6274');
    expect(mcp.status).toBe(204);
    expect(mcp.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
    expect(mcp.headers.get('access-control-allow-headers')).toContain('Mcp-Protocol-Version');
    expect(mcp.headers.get('access-control-allow-headers')).toContain('Mcp-Name');
    expect((await preflight('/mcp', 'https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
    for (const path of ['/oauth/token', '/oauth/register', '/oauth/revoke', '/.well-known/oauth-authorization-server']) {
      const response = await preflight(path, 'https://claude.ai');
      expect(response.status, path).toBe(204);
      expect(response.headers.get('access-control-allow-origin'), path).toBe('*');
    }
    const unauthorized = await rawMcp(base, undefined, undefined, { origin: 'http://localhost:6274' });
    expect(unauthorized.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
  });

  it('limits each connection to 60 requests a minute, with the headers', async () => {
    const grant = await manualGrant(base, customer.email);
    const token = grant.tokens.access_token as string;
    const first = await rawMcp(base, token);
    expect(first.headers.get('x-ratelimit-limit')).toBe('60');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('59');
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=60;w=60');
    for (let i = 0; i < 59; i++) await rawMcp(base, token);
    // Any other request over the limit is a 429; a tool call gets the refusal as its error result.
    const listing = await rawMcp(base, token);
    expect(listing.status).toBe(429);
    expect(await listing.json()).toMatchObject({ error: 'rate_limited', limit: 60 });
    const limited = await callTool(token, 'list_sites', {});
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(await toolError(limited)).toMatchObject({ error: 'rate_limited', limit: 60 });
    await harness.services.activity.flush();
    const logged = await harness.services.db.kysely
      .selectFrom('activity_log')
      .selectAll()
      .where('channel', '=', 'mcp')
      .where('error', '=', 'rate_limited')
      .where('tool', '=', 'list_sites')
      .executeTakeFirstOrThrow();
    expect(logged).toMatchObject({ status: 429, tool: 'list_sites', operation: 'listSites' });
  });

  it('has no stream and no session: GET and DELETE are 405', async () => {
    const grant = await manualGrant(base, customer.email);
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${base}/mcp`, { method, headers: { authorization: `Bearer ${grant.tokens.access_token as string}` } });
      expect(response.status, method).toBe(405);
    }
  });

  it('serves a 2025-06-18 client by raw JSON-RPC, in JSON', async () => {
    const grant = await manualGrant(base, customer.email);
    const token = grant.tokens.access_token as string;
    const init = await rawMcp(base, token, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    expect(init.headers.get('content-type')).toContain('application/json');
    expect(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe('2025-06-18');
    const list = await callTool(token, 'list_sites', {});
    expect(list.headers.get('content-type')).toContain('application/json');
    const { result } = (await list.json()) as { result: { structuredContent: { data: { id: number }[] } } };
    expect(result.structuredContent.data.map((s) => s.id)).toEqual([site.siteId]);
  });
});

describe('a 2025-03-26 client (no structuredContent in its protocol)', () => {
  it('lists no output schemas and gets every result as JSON text alone, a body window included', async () => {
    const grant = await manualGrant(base, customer.email);
    const token = grant.tokens.access_token as string;
    const era = { 'mcp-protocol-version': '2025-03-26' };
    const init = await rawMcp(base, token, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    expect(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe('2025-03-26');
    const listed = (await (await rawMcp(base, token, undefined, era)).json()) as { result: { tools: Record<string, unknown>[] } };
    for (const tool of listed.result.tools) {
      expect(tool.outputSchema, tool.name as string).toBeUndefined();
      expect(tool.annotations, tool.name as string).toMatchObject({ title: expect.any(String) });
    }
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_article', arguments: { article_id: site.articleIds[0] } } };
    const { result } = (await (await rawMcp(base, token, call, era)).json()) as { result: { structuredContent?: unknown; content: { text: string }[] } };
    expect(result.structuredContent).toBeUndefined();
    const body = JSON.parse(result.content[0]!.text) as { data: { body: string } };
    expect(body.data.body.length).toBeGreaterThan(0);
    expect(body.data.body).not.toContain('structuredContent');
  });
});

describe('a client connected to the official SDK with a read-only grant', () => {
  it('gets insufficient_scope as a tool error, not a step-up loop', async () => {
    const { client } = await connectWithOAuth(base, customer.email, { mode: 'auto' }, { access: 'read' });
    const result = await client.callTool({ name: 'update_article', arguments: { article_id: site.articleIds[0]!, title: 'x' } });
    expect(result.isError).toBe(true);
    expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toMatchObject({ error: 'insufficient_scope' });
    await client.close();
  });
});
