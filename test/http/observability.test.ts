import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toDay } from '../../src/core/time.js';
import { buildApp } from '../../src/app.js';
import { buildMetricsApp } from '../../src/http/metrics.js';
import { manualGrant, rawMcp } from '../helpers/oauth-client.js';
import { seedSite, type SeededSite } from '../helpers/fixtures.js';
import { createCustomer, dialectName, type Harness, startHarness } from '../helpers/harness.js';

const token = 'metrics-token-0123456789';
const scrape = async (harness: Harness, authorization = `Bearer ${token}`) =>
  harness.app.inject({ method: 'GET', url: '/metrics', headers: { authorization } });

/** The value of one series line (name and exact label set), or undefined when absent. */
function seriesValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics on the main listener behind METRICS_TOKEN', () => {
  let harness: Harness;
  let customer: Awaited<ReturnType<typeof createCustomer>>;
  let site: SeededSite;

  beforeAll(async () => {
    harness = await startHarness({ listen: true, env: { METRICS_TOKEN: token } });
    customer = await createCustomer(harness.services);
    site = await seedSite(harness.services, customer.email, { articles: [{ status: 'published', title: 'One', body: '<p>One two.</p>' }] });
  });
  afterAll(async () => harness?.close());

  const api = (url: string, key = customer.key, method: 'GET' | 'PATCH' = 'GET', payload?: object) =>
    harness.app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, payload });

  it('refuses a scrape without the token, or with a wrong one, with the catalogue 401', async () => {
    for (const authorization of ['', `Bearer ${token}x`, token, 'Bearer ']) {
      const response = await scrape(harness, authorization);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ error: 'unauthenticated' });
      expect(response.body).not.toContain(token);
    }
  });

  it('counts requests per operation name and status, never per raw URL, with a latency histogram', async () => {
    expect((await api('/api/v1/sites')).statusCode).toBe(200);
    expect((await api('/api/v1/sites')).statusCode).toBe(200);
    expect((await api('/api/v1/sites/987654/articles')).statusCode).toBe(404);
    expect((await api('/api/v1/sites', 'wrong-key')).statusCode).toBe(401);
    expect((await harness.app.inject({ method: 'GET', url: '/no/such/path/123' })).statusCode).toBe(404);
    const response = await scrape(harness);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    const text = response.body;
    expect(seriesValue(text, 'anchorage_http_requests_total{operation="listSites",method="GET",status="200"}')).toBe(2);
    expect(seriesValue(text, 'anchorage_http_requests_total{operation="listSites",method="GET",status="401"}')).toBe(1);
    expect(seriesValue(text, 'anchorage_http_requests_total{operation="listArticles",method="GET",status="404"}')).toBe(1);
    expect(seriesValue(text, 'anchorage_http_requests_total{operation="unmatched",method="GET",status="404"}')).toBe(1);
    expect(seriesValue(text, 'anchorage_http_request_duration_seconds_count{operation="listSites",method="GET",status="200"}')).toBe(2);
    expect(text).toContain('anchorage_http_request_duration_seconds_bucket{le="0.005",operation="listSites",method="GET",status="200"}');
    expect(text).not.toContain('987654');
    expect(text).not.toContain('/no/such/path');
  });

  it('shows the activity queue, its flush time, event-loop delay, memory and (PostgreSQL) the pool', async () => {
    await api('/api/v1/sites');
    const before = (await scrape(harness)).body;
    expect(seriesValue(before, 'anchorage_activity_queue_depth')).toBeGreaterThanOrEqual(1);
    await harness.services.activity.flush();
    const text = (await scrape(harness)).body;
    expect(seriesValue(text, 'anchorage_activity_flush_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    if (dialectName === 'postgres') {
      expect(seriesValue(text, 'anchorage_db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
      expect(seriesValue(text, 'anchorage_db_pool_connections{state="in_use"}')).toBeGreaterThanOrEqual(0);
      expect(seriesValue(text, 'anchorage_db_pool_waiting')).toBe(0);
    } else {
      expect(text).not.toContain('anchorage_db_pool');
    }
  });

  it('counts refusals for the request limit and the daily edit allowance', async () => {
    const limited = await createCustomer(harness.services);
    let last = 0;
    for (let i = 0; i < 61; i++) last = (await api('/api/v1/sites', limited.key)).statusCode;
    expect(last).toBe(429);
    await harness.services.db.kysely
      .insertInto('edit_counts')
      .values({ account_id: customer.accountId, day: toDay(harness.clock.now()), count: 200 })
      .execute();
    const edit = await api(`/api/v1/articles/${site.articleIds[0]}`, customer.key, 'PATCH', { title: 'Two' });
    expect(edit.json()).toMatchObject({ error: 'edit_limit_exceeded' });
    const text = (await scrape(harness)).body;
    expect(seriesValue(text, 'anchorage_limit_refusals_total{error="rate_limited",channel="api"}')).toBe(1);
    expect(seriesValue(text, 'anchorage_limit_refusals_total{error="edit_limit_exceeded",channel="api"}')).toBe(1);
  });

  it('counts MCP tool calls per tool and status', async () => {
    const base = harness.settings.publicUrl;
    const reader = await createCustomer(harness.services);
    const { tokens } = await manualGrant(base, reader.email, { access: 'read' });
    const accessToken = tokens.access_token as string;
    const call = (name: string, args: Record<string, unknown>) =>
      rawMcp(base, accessToken, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    expect((await call('list_sites', {})).status).toBe(200);
    expect((await call('get_article', { article_id: 987654 })).status).toBe(200);
    const text = (await scrape(harness)).body;
    expect(seriesValue(text, 'anchorage_mcp_tool_calls_total{tool="list_sites",status="200"}')).toBe(1);
    expect(seriesValue(text, 'anchorage_mcp_tool_calls_total{tool="get_article",status="404"}')).toBe(1);
    expect(seriesValue(text, 'anchorage_mcp_tool_call_duration_seconds_count{tool="list_sites",status="200"}')).toBe(1);
    expect(seriesValue(text, 'anchorage_http_requests_total{operation="/mcp",method="POST",status="200"}')).toBeGreaterThanOrEqual(2);
  });

  it('counts an MCP write only once its transaction commits: one that fails after its activity insert is not a 200', async () => {
    const writer = await createCustomer(harness.services);
    const written = await seedSite(harness.services, writer.email, { name: 'Rolled back', articles: [{ status: 'draft', title: 'One', body: '<p>One.</p>' }] });
    const request = { id: 'rolled-back', operation: 'updateArticle', method: null, path: null, tool: 'update_article', clientIp: null, userAgent: null, startedAt: Date.now() };
    const actor = { accountId: writer.accountId, userId: writer.userId, credential: { kind: 'mcp_grant', id: 424242 }, channel: 'mcp', staff: false, scopes: ['read', 'write'], request } as const;
    const write = harness.services.articleWrites.replace({ ...actor, request: { ...request } }, written.articleIds[0]!, { body: '<p>Two.</p>' }, {
      // The last step of the transaction, after the activity record went in.
      storeMedia: () => Promise.reject(new Error('the media store failed')),
    });
    await expect(write).rejects.toThrow('the media store failed');
    const text = (await scrape(harness)).body;
    expect(seriesValue(text, 'anchorage_mcp_tool_calls_total{tool="update_article",status="200"}')).toBeUndefined();
    const logged = await harness.services.db.kysely.selectFrom('activity_log').select('id').where('request_id', '=', 'rolled-back').execute();
    expect(logged).toEqual([]);
    // The same write without the failure commits, and counts once.
    await harness.services.articleWrites.replace({ ...actor, request: { ...request } }, written.articleIds[0]!, { body: '<p>Two.</p>' });
    const after = (await scrape(harness)).body;
    expect(seriesValue(after, 'anchorage_mcp_tool_calls_total{tool="update_article",status="200"}')).toBe(1);
  });
});

describe('/metrics elsewhere', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => harness?.close());

  it('is not served on the main listener without METRICS_TOKEN', async () => {
    expect((await scrape(harness)).statusCode).toBe(404);
    expect((await harness.app.inject({ method: 'GET', url: '/metrics' })).json()).toMatchObject({ error: 'not_found' });
  });

  it('is served alone on the METRICS_PORT listener, open there, or behind the token when one is set', async () => {
    const open = await buildMetricsApp({ services: harness.services, settings: harness.settings });
    const response = await open.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('anchorage_activity_queue_depth');
    expect((await open.inject({ method: 'GET', url: '/api/v1/sites' })).statusCode).toBe(404);
    const guarded = await buildMetricsApp({
      services: harness.services,
      settings: { ...harness.settings, metrics: { ...harness.settings.metrics, token } },
    });
    expect((await guarded.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    expect((await guarded.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200);
    await open.close();
    await guarded.close();
  });
});

describe('X-Request-Id', () => {
  let harness: Harness;
  let customer: Awaited<ReturnType<typeof createCustomer>>;
  beforeAll(async () => {
    harness = await startHarness();
    customer = await createCustomer(harness.services);
  });
  afterAll(async () => harness?.close());

  it('is on every response, the same id in the log lines and the activity record', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const { app, stop } = await buildApp({ settings: harness.settings, services: harness.services, logger: { level: 'info', stream } });
    const sent = 'lb-7f3a.request_01';
    const ok = await app.inject({ method: 'GET', url: '/api/v1/sites', headers: { authorization: `Bearer ${customer.key}`, 'x-request-id': sent } });
    expect(ok.headers['x-request-id']).toBe(sent);
    const fresh = await app.inject({ method: 'GET', url: '/api/v1/sites', headers: { authorization: 'Bearer wrong' } });
    expect(fresh.statusCode).toBe(401);
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    await stop();
    expect(lines.some((line) => line.includes(`"reqId":"${sent}"`))).toBe(true);
    expect(lines.some((line) => line.includes(`"reqId":"${fresh.headers['x-request-id']}"`))).toBe(true);
    const records = await harness.services.db.kysely.selectFrom('activity_log').select(['request_id', 'status']).execute();
    expect(records).toContainEqual({ request_id: sent, status: 200 });
    expect(records).toContainEqual({ request_id: fresh.headers['x-request-id'], status: 401 });
  });

  it('replaces an incoming id that is too long or has other characters, and covers pages and 404s', async () => {
    for (const sent of ['a'.repeat(65), 'has space', 'semi;colon', 'ünï', '']) {
      const response = await harness.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': sent } });
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    const longest = 'A'.repeat(64);
    expect((await harness.app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': longest } })).headers['x-request-id']).toBe(longest);
    expect((await harness.app.inject({ method: 'GET', url: '/app/sign-in' })).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('is readable by browser-based MCP clients (CORS exposes it)', async () => {
    const response = await harness.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { origin: 'http://localhost:6274', 'content-type': 'application/json' },
      payload: {},
    });
    expect(response.statusCode).toBe(401);
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(String(response.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/)).toContain('x-request-id');
  });
});

describe('load shedding', () => {
  it('above the heap threshold: 503 service_unavailable with Retry-After, /readyz not ready, /healthz and /metrics up', async () => {
    const harness = await startHarness({ env: { OVERLOAD_HEAP_USED_BYTES: '1', METRICS_TOKEN: token } });
    try {
      const customer = await createCustomer(harness.services);
      // Shedding starts once start-up has settled (two samples of 500 ms after ready).
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      const shed = await harness.app.inject({ method: 'GET', url: '/api/v1/sites', headers: { authorization: `Bearer ${customer.key}` } });
      expect(shed.statusCode).toBe(503);
      expect(shed.headers['retry-after']).toBe('10');
      expect(shed.headers['x-request-id']).toBeDefined();
      expect(shed.json()).toEqual({ error: 'service_unavailable', message: expect.stringContaining('overloaded') });
      expect((await harness.app.inject({ method: 'GET', url: '/app/sign-in' })).statusCode).toBe(503);
      const ready = await harness.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({ status: 'overloaded' });
      expect((await harness.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      const metrics = await scrape(harness);
      expect(metrics.statusCode).toBe(200);
      expect(seriesValue(metrics.body, 'anchorage_http_requests_total{operation="listSites",method="GET",status="503"}')).toBe(1);
      await harness.services.activity.flush();
      const records = await harness.services.db.kysely.selectFrom('activity_log').select(['status', 'error']).execute();
      expect(records).toContainEqual({ status: 503, error: 'service_unavailable' });
    } finally {
      await harness.close();
    }
  });

  it('above the event-loop-delay threshold too; below both, requests and /readyz are fine', async () => {
    const harness = await startHarness({ env: { OVERLOAD_EVENT_LOOP_DELAY_MS: '50' } });
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      expect((await harness.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
      expect((await harness.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).statusCode).toBe(200);
      // A loop that stays busy: 100 ms blocks with a turn of the loop between them, for over a sample.
      const until = Date.now() + 1_200;
      while (Date.now() < until) {
        const block = Date.now() + 100;
        while (Date.now() < block);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const shed = await harness.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
      expect(shed.statusCode).toBe(503);
      expect(shed.json()).toMatchObject({ error: 'service_unavailable' });
      expect((await harness.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
      expect((await harness.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await harness.close();
    }
  });

  it('while requests wait for a turn of the event loop longer than the event-loop-delay threshold', async () => {
    const harness = await startHarness({ env: { OVERLOAD_EVENT_LOOP_DELAY_MS: '50' } });
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      const block = (ms: number) => {
        const until = Date.now() + ms;
        while (Date.now() < until);
      };
      // This turn of the loop spends its budget, then work queues for turns of the loop
      // (src/platform/loop-turns.ts), 20 ms each: every turn stays short, so the sampled delay stays
      // low, but the queue waits longer and longer.
      const { loopTurns } = harness.services;
      loopTurns.take();
      block(10);
      const queued = Array.from({ length: 100 }, () => Promise.resolve(loopTurns.take()).then(() => block(20)));
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(loopTurns.waitedMs()).toBeGreaterThan(50);
      const shed = await harness.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
      expect(shed.statusCode).toBe(503);
      expect(shed.json()).toMatchObject({ error: 'service_unavailable' });
      expect((await harness.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
      expect((await harness.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      // The probes answered without waiting their turn: the queue is still there.
      expect(loopTurns.waitedMs()).toBeGreaterThan(0);
      await Promise.all(queued);
    } finally {
      await harness.close();
    }
  });
});
