import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { seedArticle } from '../helpers/write-fixtures.js';
import { InjectBrowser } from '../web/browser.js';
import { CookieJar, manualGrant, rawMcp } from '../helpers/oauth-client.js';

/** Through the official MCP client: unknown tools in the activity log, paging words, backlink filters, article titles. */

let base: string;
let customer: Awaited<ReturnType<typeof createCustomer>>;
let siteId: number;
const jar = new CookieJar();
const metricsToken = 'metrics-token-0123456789';
const h = useHarness({ listen: true, env: { METRICS_TOKEN: metricsToken } });
const clients: Client[] = [];

beforeAll(async () => {
  base = h.settings.publicUrl;
  customer = await createCustomer(h.services);
  siteId = (
    await seedSite(h.services, customer.email, {
      name: 'Assistant',
      backlinks: [
        { category: 'industry', status: 'live', acquired_at: '2026-10-01T10:00:00Z', anchor_text: 'a' },
        { category: 'local', status: 'lost', acquired_at: '2026-10-02T10:00:00Z', anchor_text: 'b' },
        { category: 'industry', status: 'lost', acquired_at: '2026-10-03T10:00:00Z', anchor_text: 'c' },
      ],
    })
  ).siteId;
});

afterAll(async () => {
  for (const client of clients) await client.close();
});

