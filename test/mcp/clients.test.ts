import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { UnauthorizedError as UnauthorizedErrorV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiGet, seedSite } from '../helpers/fixtures.js';
import { createCustomer, dialectName, useHarness } from '../helpers/harness.js';
import {
  BACKLINK,
  type Customer,
  expectUnchanged,
  INTERNAL,
  PROTECTED_BODY,
  revisionsOf,
  type SeededArticle,
  seedArticle,
  setEditCount,
  snapshot,
} from '../helpers/write-fixtures.js';
import { authorizeInBrowser, CookieJar, manualGrant, TestOAuthProvider } from '../helpers/oauth-client.js';
import { expectTextForm } from './result-forms.js';

/**
 * Every tool and every error path of the agent interface, through each generation of the official
 * TypeScript client that assistants ship with, over real HTTP with tokens from the real OAuth flow.
 * The 1.x client checks `structuredContent` against the tool's outputSchema, errors included, so
 * it is the one that catches an error result carrying the Error body as structured content.
 */

interface ToolResult {
  isError?: boolean;
  content: unknown[];
  structuredContent?: unknown;
}

interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: string; properties?: Record<string, unknown>; additionalProperties?: unknown };
  outputSchema?: { type: string };
  annotations?: Record<string, unknown>;
}

