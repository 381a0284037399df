import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { type ApiResponse, apiGet, freshKey, seedSite } from '../helpers/fixtures.js';

const h = useHarness();
let customer: Awaited<ReturnType<typeof createCustomer>>;
let key: string;
let siteId: number;

beforeAll(async () => {
  customer = await createCustomer(h.services);
  ({ siteId } = await seedSite(h.services, customer.email, {
    articles: [{ status: 'published', published_at: '2026-10-01T09:00:00Z', body: '<p>x</p>' }],
  }));
});

beforeEach(async () => {
  key = await freshKey(h.services, customer.userId);
});

afterAll(async () => {
  vi.restoreAllMocks();
});

const stackTrace = /\bat\s+(?:\S+\s+\()?(?:file:\/\/|\/|[A-Za-z]:\\|node:)/;
const sourcePath = /\.(?:ts|js|mjs|cjs):\d+/;
const sqlText = /\b(?:select\s+.+\s+from|insert\s+into|update\s+\S+\s+set|delete\s+from)\b|SQLITE_|syntax error|relation\s+"|violates|constraint/i;

function expectCleanErrorBody(res: ApiResponse, label: string) {
  expect(res.status, label).toBeGreaterThanOrEqual(400);
  expect(String(res.headers['content-type']), label).toMatch(/^application\/json/);
  expect(typeof res.body?.error, label).toBe('string');
  expect(typeof res.body?.message, label).toBe('string');
  const allowed = ['error', 'message', 'fields', 'limit', 'protected_links', 'failures'];
  for (const field of Object.keys(res.body)) expect(allowed, `${label}: ${field}`).toContain(field);
  expect(res.body.stack, label).toBeUndefined();
  expect(res.text, label).not.toMatch(stackTrace);
  expect(res.text, label).not.toMatch(sourcePath);
  expect(res.text, label).not.toMatch(sqlText);
  expect(res.text, label).not.toContain('node_modules');
}

describe('unknown routes', () => {
  it('answer 404 with the Error body under /api/v1, with or without a key', async () => {
    for (const k of [key, undefined]) {
      const res = await apiGet(h.app, '/api/v1/nope', k);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: 'No route GET /api/v1/nope.' });
      expectCleanErrorBody(res, 'unknown route');
    }
  });

  it('answer 404 for a nested unknown path and a wrong method, without echoing the query', async () => {
    const res = await apiGet(h.app, `/api/v1/sites/${siteId}/nothing?x=<script>`, key);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: `No route GET /api/v1/sites/${siteId}/nothing.` });
    const del = await h.app.inject({ method: 'DELETE', url: '/api/v1/sites', headers: { authorization: `Bearer ${key}` } });
    expect(del.statusCode).toBe(404);
    expect(del.json()).toEqual({ error: 'not_found', message: 'No route DELETE /api/v1/sites.' });
  });

  it('answer 404 for an older API version', async () => {
    const res = await apiGet(h.app, '/api/v0/sites', key);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });
});

describe('error bodies never leak internals', () => {
  it('for every kind of read error', async () => {
    const other = await createCustomer(h.services);
    const cases: [string, () => Promise<ApiResponse>, number, string][] = [
      ['no key', () => apiGet(h.app, '/api/v1/sites'), 401, 'unauthenticated'],
      ['bad key', () => apiGet(h.app, '/api/v1/sites', `ak_${'z'.repeat(40)}`), 401, 'unauthenticated'],
      ['forbidden filter', () => apiGet(h.app, '/api/v1/sites?account=1', key), 403, 'forbidden'],
      ['foreign site', () => apiGet(h.app, `/api/v1/sites/${siteId}/articles`, other.key), 404, 'not_found'],
      ['missing article', () => apiGet(h.app, '/api/v1/articles/424242', key), 404, 'not_found'],
      ['non-integer id', () => apiGet(h.app, "/api/v1/articles/1'%20OR%201=1--", key), 404, 'not_found'],
      ['bad page', () => apiGet(h.app, `/api/v1/sites/${siteId}/articles?page=0`, key), 422, 'validation_failed'],
      ['bad status', () => apiGet(h.app, `/api/v1/sites/${siteId}/articles?status=';drop table articles`, key), 422, 'validation_failed'],
      ['bad date', () => apiGet(h.app, `/api/v1/sites/${siteId}/backlinks?from=2026-02-30`, key), 422, 'validation_failed'],
      ['bad period', () => apiGet(h.app, `/api/v1/sites/${siteId}/stats?period=forever`, key), 422, 'validation_failed'],
      ['period and range', () => apiGet(h.app, `/api/v1/sites/${siteId}/stats?period=this_month&from=2026-01-01&to=2026-01-02`, key), 422, 'validation_failed'],
      ['sql-ish website', () => apiGet(h.app, `/api/v1/sites?website=%25'%20union%20select%201--`, key), 403, 'forbidden'],
    ];
    for (const [label, request, status, error] of cases) {
      const res = await request();
      expect(res.status, label).toBe(status);
      expect(res.body.error, label).toBe(error);
      expectCleanErrorBody(res, label);
    }
  });

  it('turns an unexpected failure into internal_error without the cause', async () => {
    const failure = new Error('select * from "sites" where "account_id" = $1 - relation "sites" does not exist');
    failure.stack = `Error: SQLITE_ERROR\n    at SitesService.list (/work/main/src/services/sites.ts:52:11)`;
    const spy = vi.spyOn(h.services.sites, 'list').mockRejectedValueOnce(failure);
    const res = await apiGet(h.app, '/api/v1/sites', key);
    spy.mockRestore();
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'internal_error', message: expect.any(String) });
    expectCleanErrorBody(res, 'internal error');
    expect(res.text).not.toContain('SQLITE_ERROR');
    expect(res.text).not.toContain('does not exist');

    // And the service keeps working.
    expect((await apiGet(h.app, '/api/v1/sites', key)).status).toBe(200);
  });

  it('turns a real database failure into internal_error without SQL', async () => {
    // A query on a table that does not exist fails inside the database driver.
    const db = h.services.db.kysely as unknown as { selectFrom(table: string): { selectAll(): { execute(): Promise<unknown> } } };
    const spy = vi
      .spyOn(h.services.stats, 'forRange')
      .mockImplementationOnce(() => db.selectFrom('no_such_table').selectAll().execute() as never);
    const res = await apiGet(h.app, `/api/v1/sites/${siteId}/stats`, key);
    spy.mockRestore();
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'internal_error', message: expect.any(String) });
    expectCleanErrorBody(res, 'database failure');
    expect(res.text).not.toContain('no_such_table');
  });

  it('logs an internal error in the activity log with its error id', async () => {
    const agent = `errors-test/${Date.now()}`;
    const spy = vi.spyOn(h.services.articles, 'getAnswer').mockRejectedValueOnce(new Error('boom'));
    const res = await apiGet(h.app, '/api/v1/articles/1', key, { 'user-agent': agent });
    spy.mockRestore();
    expect(res.status).toBe(500);
    await h.services.activity.flush();
    const rows = await h.services.db.kysely
      .selectFrom('activity_log')
      .select(['operation', 'status', 'error'])
      .where('user_agent', '=', agent)
      .execute();
    expect(rows).toEqual([{ operation: 'getArticle', status: 500, error: 'internal_error' }]);
  });
});