/** A connection of its own grant (its own 60 requests a minute), and the grant's id. */
async function connected(): Promise<{ client: Client; token: string; grantId: number }> {
  const { tokens } = await manualGrant(base, customer.email, { jar });
  const token = tokens.access_token as string;
  const actor = await h.services.oauth.authenticate(token, `${base}/mcp`, null);
  const client = new Client({ name: 'unknown-tools-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return { client, token, grantId: actor!.credential.kind === 'mcp_grant' ? actor!.credential.id : 0 };
}

const logOf = async (grantId: number) => {
  await h.services.activity.flush();
  return h.services.db.kysely
    .selectFrom('activity_log')
    .select(['operation', 'tool', 'status', 'error'])
    .where('mcp_grant_id', '=', grantId)
    .orderBy('id')
    .execute();
};

interface Result {
  isError?: boolean;
  content: unknown[];
  structuredContent?: unknown;
}

const errorOf = (result: Result): Record<string, unknown> => {
  expect(result.isError).toBe(true);
  return JSON.parse((result.content[0] as { text: string }).text) as Record<string, unknown>;
};

describe('a call of a tool that does not exist', () => {
  it('is logged once as an error, not_found, and the activity page’s errors filter shows it', async () => {
    const { client, grantId } = await connected();
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool: no_such_tool/);
    const rows = (await logOf(grantId)).filter((row) => row.tool === 'no_such_tool');
    expect(rows).toEqual([{ operation: 'tools/call', tool: 'no_such_tool', status: 404, error: 'not_found' }]);

    const browser = new InjectBrowser(h.app);
    await browser.signIn(customer.email);
    const errors = (await browser.get(`/app/activity?status=error&credential=mcp:${grantId}`)).body;
    expect(errors).toMatch(/<code class="request-path">no_such_tool<\/code>[\s\S]*?<span class="status status-error">404<\/span><br><span class="muted small">not_found<\/span>/);
    const successes = (await browser.get(`/app/activity?status=success&credential=mcp:${grantId}`)).body;
    expect(successes).not.toContain('no_such_tool');
  });

  it('counts in the metrics under one label, whatever name it is called by', async () => {
    const { client } = await connected();
    for (const name of ['made_up_1', 'made_up_2', 'made_up_3']) await expect(client.callTool({ name, arguments: {} })).rejects.toThrow(`Unknown tool: ${name}`);
    const metrics = (await h.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${metricsToken}` } })).body;
    expect(metrics).not.toContain('made_up_');
    const unknown = metrics.split('\n').find((line) => line.startsWith('anchorage_mcp_tool_calls_total{tool="(unknown)",status="404"} '));
    expect(Number(unknown?.split(' ')[1])).toBeGreaterThanOrEqual(3);
  });

  it('keeps the protocol’s other refusals errors too, and its handshakes successes', async () => {
    const { token, grantId } = await connected();
    const before = (await logOf(grantId)).length;
    const send = (message: Record<string, unknown>) => rawMcp(base, token, { jsonrpc: '2.0', id: 9, ...message });
    // A method the server does not have, and a known tool's arguments of the wrong JSON type.
    expect((await (await send({ method: 'resources/list', params: {} })).json()).error).toBeDefined();
    const wrongShape = await send({ method: 'tools/call', params: { name: 'list_sites', arguments: 'page=1' } });
    expect(wrongShape.status).toBe(200);
    expect((await send({ method: 'tools/list', params: {} })).status).toBe(200);
    expect((await logOf(grantId)).slice(before)).toEqual([
      { operation: 'resources/list', tool: null, status: 404, error: 'not_found' },
      { operation: 'listSites', tool: 'list_sites', status: 422, error: 'validation_failed' },
      { operation: 'tools/list', tool: null, status: 200, error: null },
    ]);
  });
});

describe('tools', () => {
  it('give the paging range, as REST does', async () => {
    const { client } = await connected();
    for (const [args, field, message] of [
      [{ per_page: 101 }, 'per_page', 'Must be from 1 to 100.'],
      [{ per_page: 0 }, 'per_page', 'Must be from 1 to 100.'],
      [{ page: 0 }, 'page', 'Must be 1 or more: pages are numbered from 1.'],
      [{ page: -3 }, 'page', 'Must be 1 or more: pages are numbered from 1.'],
    ] as const) {
      for (const name of ['list_sites', 'list_backlinks'] as const) {
        const result = await client.callTool({ name, arguments: { ...(name === 'list_backlinks' ? { site_id: siteId } : {}), ...args } });
        expect(errorOf(result as Result), `${name} ${JSON.stringify(args)}`).toMatchObject({ error: 'validation_failed', fields: { [field]: [message] } });
      }
    }
  });

  it('list_backlinks filters by status and category, and says so in its listing', async () => {
    const { client } = await connected();
    const anchors = async (args: Record<string, unknown>) =>
      ((await client.callTool({ name: 'list_backlinks', arguments: { site_id: siteId, ...args } })).structuredContent as { data: { anchor_text: string }[] }).data.map((b) => b.anchor_text);
    expect(await anchors({ status: 'lost' })).toEqual(['c', 'b']);
    expect(await anchors({ category: 'industry' })).toEqual(['c', 'a']);
    expect(await anchors({ status: 'lost', category: 'local' })).toEqual(['b']);
    expect(errorOf((await client.callTool({ name: 'list_backlinks', arguments: { site_id: siteId, status: 'gone' } })) as Result)).toMatchObject({
      error: 'validation_failed',
      fields: { status: ['Must be one of "pending", "live", "lost".'] },
    });
    const { tools } = await client.listTools();
    const listing = tools.find((tool) => tool.name === 'list_backlinks')!;
    expect(listing.description).toContain('status (pending, live or lost) and category (industry or local)');
    expect(listing.inputSchema.properties).toMatchObject({
      status: { enum: ['pending', 'live', 'lost'] },
      category: { enum: ['industry', 'local'] },
    });
  });

  it('update_article refuses a blank title, alone or with a body, and saves nothing', async () => {
    const article = await seedArticle(h.services, {}, customer);
    const { client } = await connected();
    for (const args of [{ title: '' }, { title: ' \t ' }, { title: '', body: '<p>New.</p>' }, { title: ' ', dry_run: true }]) {
      const result = await client.callTool({ name: 'update_article', arguments: { article_id: article.articleId, ...args } });
      expect(errorOf(result as Result), JSON.stringify(args)).toMatchObject({ error: 'validation_failed', fields: { title: ['Must not be empty or only white space.'] } });
    }
    expect(await h.services.revisions.list(article.articleId)).toHaveLength(1);
    const { tools } = await client.listTools();
    const title = (tools.find((tool) => tool.name === 'update_article')!.inputSchema.properties as Record<string, Record<string, unknown>>).title!;
    expect(title).toMatchObject({ minLength: 1, pattern: '\\S' });
  });
});