/** The part of a client the tests use; both generations have it with the same shape. */
interface ConnectedClient {
  listTools(): Promise<{ tools: ListedTool[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<ToolResult>;
  close(): Promise<void>;
}

const clientInfo = { name: 'anchorage-clients-test', version: '1.0.0' };

const generations: { name: string; connect(mcpUrl: URL, token: string): Promise<ConnectedClient> }[] = [
  {
    name: '2.x client (@modelcontextprotocol/client), 2026-07-28',
    async connect(mcpUrl, token) {
      const client = new ClientV2(clientInfo, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new TransportV2(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      return client as unknown as ConnectedClient;
    },
  },
  {
    name: '2.x client (@modelcontextprotocol/client), 2025-11-25',
    async connect(mcpUrl, token) {
      const client = new ClientV2(clientInfo, { versionNegotiation: { mode: 'legacy' } });
      await client.connect(new TransportV2(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      return client as unknown as ConnectedClient;
    },
  },
  {
    name: '1.x client (@modelcontextprotocol/sdk)',
    async connect(mcpUrl, token) {
      const client = new ClientV1(clientInfo);
      await client.connect(new TransportV1(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      return client as unknown as ConnectedClient;
    },
  },
];

const readTools = ['list_sites', 'list_articles', 'get_article', 'list_backlinks', 'get_stats', 'search_articles'];
const writeTools = ['update_article', 'replace_featured_image', 'replace_in_site'];

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** What each tool may do, as its annotations must say. */
const honestAnnotations: Record<string, Record<string, boolean>> = {
  list_sites: readOnly,
  list_articles: readOnly,
  get_article: readOnly,
  list_backlinks: readOnly,
  get_stats: readOnly,
  search_articles: readOnly,
  // It can replace a whole body; repeating a list of replacements is not a no-op.
  update_article: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  // It overwrites the image; the same image again (content-addressed) changes nothing.
  replace_featured_image: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  // It rewrites bodies across a site; repeated, it finds nothing more to replace only if replace holds no find.
  replace_in_site: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};

const maxImageBytes = 256 * 1024;
// A small byte limit, so that image_too_large is reached without a 10 MiB upload.
const harness = useHarness({ listen: true, env: { MAX_IMAGE_BYTES: String(maxImageBytes) } });
let base: string;
let mcpUrl: URL;

beforeAll(async () => {
  base = harness.settings.publicUrl;
  mcpUrl = new URL('/mcp', base);
});

/** A user's browser, signed in once; each grant is one more Allow on the consent page. */
const jars = new Map<string, CookieJar>();
async function grantToken(email: string, access: 'read' | 'write' = 'write'): Promise<{ token: string; grantId: number }> {
  if (!jars.has(email)) jars.set(email, new CookieJar());
  const { tokens } = await manualGrant(base, email, { access, jar: jars.get(email) });
  const token = tokens.access_token as string;
  const actor = await harness.services.oauth.authenticate(token, `${base}/mcp`, null);
  return { token, grantId: actor!.credential.kind === 'mcp_grant' ? actor!.credential.id : 0 };
}

/** The Error body of an error result: JSON text, and no structuredContent. */
function errorBody(result: ToolResult, label: string): Record<string, unknown> {
  expect(result.isError, `${label}: ${JSON.stringify(result.content).slice(0, 300)}`).toBe(true);
  expect(result.structuredContent, label).toBeUndefined();
  const [first] = result.content as { type: string; text: string }[];
  expect(first!.type).toBe('text');
  const body = JSON.parse(first!.text) as Record<string, unknown>;
  expect(typeof body.message, label).toBe('string');
  return body;
}

/** get_article's meta for a body that fits in one window. */
const wholeBodyMeta = (body: string) => ({ body_offset: 0, body_length: [...body].length, body_total_length: [...body].length, next_offset: null });

/** The structured content of a success result, checked against its text. */
function successBody(result: ToolResult, label: string): Record<string, unknown> {
  expect(result.isError, `${label}: ${JSON.stringify(result.content).slice(0, 300)}`).toBeFalsy();
  expectTextForm(result, label);
  return result.structuredContent as Record<string, unknown>;
}

/** An expected refusal: the error id and, for validation_failed, exactly the fields it names. */
type Refusal = [tool: string, args: Record<string, unknown>, error: string, fields?: string[]];

async function expectRefusals(client: ConnectedClient, refusals: Refusal[]) {
  for (const [tool, args, error, fields] of refusals) {
    const label = `${tool} ${JSON.stringify(args).slice(0, 120)}`;
    const body = errorBody(await client.callTool({ name: tool, arguments: args }), label);
    expect(body.error, label).toBe(error);
    if (fields) expect(Object.keys(body.fields as object).sort(), label).toEqual([...fields].sort());
  }
}

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#0a0' } })
    .png({ palette: true, compressionLevel: 9 })
    .toBuffer();

describe.each(generations)(`MCP tools through the $name (${dialectName})`, ({ connect }) => {
  let customer: Customer;
  let other: SeededArticle;
  let siteId: number;
  let articleId: number;
  let publishedIds: number[];
  const clients: ConnectedClient[] = [];

  /** A client of its own grant (each grant has its own 60 requests a minute), tools listed as an assistant does. */
  async function connected(email = customer.email, access: 'read' | 'write' = 'write') {
    const { token, grantId } = await grantToken(email, access);
    const client = await connect(mcpUrl, token);
    clients.push(client);
    const { tools } = await client.listTools();
    return { client, tools, grantId };
  }

  beforeAll(async () => {
    customer = await createCustomer(harness.services);
    ({ siteId, articleIds: publishedIds } = await seedSite(harness.services, customer.email, {
      name: 'Bright Smile Dental',
      website_url: 'https://brightsmile.example',
      articles: [
        { status: 'published', title: 'Check-ups', published_at: '2026-10-01T09:00:00Z', body: PROTECTED_BODY },
        { status: 'published', title: 'Flossing', published_at: '2026-10-20T09:00:00Z', body: '<p>Floss daily.</p>' },
        { status: 'draft', title: 'Whitening', body: '<p>Soon.</p>' },
      ],
      backlinks: [
        { category: 'industry', acquired_at: '2026-10-03T10:00:00Z', source_domain: 'dental.example', anchor_type: 'exact', status: 'live' },
        { category: 'local', acquired_at: '2026-10-15T10:00:00Z', source_domain: 'city.example', anchor_type: 'branded', status: 'pending' },
      ],
    }));
    articleId = publishedIds[0]!;
    other = await seedArticle(harness.services);
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
  });

  it('lists every tool with honest annotations and strict input schemas, within 12,000 characters', async () => {
    const { tools } = await connected();
    expect(tools.map((t) => t.name)).toEqual([...readTools, ...writeTools]);
    // Read by a model at the start of every conversation: names, titles, descriptions, schemas, annotations.
    expect(JSON.stringify(tools).length).toBeLessThanOrEqual(12_000);
    for (const tool of tools) {
      expect(tool.title, tool.name).toEqual(expect.any(String));
      expect(tool.annotations, tool.name).toEqual(honestAnnotations[tool.name]);
      expect(tool.inputSchema.type, tool.name).toBe('object');
      // An argument the tool does not take is refused, and the schema says so.
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
    // The staff filters are REST-only: a connection sees its own account, even for staff.
    expect(Object.keys(tools.find((t) => t.name === 'list_sites')!.inputSchema.properties!)).toEqual(['page', 'per_page']);
    const update = tools.find((t) => t.name === 'update_article')!;
    expect(Object.keys(update.inputSchema.properties!).sort()).toEqual(
      ['article_id', 'body', 'dry_run', 'meta_description', 'reason', 'replacements', 'title'].sort(),
    );
  });

  it('a read-only connection lists no write tools, and calling one anyway is insufficient_scope', async () => {
    const { client, tools } = await connected(customer.email, 'read');
    expect(tools.map((t) => t.name)).toEqual(readTools);
    const before = await snapshot(harness, { customer, siteId, articleId });
    await expectRefusals(client, [
      ['update_article', { article_id: articleId, title: 'Changed' }, 'insufficient_scope'],
      ['update_article', { article_id: articleId, body: '<p>gone</p>' }, 'insufficient_scope'],
      // Not offered at all: the permissions step answers before the arguments are looked at.
      ['update_article', { article_id: articleId, colour: 'red' }, 'insufficient_scope'],
      ['replace_featured_image', { article_id: articleId, url: 'https://img.example/new.jpg' }, 'insufficient_scope'],
      ['replace_in_site', { site_id: siteId, find: 'the', replace: 'a' }, 'insufficient_scope'],
    ]);
    await expectUnchanged(harness, { customer, siteId, articleId }, before);
    successBody(await client.callTool({ name: 'get_article', arguments: { article_id: articleId } }), 'read still works');
  });

  it('a staff connection sees only its own account and is not offered the staff filters', async () => {
    const staff = await createCustomer(harness.services, { staff: true });
    const own = await seedSite(harness.services, staff.email, { name: 'Staff site' });
    const { client, tools } = await connected(staff.email);
    expect(tools.find((t) => t.name === 'list_sites')!.inputSchema.properties).not.toHaveProperty('account');
    const listed = successBody(await client.callTool({ name: 'list_sites', arguments: {} }), 'list_sites');
    expect((listed.data as { id: number }[]).map((s) => s.id)).toEqual([own.siteId]);
    await expectRefusals(client, [
      ['list_sites', { account: customer.email }, 'validation_failed', ['account']],
      ['list_sites', { website: 'brightsmile' }, 'validation_failed', ['website']],
      ['get_article', { article_id: articleId }, 'not_found'],
      ['list_articles', { site_id: siteId }, 'not_found'],
      ['update_article', { article_id: articleId, title: 'Staff edit' }, 'not_found'],
    ]);
  });

  it('answers every read tool exactly as its REST twin', async () => {
    const { client } = await connected();
    const pairs: [string, Record<string, unknown>, string][] = [
      ['list_sites', {}, '/sites'],
      ['list_sites', { page: 2, per_page: 1 }, '/sites?page=2&per_page=1'],
      ['list_articles', { site_id: siteId }, `/sites/${siteId}/articles`],
      ['list_articles', { site_id: siteId, status: 'published', from: '2026-10-01', to: '2026-10-10', per_page: 5 }, `/sites/${siteId}/articles?status=published&from=2026-10-01&to=2026-10-10&per_page=5`],
      ['get_article', { article_id: articleId }, `/articles/${articleId}`],
      ['list_backlinks', { site_id: siteId, from: '2026-10-01', to: '2026-10-31' }, `/sites/${siteId}/backlinks?from=2026-10-01&to=2026-10-31`],
      ['get_stats', { site_id: siteId, period: '2026-10' }, `/sites/${siteId}/stats?period=2026-10`],
      ['get_stats', { site_id: siteId, from: '2026-09-01', to: '2026-10-31' }, `/sites/${siteId}/stats?from=2026-09-01&to=2026-10-31`],
      ['get_stats', { site_id: siteId }, `/sites/${siteId}/stats`],
    ];
    for (const [name, args, path] of pairs) {
      const rest = await apiGet(harness.app, `/api/v1${path}`, customer.key);
      expect(rest.status, path).toBe(200);
      // get_article holds the whole body as one window (meta says where it lies); the rest is REST's.
      const expected = name === 'get_article' ? { ...rest.body, meta: wholeBodyMeta(rest.body.data.body) } : rest.body;
      expect(successBody(await client.callTool({ name, arguments: args }), name)).toEqual(expected);
    }
  });

  it('answers every read tool’s errors as error results the client accepts', async () => {
    const { client, grantId } = await connected();
    const refusals: Refusal[] = [
      ['list_sites', { page: 0 }, 'validation_failed', ['page']],
      ['list_sites', { per_page: 101 }, 'validation_failed', ['per_page']],
      ['list_sites', { page: 1.5 }, 'validation_failed', ['page']],
      ['list_sites', { colour: 'red', size: 3 }, 'validation_failed', ['colour', 'size']],
      ['list_articles', {}, 'validation_failed', ['site_id']],
      ['list_articles', { site_id: other.siteId }, 'not_found'],
      ['list_articles', { site_id: 2_147_483_647 }, 'not_found'],
      ['list_articles', { site_id: 'abc' }, 'validation_failed', ['site_id']],
      ['list_articles', { site_id: siteId, status: 'deleted' }, 'validation_failed', ['status']],
      ['list_articles', { site_id: siteId, from: '2026-13-01' }, 'validation_failed', ['from']],
      ['list_articles', { site_id: siteId, from: '2026-10-02', to: '2026-10-01' }, 'validation_failed'],
      ['list_articles', { site_id: siteId, sort: 'title' }, 'validation_failed', ['sort']],
      ['get_article', {}, 'validation_failed', ['article_id']],
      ['get_article', { article_id: other.articleId }, 'not_found'],
      ['get_article', { article_id: 0 }, 'validation_failed', ['article_id']],
      ['get_article', { article_id: 2_147_483_648 }, 'validation_failed', ['article_id']],
      ['get_article', { article_id: articleId, fields: 'body' }, 'validation_failed', ['fields']],
      ['list_backlinks', { site_id: other.siteId }, 'not_found'],
      ['list_backlinks', { site_id: siteId, to: '31/10/2026' }, 'validation_failed', ['to']],
      ['list_backlinks', { site_id: siteId, status: 'dead' }, 'validation_failed', ['status']],
      ['list_backlinks', { site_id: siteId, category: 'national' }, 'validation_failed', ['category']],
      ['list_backlinks', { site_id: siteId, anchor_type: 'exact' }, 'validation_failed', ['anchor_type']],
      ['get_stats', { site_id: other.siteId }, 'not_found'],
      ['get_stats', { site_id: siteId, period: 'last_month', from: '2026-10-01', to: '2026-10-02' }, 'validation_failed'],
      ['get_stats', { site_id: siteId, from: '2026-10-01' }, 'validation_failed'],
      ['get_stats', { site_id: siteId, period: 'yesterday' }, 'validation_failed'],
      ['get_stats', { site_id: siteId, month: '2026-10' }, 'validation_failed', ['month']],
    ];
    await expectRefusals(client, refusals);
    // Each call is logged once, with its error.
    await harness.services.activity.flush();
    const logged = await harness.services.db.kysely
      .selectFrom('activity_log')
      .select(['tool', 'status', 'error'])
      .where('mcp_grant_id', '=', grantId)
      .where('tool', 'is not', null)
      .orderBy('id')
      .execute();
    expect(logged).toHaveLength(refusals.length);
    expect(logged.map((row) => row.error)).toEqual(refusals.map(([, , error]) => error));
  });

  it('edits through update_article: small edits, a whole body, dry runs; each change one revision', async () => {
    const target = await seedArticle(harness.services, {}, customer);
    const { client } = await connected();
    const call = (args: Record<string, unknown>) => client.callTool({ name: 'update_article', arguments: { article_id: target.articleId, ...args } });

    const dry = successBody(await call({ title: 'Dry title', dry_run: true }), 'dry run');
    expect(dry).toMatchObject({ data: { title: 'Dry title' }, meta: { dry_run: true } });
    expect(await revisionsOf(harness, target.articleId)).toHaveLength(1);

    const edited = successBody(
      await call({ replacements: [{ find: 'Closing words', replace: 'Final words' }], meta_description: 'New meta.', reason: 'clearer' }),
      'replacements',
    );
    expect(edited).toMatchObject({ data: { meta_description: 'New meta.' }, meta: { sanitized: [] } });
    expect((edited.data as { body: string }).body).toContain('Final words here.');

    const body = `<p>All new.</p><p>${BACKLINK} and ${INTERNAL}</p><script>alert(1)</script>`;
    const replaced = successBody(await call({ body, title: 'Rewritten' }), 'full body');
    expect(replaced).toMatchObject({ data: { title: 'Rewritten', body: `<p>All new.</p><p>${BACKLINK} and ${INTERNAL}</p>` } });
    expect((replaced.meta as { sanitized: string[] }).sanitized.length).toBeGreaterThan(0);

    // The same body again changes nothing and creates no revision.
    successBody(await call({ body: `<p>All new.</p><p>${BACKLINK} and ${INTERNAL}</p>` }), 'no-op');
    const revisions = await revisionsOf(harness, target.articleId);
    expect(revisions.map((r) => [r.origin, r.reason])).toEqual([
      ['rewrite', 'Imported from the content pipeline'],
      ['mcp', 'clearer'],
      ['mcp', null],
    ]);
  });

  it('answers every update_article error as an error result and saves nothing', async () => {
    const target = await seedArticle(harness.services, {}, customer);
    const before = await snapshot(harness, target);
    const { client } = await connected();
    const id = target.articleId;
    await expectRefusals(client, [
      ['update_article', { article_id: other.articleId, title: 'Theirs' }, 'not_found'],
      ['update_article', { article_id: 2_147_483_647, title: 'Nobody' }, 'not_found'],
      ['update_article', { title: 'No id' }, 'validation_failed', ['article_id']],
      ['update_article', { article_id: id }, 'validation_failed', ['(arguments)']],
      ['update_article', { article_id: id, reason: 'only a reason' }, 'validation_failed', ['(arguments)']],
      ['update_article', { article_id: id, body: PROTECTED_BODY, replacements: [{ find: 'Intro', replace: 'Opening' }] }, 'validation_failed', ['body']],
      ['update_article', { article_id: id, body: PROTECTED_BODY, meta_description: 'x' }, 'validation_failed', ['body']],
      ['update_article', { article_id: id, title: 'x'.repeat(256) }, 'validation_failed', ['title']],
      ['update_article', { article_id: id, meta_description: 'm'.repeat(501) }, 'validation_failed', ['meta_description']],
      ['update_article', { article_id: id, title: 'ok', reason: 'r'.repeat(2001) }, 'validation_failed', ['reason']],
      ['update_article', { article_id: id, body: 42 }, 'validation_failed', ['body']],
      ['update_article', { article_id: id, dry_run: 'yes', title: 'x' }, 'validation_failed', ['dry_run']],
      ['update_article', { article_id: id, replacements: [{ find: '' }] }, 'validation_failed', ['replacements.0.find']],
      ['update_article', { article_id: id, replacements: [{ find: 'Intro', replace_all: true }] }, 'validation_failed', ['replacements.0.replace_all']],
      ['update_article', { article_id: id, replacements: Array.from({ length: 51 }, () => ({ find: 'Intro' })) }, 'validation_failed', ['replacements']],
      ['update_article', { article_id: id, title: 'x', status: 'archived' }, 'validation_failed', ['status']],
      ['update_article', { article_id: id, title: 'x', If_Match: '"abc"', idempotency_key: 'k' }, 'validation_failed', ['If_Match', 'idempotency_key']],
    ]);
    // Protected links, by a whole body and by a replacement, also on a dry run.
    for (const args of [
      { body: '<p>No links left.</p>' },
      { body: PROTECTED_BODY.replace('partner page', 'partner site') },
      { replacements: [{ find: BACKLINK, replace: 'partner page' }] },
      { replacements: [{ find: 'href="/guides/setup"', replace: 'href="/guides/other"' }], dry_run: true },
    ]) {
      const body = errorBody(await client.callTool({ name: 'update_article', arguments: { article_id: id, ...args } }), JSON.stringify(args));
      expect(body.error).toBe('protected_links_violation');
      expect(body.protected_links).toEqual(expect.arrayContaining([expect.objectContaining({ type: expect.any(String), href: expect.any(String) })]));
    }
    const failed = errorBody(
      await client.callTool({
        name: 'update_article',
        arguments: {
          article_id: id,
          replacements: [
            { find: 'Intro paragraph', replace: 'Opening paragraph' },
            { find: 'not in the body' },
            { find: 'words' },
            { find: 'paragraph', all: true },
          ],
        },
      }),
      'replacement_failed',
    );
    expect(failed).toMatchObject({ error: 'replacement_failed', failures: [{ index: 1, matches: 0 }, { index: 2, matches: 2 }] });
    await expectUnchanged(harness, target, before);
  });

  it('replaces the featured image from a URL or base64 bytes, and answers every refusal as an error result', async () => {
    const target = await seedArticle(harness.services, {}, customer);
    const { client } = await connected();
    const call = (args: Record<string, unknown>) =>
      client.callTool({ name: 'replace_featured_image', arguments: { article_id: target.articleId, ...args } });

    const byUrl = successBody(await call({ url: 'https://images.example/cover.jpg', reason: 'new cover' }), 'url');
    expect(byUrl).toMatchObject({ data: { id: target.articleId, featured_image_url: 'https://images.example/cover.jpg' } });

    const image = await png(40, 30);
    const uploaded = successBody(await call({ image_base64: image.toString('base64'), filename: 'cover.png' }), 'upload');
    const served = (uploaded.data as { featured_image_url: string }).featured_image_url;
    expect(served.startsWith(`${base}/media/`)).toBe(true);
    const fetched = await fetch(served);
    expect(fetched.status).toBe(200);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(image)).toBe(true);
    // The same bytes again: same address, nothing changes (idempotentHint).
    const revisions = (await revisionsOf(harness, target.articleId)).length;
    successBody(await call({ image_base64: image.toString('base64') }), 'same upload');
    expect(await revisionsOf(harness, target.articleId)).toHaveLength(revisions);

    const before = await snapshot(harness, target);
    const noise = await sharp(randomBytes(400 * 400 * 3), { raw: { width: 400, height: 400, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toBuffer();
    expect(noise.length).toBeGreaterThan(maxImageBytes);
    // 7000 × 6000 = 42 megapixels in a few kilobytes.
    const huge = await png(7000, 6000);
    expect(huge.length).toBeLessThan(maxImageBytes);
    await expectRefusals(client, [
      ['replace_featured_image', { article_id: other.articleId, url: 'https://images.example/x.jpg' }, 'not_found'],
      ['replace_featured_image', { url: 'https://images.example/x.jpg' }, 'validation_failed', ['article_id']],
      ['replace_featured_image', { article_id: target.articleId }, 'validation_failed', ['url', 'image_base64']],
      ['replace_featured_image', { article_id: target.articleId, url: 'https://images.example/x.jpg', image_base64: image.toString('base64') }, 'validation_failed', ['url', 'image_base64']],
      ['replace_featured_image', { article_id: target.articleId, url: 'javascript:alert(1)' }, 'validation_failed', ['url']],
      ['replace_featured_image', { article_id: target.articleId, url: 'ftp://images.example/x.jpg' }, 'validation_failed', ['url']],
      ['replace_featured_image', { article_id: target.articleId, url: 'https://images.example/a b.jpg' }, 'validation_failed', ['url']],
      ['replace_featured_image', { article_id: target.articleId, url: 'https://images.example/x.jpg', filename: 'x.jpg' }, 'validation_failed', ['filename']],
      ['replace_featured_image', { article_id: target.articleId, image_base64: 'not base64!' }, 'validation_failed', ['image_base64']],
      ['replace_featured_image', { article_id: target.articleId, image_base64: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64') }, 'unsupported_image'],
      ['replace_featured_image', { article_id: target.articleId, image_base64: noise.toString('base64') }, 'image_too_large'],
      ['replace_featured_image', { article_id: target.articleId, image_base64: huge.toString('base64') }, 'image_too_large'],
      ['replace_featured_image', { article_id: target.articleId, url: 'https://images.example/x.jpg', alt: 'a cover' }, 'validation_failed', ['alt']],
    ]);
    const tooLarge = errorBody(await call({ image_base64: noise.toString('base64') }), 'bytes');
    expect(tooLarge.limit).toBe(maxImageBytes);
    await expectUnchanged(harness, target, before);
  });

  it('answers the daily edit allowance and the request limit as error results', async () => {
    const limited = await seedArticle(harness.services);
    const before = await snapshot(harness, limited);
    await setEditCount(harness, limited.customer.accountId, 200);
    const { client } = await connected(limited.customer.email);
    for (const [name, args] of [
      ['update_article', { article_id: limited.articleId, title: 'One too many' }],
      ['replace_featured_image', { article_id: limited.articleId, url: 'https://images.example/late.jpg' }],
    ] as const) {
      expect(errorBody(await client.callTool({ name, arguments: args }), name)).toMatchObject({ error: 'edit_limit_exceeded', limit: 200 });
    }
    await expectUnchanged(harness, limited, { ...before, edits: 200 });

    // 60 requests a minute per connection: the refused call is an error result too, not a transport failure.
    let refused: ToolResult | undefined;
    let answered = 0;
    // Bounded: a new one-minute window may open once while the loop runs.
    while (!refused && answered < 125) {
      const result = await client.callTool({ name: 'list_sites', arguments: {} });
      if (result.isError) refused = result;
      else answered += 1;
    }
    expect(errorBody(refused!, 'over the limit')).toMatchObject({ error: 'rate_limited', limit: 60 });
  });

  it('refuses a tool that does not exist as a protocol error (the client throws)', async () => {
    const { client } = await connected();
    await expect(client.callTool({ name: 'delete_article', arguments: { article_id: articleId } })).rejects.toThrow(/delete_article/);
  });
});

describe(`the 1.x client signing in by itself (${dialectName})`, () => {
  it('discovers, registers, sends the user to sign in and Allow, exchanges the code, and connects', async () => {
    const customer = await createCustomer(harness.services);
    const provider = new TestOAuthProvider('http://127.0.0.1:8976/callback', 'Assistant with the 1.x SDK');
    const first = new TransportV1(mcpUrl, { authProvider: provider });
    await expect(new ClientV1(clientInfo).connect(first)).rejects.toBeInstanceOf(UnauthorizedErrorV1);
    const { consent, callback } = await authorizeInBrowser(base, provider.lastAuthorizationUrl!, customer.email, { access: 'read' });
    expect(consent).toContain('Assistant with the 1.x SDK');
    expect(callback.searchParams.get('state')).toBe(provider.lastState);
    await first.finishAuth(callback.searchParams.get('code')!);
    expect(provider.tokens()).toMatchObject({ token_type: expect.stringMatching(/^bearer$/i), scope: 'articles:read' });

    const client = new ClientV1(clientInfo);
    await client.connect(new TransportV1(mcpUrl, { authProvider: provider }));
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(readTools);
    const result = (await client.callTool({ name: 'update_article', arguments: { article_id: 1, title: 'x' } })) as ToolResult;
    expect(errorBody(result, 'read-only')).toMatchObject({ error: 'insufficient_scope' });
    await client.close();
  });
});
