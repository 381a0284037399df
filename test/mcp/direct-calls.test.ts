import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildBaseApp } from '../../src/http/base.js';
import { oauthUrlsOf } from '../../src/services/oauth/index.js';
import { mcpEndpoint } from '../../src/mcp/plugin.js';
import { tools } from '../../src/operations/index.js';
import { scopeOf } from '../../src/services/oauth/scopes.js';
import { seedSite, type SeededSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { setEditCount } from '../helpers/write-fixtures.js';

/**
 * A single 2025-era tools/call is answered without the SDK (src/mcp/direct-call.ts). For each
 * request here, the service's answer equals the one of an endpoint that sends every request
 * through the SDK: status, headers, and the body byte for byte. A request the direct path takes is told by its
 * Content-Length (the SDK's answers with a body are streams, sent chunked); the others must go to
 * the SDK.
 */

const harness = useHarness();
let viaSdk: FastifyInstance;
let customer: Awaited<ReturnType<typeof createCustomer>>;
let site: SeededSite;
let otherSite: SeededSite;
let oauthClientId: string;

const redirectUri = 'http://127.0.0.1:9/callback';

beforeAll(async () => {
  const { services, settings } = harness;
  const built = await buildBaseApp({ services, settings, logger: false });
  await built.app.register(mcpEndpoint, { services, settings, tools, listener: 'main', prefix: '/mcp', viaSdk: true });
  await built.app.ready();
  viaSdk = built.app;
  customer = await createCustomer(services);
  const other = await createCustomer(services);
  const body = '<h2>Opening</h2><p>The first sentence stays. The second sentence changes.</p><h2>Close</h2><p>The end.</p>';
  site = await seedSite(services, customer.email, {
    name: 'Mine',
    articles: [
      { status: 'published', title: 'Twin', body, published_at: '2026-10-01T09:00:00Z' },
      { status: 'published', title: 'Twin', body, published_at: '2026-10-01T09:00:00Z' },
      { status: 'draft', title: 'Third', body: '<p>Short.</p>' },
    ],
    backlinks: [
      { acquired_at: '2026-10-03T10:00:00Z', source_domain: 'news.example', anchor_text: 'news', anchor_type: 'exact', status: 'live', category: 'industry' },
    ],
  });
  otherSite = await seedSite(services, other.email, { name: 'Theirs', articles: [{ status: 'published', title: 'Theirs', body: '<p>Theirs.</p>' }] });
  oauthClientId = (await services.oauth.register({ client_name: 'direct-calls test', redirect_uris: [redirectUri] }, async () => {})).client_id;
});
afterAll(async () => {
  await viaSdk?.close();
});

/** A new connection of the customer's: each request of a pair starts at the same count of its limit. */
async function grant(access: 'read' | 'write' = 'write'): Promise<string> {
  const { services, settings } = harness;
  const resource = oauthUrlsOf(settings, 'main').resource;
  const verifier = randomBytes(32).toString('base64url');
  const code = await services.oauth.issueCode({
    clientId: oauthClientId,
    userId: customer.userId,
    redirectUri,
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    resource,
    scope: scopeOf(access === 'write'),
  });
  const tokens = await services.oauth.exchangeCode({ code, clientId: oauthClientId, redirectUri, codeVerifier: verifier, resource });
  return tokens.access_token;
}

const baseHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

interface Answer {
  status: number;
  headers: Record<string, string>;
  /** The body as sent, byte for byte but for the seconds of a wall clock. */
  body: string;
  direct: boolean;
}

/** Headers that differ between any two answers (a request id, the date) or say how the body was sent. */
const ignored = new Set(['date', 'x-request-id', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);
/** Headers that count seconds on the wall clock: the two answers may fall in different seconds. */
const seconds = new Set(['x-ratelimit-reset', 'retry-after']);
const secondsInText = (text: string) => text.replace(/;t=\d+/g, ';t=…').replace(/retry in \d+ s/g, 'retry in … s');

async function send(app: FastifyInstance, token: string, payload: unknown, headers: Record<string, string | undefined>): Promise<Answer> {
  const sent = Object.fromEntries(Object.entries({ ...baseHeaders, ...headers, authorization: `Bearer ${token}` }).filter(([, v]) => v !== undefined));
  const response = await app.inject({ method: 'POST', url: '/mcp', headers: sent as Record<string, string>, payload: JSON.stringify(payload) });
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (ignored.has(name) || value === undefined) continue;
    const text = String(value);
    kept[name] = seconds.has(name) ? 'present' : secondsInText(text);
  }
  return { status: response.statusCode, headers: kept, body: secondsInText(response.body), direct: response.body !== '' && response.headers['content-length'] !== undefined };
}

/** The pair: the same request, on a new connection each, through the service and through the SDK alone. */
async function pair(payload: unknown, options: { headers?: Record<string, string | undefined>; access?: 'read' | 'write'; before?: (token: string) => Promise<void> } = {}) {
  const [mine, theirs] = [await grant(options.access), await grant(options.access)];
  await options.before?.(mine);
  await options.before?.(theirs);
  const service = await send(harness.app, mine, payload, options.headers ?? {});
  const sdk = await send(viaSdk, theirs, payload, options.headers ?? {});
  return { service, sdk };
}

const call = (name: string, args?: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, ...(args === undefined ? {} : { arguments: args }) } });

function expectSame({ service, sdk }: { service: Answer; sdk: Answer }, direct: boolean) {
  expect(service.direct, 'answered by the direct path').toBe(direct);
  expect(sdk.direct).toBe(false);
  expect({ ...service, direct: undefined }).toEqual({ ...sdk, direct: undefined });
}

