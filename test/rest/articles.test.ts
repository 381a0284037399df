import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { apiGet, articleWithBodyFields, freshKey, seedSite } from '../helpers/fixtures.js';

const h = useHarness();
let customer: Awaited<ReturnType<typeof createCustomer>>;
let key: string;
let siteId: number;
let articleIds: number[];

const body =
  '<h2>Check-ups</h2>' +
  '<p>See a <a href="https://partner.example/" data-service-protected="backlink">family dentist</a> twice a year. ' +
  'Read our <a href="/blog/flossing" data-service-protected="internal">flossing guide</a> ' +
  'or <a href="https://other.example/">this page</a>.</p>' +
  '<p><a href="https://deals.example/?a=1&amp;b=2" data-service-protected="backlink"><strong>Tom</strong> &amp; Jerry</a></p>';

beforeAll(async () => {
  customer = await createCustomer(h.services);
  ({ siteId, articleIds } = await seedSite(h.services, customer.email, {
    articles: [
      {
        status: 'published',
        title: 'How Often Should You Get a Dental Check-Up?',
        url: 'https://brightsmile.example/blog/dental-check-up',
        published_at: '2026-10-01T09:00:00Z',
        target_keyword: 'dental check-up',
        meta_description: 'Twice a year is the rule of thumb.',
        featured_image_url: 'https://images.example.com/check-up.jpg',
        body,
      },
      { status: 'draft', body: '<p>Plain draft.</p>' },
      { status: 'draft', body: '<p>Hello</p><script>alert(1)</script><iframe src="https://evil.example/"></iframe>' },
    ],
  }));
});

beforeEach(async () => {
  key = await freshKey(h.services, customer.userId);
});

describe('getArticle', () => {
  it('returns the ArticleWithBody with its protected links', async () => {
    const res = await apiGet(h.app, `/api/v1/articles/${articleIds[0]}`, key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: {
        id: articleIds[0],
        site_id: siteId,
        title: 'How Often Should You Get a Dental Check-Up?',
        url: 'https://brightsmile.example/blog/dental-check-up',
        status: 'published',
        published_at: '2026-10-01T09:00:00Z',
        target_keyword: 'dental check-up',
        word_count: 18,
        featured_image_url: 'https://images.example.com/check-up.jpg',
        meta_description: 'Twice a year is the rule of thumb.',
        body,
        protected_links: [
          { type: 'backlink', href: 'https://partner.example/', text: 'family dentist' },
          { type: 'internal', href: '/blog/flossing', text: 'flossing guide' },
          { type: 'backlink', href: 'https://deals.example/?a=1&b=2', text: 'Tom & Jerry' },
        ],
      },
    });
    expect(Object.keys(res.body.data).sort()).toEqual(articleWithBodyFields);
    expect(Object.keys(res.body)).toEqual(['data']);
  });

  it('gives an article without protected links an empty list and null meta_description', async () => {
    const res = await apiGet(h.app, `/api/v1/articles/${articleIds[1]}`, key);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: articleIds[1],
      site_id: siteId,
      title: null,
      url: null,
      status: 'draft',
      published_at: null,
      target_keyword: null,
      word_count: 2,
      featured_image_url: null,
      meta_description: null,
      body: '<p>Plain draft.</p>',
      protected_links: [],
    });
  });

  it('serves the body as stored: sanitised at import', async () => {
    const res = await apiGet(h.app, `/api/v1/articles/${articleIds[2]}`, key);
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe('<p>Hello</p>');
    expect(res.body.data.word_count).toBe(1);
  });

  it('carries a strong ETag, stable across reads and distinct per article', async () => {
    const first = await apiGet(h.app, `/api/v1/articles/${articleIds[0]}`, key);
    const again = await apiGet(h.app, `/api/v1/articles/${articleIds[0]}`, key);
    const other = await apiGet(h.app, `/api/v1/articles/${articleIds[1]}`, key);
    const etag = first.headers.etag;
    expect(typeof etag).toBe('string');
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(again.headers.etag).toBe(etag);
    expect(other.headers.etag).toMatch(/^"[^"]+"$/);
    expect(other.headers.etag).not.toBe(etag);
  });

  it('lists no ETag on list responses', async () => {
    const res = await apiGet(h.app, `/api/v1/sites/${siteId}/articles`, key);
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBeUndefined();
  });

  it('answers an unknown id with 404 not_found', async () => {
    const res = await apiGet(h.app, '/api/v1/articles/999999', key);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
    expect(res.headers.etag).toBeUndefined();
  });

  it.each(['abc', '0', '-1', '1.5', '1e3', '99999999999999999999', '%20'])(
    'answers the non-id %j with 404 not_found, not a validation error',
    async (id) => {
      const res = await apiGet(h.app, `/api/v1/articles/${id}`, key);
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
      expect(Object.keys(res.body).sort()).toEqual(['error', 'message']);
    },
  );

  it('answers ids beyond 32 bits with 404 (not a database error)', async () => {
    for (const id of ['2147483648', '3000000000', '9007199254740991']) {
      const res = await apiGet(h.app, `/api/v1/articles/${id}`, key);
      expect(res.status, id).toBe(404);
      expect(res.body.error, id).toBe('not_found');
      const site = await apiGet(h.app, `/api/v1/sites/${id}/articles`, key);
      expect(site.status, id).toBe(404);
      expect(site.body.error, id).toBe('not_found');
    }
  });

  it('answers a non-integer site id with 404 on the site lists', async () => {
    for (const path of ['articles', 'backlinks', 'stats']) {
      const res = await apiGet(h.app, `/api/v1/sites/abc/${path}`, key);
      expect(res.status, path).toBe(404);
      expect(res.body.error, path).toBe('not_found');
    }
  });

  it('answers another account’s article with 404 not_found, like a missing one', async () => {
    const stranger = await createCustomer(h.services);
    const foreign = await apiGet(h.app, `/api/v1/articles/${articleIds[0]}`, stranger.key);
    const missing = await apiGet(h.app, '/api/v1/articles/999999', stranger.key);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect(foreign.headers.etag).toBeUndefined();
  });
});
