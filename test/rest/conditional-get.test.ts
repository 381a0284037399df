import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { noneMatchFails } from '../../src/rest/conditional.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { apiGet, freshKey, seedSite, token } from '../helpers/fixtures.js';

const h = useHarness();
let customer: Awaited<ReturnType<typeof createCustomer>>;
let key: string;
let articleId: number;

beforeAll(async () => {
  customer = await createCustomer(h.services);
  const seeded = await seedSite(h.services, customer.email, {
    articles: [{ status: 'published', title: 'Check-ups', body: '<p>See a dentist twice a year.</p>' }],
  });
  articleId = seeded.articleIds[0]!;
});

beforeEach(async () => {
  key = await freshKey(h.services, customer.userId);
});

const url = () => `/api/v1/articles/${articleId}`;

async function currentETag(): Promise<string> {
  const res = await apiGet(h.app, url(), key);
  expect(res.status).toBe(200);
  return String(res.headers.etag);
}

describe('If-None-Match on GET article', () => {
  it('answers 304 with the ETag, the rate-limit headers and no body when the tag is current', async () => {
    const etag = await currentETag();
    const res = await apiGet(h.app, url(), key, { 'if-none-match': etag });
    expect(res.status).toBe(304);
    expect(res.headers.etag).toBe(etag);
    expect(res.text).toBe('');
    expect(res.headers['content-type']).toBeUndefined();
    expect(res.headers['x-ratelimit-limit']).toBe('60');
    expect(res.headers['x-ratelimit-remaining']).toBe('58');
    expect(String(res.headers.ratelimit)).toMatch(/^"default";r=58;t=\d+$/);
  });

  it('compares weakly, and takes a list or *', async () => {
    const etag = await currentETag();
    for (const header of [`W/${etag}`, `"other", ${etag}`, `"other",${etag} , "more"`, '*']) {
      const res = await apiGet(h.app, url(), key, { 'if-none-match': header });
      expect(res.status, header).toBe(304);
    }
  });

  it('answers 200 with the body when the tag names another state', async () => {
    const etag = await currentETag();
    for (const header of ['"a0-v0"', etag.slice(1, -1), '', `${etag.slice(0, -1)}x"`]) {
      const res = await apiGet(h.app, url(), key, { 'if-none-match': header });
      expect(res.status, header).toBe(200);
      expect(res.body.data.id).toBe(articleId);
      expect(res.headers.etag).toBe(etag);
    }
  });

  it('answers 200 after the article changed, with the new tag', async () => {
    const before = await currentETag();
    const patched = await h.app.inject({
      method: 'PATCH',
      url: url(),
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: { title: `Check-ups ${token()}` },
    });
    expect(patched.statusCode).toBe(200);
    const res = await apiGet(h.app, url(), key, { 'if-none-match': before });
    expect(res.status).toBe(200);
    expect(res.headers.etag).not.toBe(before);
    expect(res.headers.etag).toBe(patched.headers.etag);
  });

  it('answers HEAD with 304 as well', async () => {
    const etag = await currentETag();
    const res = await h.app.inject({ method: 'HEAD', url: url(), headers: { authorization: `Bearer ${key}`, 'if-none-match': etag } });
    expect(res.statusCode).toBe(304);
    expect(res.body).toBe('');
  });

  it('still checks the key and the account before answering 304', async () => {
    const etag = await currentETag();
    expect((await apiGet(h.app, url(), undefined, { 'if-none-match': etag })).status).toBe(401);
    const other = await createCustomer(h.services);
    const res = await apiGet(h.app, url(), other.key, { 'if-none-match': etag });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });

  it('is recorded in the activity log with status 304', async () => {
    const etag = await currentETag();
    const agent = `conditional-get/${token()}`;
    expect((await apiGet(h.app, url(), key, { 'if-none-match': etag, 'user-agent': agent })).status).toBe(304);
    await h.services.activity.flush();
    const rows = await h.services.db.kysely
      .selectFrom('activity_log')
      .select(['operation', 'status', 'error', 'account_id'])
      .where('user_agent', '=', agent)
      .execute();
    expect(rows).toEqual([{ operation: 'getArticle', status: 304, error: null, account_id: customer.accountId }]);
  });

  it('does not apply to the other reads, which send no ETag', async () => {
    const res = await apiGet(h.app, '/api/v1/sites', key, { 'if-none-match': '*' });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBeUndefined();
  });
});

describe('noneMatchFails', () => {
  it('follows RFC 9110 weak comparison', () => {
    expect(noneMatchFails(undefined, '"a1-v1"')).toBe(false);
    expect(noneMatchFails('"a1-v1"', '"a1-v1"')).toBe(true);
    expect(noneMatchFails('W/"a1-v1"', '"a1-v1"')).toBe(true);
    expect(noneMatchFails(' * ', '"a1-v1"')).toBe(true);
    expect(noneMatchFails('"a1-v2", "a1-v1"', '"a1-v1"')).toBe(true);
    expect(noneMatchFails('"a1-v2"', '"a1-v1"')).toBe(false);
    expect(noneMatchFails('a1-v1', '"a1-v1"')).toBe(false);
    expect(noneMatchFails('', '"a1-v1"')).toBe(false);
  });
});
