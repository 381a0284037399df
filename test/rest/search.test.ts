import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { apiGet, freshKey, seedSite } from '../helpers/fixtures.js';

const h = useHarness();
let customer: Awaited<ReturnType<typeof createCustomer>>;
let key: string;
let siteId: number;
let ids: number[];

const published = (day: number, title: string, body: string) => ({
  status: 'published' as const,
  title,
  url: `https://shop.example/${day}`,
  published_at: `2026-10-${String(day).padStart(2, '0')}T09:00:00Z`,
  body,
});

beforeAll(async () => {
  customer = await createCustomer(h.services);
  ({ siteId, articleIds: ids } = await seedSite(h.services, customer.email, {
    articles: [
      published(1, 'Old number', '<p>Call 555-0100 today.</p>'),
      published(2, 'Call twice', '<p>Call 555-0100 or CALL 555-0100 again. 😀 call</p>'),
      published(3, 'Nothing here', '<p>Quiet.</p>'),
      published(4, 'Brand Acme', '<p>ACME and acme and Acme.</p>'),
      { status: 'draft', title: 'Draft call', body: '<p>call me</p>' },
    ],
  }));
});

beforeEach(async () => {
  key = await freshKey(h.services, customer.userId);
});

const search = (query: string) => apiGet(h.app, `/api/v1/sites/${siteId}/search?${query}`, key);

describe('searchArticles', () => {
  it('finds literal text case-insensitively, most matches first, with offsets and context', async () => {
    const res = await search('q=call');
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ page: 1, per_page: 25, total: 3, last_page: 1 });
    expect(res.body.data.map((item: { article_id: number }) => item.article_id)).toEqual([ids[1], ids[4], ids[0]]);
    const top = res.body.data[0];
    expect(top).toMatchObject({ article_id: ids[1], title: 'Call twice', url: 'https://shop.example/2', match_count: 4 });
    expect(top.matches[0]).toEqual({ field: 'title', offset: 0, text: 'Call', before: '', after: ' twice' });
    expect(top.matches[1]).toEqual({ field: 'body', offset: 3, text: 'Call', before: '<p>', after: ' 555-0100 or CALL 555-0100 again. 😀 call</p>' });
    // Offsets count code points: the emoji is one.
    expect(top.matches[3]).toMatchObject({ field: 'body', text: 'call', offset: '<p>Call 555-0100 or CALL 555-0100 again. 😀 '.length - 1 });
  });

  it('matches case exactly with match_case=true', async () => {
    const res = await search('q=CALL&match_case=true');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toMatchObject({ article_id: ids[1], match_count: 1 });
    expect((await search('q=Acme&match_case=false')).body.data[0].match_count).toBe(4);
  });

  it('orders equal counts by published_at descending and pages', async () => {
    const res = await search('q=555-0100&per_page=1&page=2');
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ page: 2, per_page: 1, total: 2, last_page: 2 });
    expect(res.body.data.map((item: { article_id: number }) => item.article_id)).toEqual([ids[0]]);
    const past = await search('q=555-0100&page=9');
    expect(past.body).toEqual({ data: [], meta: { page: 9, per_page: 25, total: 2, last_page: 1 } });
  });

  it('refuses an empty, short or long q, and unknown parameters', async () => {
    for (const [query, message] of [
      ['q=', /empty/],
      ['q=ab', /At least 3 characters/],
      ['q=%F0%9F%98%80%F0%9F%98%80', /At least 3 characters/],
      [`q=${'x'.repeat(501)}`, /At most 500/],
    ] as const) {
      const res = await search(query);
      expect(res.status, query).toBe(422);
      expect(res.body.error).toBe('validation_failed');
      expect(res.body.fields.q.join(' ')).toMatch(message);
    }
    expect((await search(`q=${'é'.repeat(500)}`)).status).toBe(200);
    expect((await apiGet(h.app, `/api/v1/sites/${siteId}/search`, key)).status).toBe(422);
    expect((await search('q=call&status=draft')).body.fields).toHaveProperty('status');
  });

  it('answers 404 for a site of another account', async () => {
    const other = await createCustomer(h.services);
    const res = await apiGet(h.app, `/api/v1/sites/${siteId}/search?q=call`, other.key);
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });

  it('finds an edited article by its new text at once, and no longer by its old', async () => {
    const patch = await h.app.inject({
      method: 'PATCH',
      url: `/api/v1/articles/${ids[2]}`,
      headers: { authorization: `Bearer ${key}` },
      payload: { replacements: [{ find: 'Quiet.', replace: 'Zanzibar quince.' }] },
    });
    expect(patch.statusCode).toBe(200);
    expect((await search('q=zanzibar')).body.data.map((item: { article_id: number }) => item.article_id)).toEqual([ids[2]]);
    expect((await search('q=Quiet')).body.meta.total).toBe(0);
  });

  it('finds what SQL wrote beside the service (the index follows every write)', async () => {
    const { kysely } = h.services.db;
    await kysely.updateTable('articles').set({ body: '<p>Written by an operator: quokka.</p>' }).where('id', '=', ids[3]!).execute();
    expect((await search('q=QUOKKA')).body.data.map((item: { article_id: number }) => item.article_id)).toEqual([ids[3]]);
    expect((await search('q=acme')).body.data.map((item: { article_id: number }) => item.article_id)).toEqual([ids[3]]);
    await kysely.updateTable('articles').set({ title: 'Renamed' }).where('id', '=', ids[3]!).execute();
    expect((await search('q=acme')).body.meta.total).toBe(0);
    expect((await search('q=quokka')).body.meta.total).toBe(1);
  });

  it('lists at most five matches and escapes index syntax', async () => {
    const { siteId: site } = await seedSite(h.services, customer.email, {
      articles: [{ status: 'draft', title: 'x', body: `<p>${'"a" OR b% _ '.repeat(7)}</p>` }],
    });
    const res = await apiGet(h.app, `/api/v1/sites/${site}/search?q=${encodeURIComponent('"a" OR b% _')}`, key);
    expect(res.status).toBe(200);
    expect(res.body.data[0].match_count).toBe(7);
    expect(res.body.data[0].matches).toHaveLength(5);
  });
});