describe('a tool call answered directly equals the SDK’s answer', () => {
  const reads: [string, () => Record<string, unknown>][] = [
    ['get_article', () => ({ article_id: site.articleIds[0] })],
    ['get_article, a window with the outline', () => ({ article_id: site.articleIds[0], body_offset: 5, body_length: 20, outline: true })],
    ['list_articles', () => ({ site_id: site.siteId })],
    ['list_backlinks', () => ({ site_id: site.siteId })],
    ['get_stats', () => ({ site_id: site.siteId, period: '2026-10' })],
    ['list_sites', () => ({})],
    ['search_articles', () => ({ site_id: site.siteId, q: 'sentence' })],
  ];
  for (const [name, args] of reads) {
    it(name, async () => {
      const tool = name.split(',')[0]!;
      const answers = await pair(call(tool, args()));
      expectSame(answers, true);
      expect((JSON.parse(answers.service.body) as { result: { isError?: boolean } }).result.isError).toBeUndefined();
    });
  }

  it('each 2025-era protocol version, a string id and arguments left out', async () => {
    for (const version of ['2025-06-18', '2025-03-26', '2024-11-05', undefined]) {
      expectSame(await pair(call('get_article', { article_id: site.articleIds[2] }, 'a-string'), { headers: { 'mcp-protocol-version': version } }), true);
    }
    expectSame(await pair(call('list_sites')), true);
    expectSame(await pair(call('list_sites', {}, 0), { headers: { 'content-type': 'application/json; charset=utf-8', accept: 'text/event-stream, application/json;q=0.9' } }), true);
  });

  it('update_article with replacements, a dry run and a write', async () => {
    const replacements = [{ find: 'The second sentence changes.', replace: 'The second sentence changed.' }];
    const dryRun = await pair(call('update_article', { article_id: site.articleIds[0], replacements, dry_run: true, reason: 'test' }));
    expectSame(dryRun, true);
    // The twins differ by id only: each path writes one of them.
    const [first, second] = [site.articleIds[0]!, site.articleIds[1]!];
    const [mine, theirs] = [await grant(), await grant()];
    await setEditCount(harness, customer.accountId, 10);
    const service = await send(harness.app, mine, call('update_article', { article_id: second, replacements, reason: 'test' }), {});
    await setEditCount(harness, customer.accountId, 10);
    const sdk = await send(viaSdk, theirs, call('update_article', { article_id: first, replacements, reason: 'test' }), {});
    // Its id, in structuredContent and in the text (as JSON in a string).
    const asFirst = (answer: Answer) => ({
      ...answer,
      body: answer.body.replaceAll(`"id":${second},`, `"id":${first},`).replaceAll(`\\"id\\":${second},`, `\\"id\\":${first},`),
    });
    expect(service.headers['ratelimit-policy']).toContain('"edits"');
    expectSame({ service: asFirst(service), sdk }, true);
  });

  it('error results: not found, another account’s article, wrong and unknown arguments', async () => {
    expectSame(await pair(call('get_article', { article_id: 999_999 })), true);
    expectSame(await pair(call('get_article', { article_id: otherSite.articleIds[0] })), true);
    expectSame(await pair(call('get_article', { article_id: 'one', colour: 'red' })), true);
    expectSame(await pair(call('update_article', { article_id: site.articleIds[2], replacements: [{ find: 'Not there.', replace: 'x' }] })), true);
  });

  it('a read-only connection calling a write tool, which it is not offered', async () => {
    const answers = await pair(call('update_article', { article_id: site.articleIds[2], title: 'New' }), { access: 'read' });
    expectSame(answers, true);
    expect(answers.service.body).toContain('insufficient_scope');
  });

  it('a call over the connection’s limit: rate_limited as the result, with Retry-After', async () => {
    const useUp = async (token: string) => {
      for (let i = 0; i < 60; i++) expect((await send(harness.app, token, call('list_sites'), {})).status).toBe(200);
    };
    const answers = await pair(call('get_stats', { site_id: site.siteId, period: 'last_month' }), { before: useUp });
    expectSame(answers, true);
    expect(answers.service.headers['retry-after']).toBe('present');
    expect(answers.service.body).toContain('rate_limited');
  });
});

it('every tool’s output is an object, as structuredContent must be (the SDK checks results; the direct path does not)', () => {
  for (const tool of tools) expect(tool.output, tool.name).toBeInstanceOf(z.ZodObject);
});

describe('what the direct path leaves to the SDK gets the SDK’s answer', () => {
  const cases: [string, unknown, Record<string, string | undefined>?][] = [
    ['a tool that does not exist', call('no_such_tool', {})],
    ['arguments that are not an object', call('list_sites', ['a'])],
    ['a fractional id', call('list_sites', {}, 1.5)],
    ['a member JSON-RPC does not have', { ...call('list_sites', {}), extra: true }],
    ['a progress token', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_sites', arguments: {}, _meta: { progressToken: 3 } } }],
    ['a task', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_sites', arguments: {}, task: { ttl: 1000 } } }],
    ['a batch', [call('list_sites', {})]],
    ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }],
    ['tools/list', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }],
    ['an Accept without event streams', call('list_sites', {}), { accept: 'application/json' }],
    ['an Accept without JSON', call('list_sites', {}), { accept: 'text/event-stream' }],
    ['an unsupported protocol version', call('list_sites', {}), { 'mcp-protocol-version': '2024-01-01' }],
    ['the 2026-07-28 version without its envelope', call('list_sites', {}), { 'mcp-protocol-version': '2026-07-28' }],
  ];
  for (const [name, payload, headers] of cases) {
    it(name, async () => {
      expectSame(await pair(payload, { headers }), false);
    });
  }
});
