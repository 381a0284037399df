import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { type ArticleFixture, type BacklinkFixture, apiGet, freshKey, seedSite, statsFields } from '../helpers/fixtures.js';

const h = useHarness();
let customer: Awaited<ReturnType<typeof createCustomer>>;
let key: string;
let siteId: number;
let emptySiteId: number;

const article = (status: ArticleFixture['status'], published_at: string | null, title: string): ArticleFixture => ({
  status,
  published_at,
  title,
  body: `<p>${title}</p>`,
});
const backlink = (
  category: BacklinkFixture['category'],
  acquired_at: string | null,
  status: BacklinkFixture['status'] = 'live',
): BacklinkFixture => ({ category, acquired_at, status });

beforeAll(async () => {
  customer = await createCustomer(h.services);
  ({ siteId } = await seedSite(h.services, customer.email, {
    name: 'Stats',
    articles: [
      article('published', '2026-03-01T00:00:00Z', 'p1'),
      article('published', '2026-03-31T23:59:59Z', 'p2'),
      article('published', '2026-02-28T23:59:59Z', 'p3'),
      article('published', '2026-04-01T00:00:00Z', 'p4'),
      article('scheduled', '2026-03-15T10:00:00Z', 's1'),
      article('draft', null, 'd1'),
      article('archived', '2026-03-10T10:00:00Z', 'a1'),
      article('published', '2025-12-31T12:00:00Z', 'p5'),
      article('published', '2026-01-15T08:00:00Z', 'p6'),
      article('published', '2028-02-29T12:00:00Z', 'p7'),
    ],
    backlinks: [
      backlink('industry', '2026-03-01T00:00:00Z'),
      backlink('local', '2026-03-31T23:59:59Z', 'lost'),
      backlink('local', '2026-03-15T10:00:00Z', 'pending'),
      backlink('industry', '2026-02-28T23:59:59Z'),
      backlink('local', '2026-04-01T00:00:00Z'),
      backlink('industry', null),
      backlink('industry', '2025-12-05T10:00:00Z', null),
      backlink('local', '2025-12-31T23:59:59Z'),
      backlink('local', '2028-02-29T00:00:00Z'),
    ],
  }));
  ({ siteId: emptySiteId } = await seedSite(h.services, customer.email, { name: 'Empty' }));
});

beforeEach(async () => {
  key = await freshKey(h.services, customer.userId);
  h.clock.set('2026-11-15T12:00:00Z');
});

const stats = (query = '', id = siteId) => apiGet(h.app, `/api/v1/sites/${id}/stats${query}`, key);

function expected(from: string, to: string, articles: number, industry: number, local: number, id = siteId) {
  return {
    data: {
      site_id: id,
      from,
      to,
      articles_published: articles,
      backlinks_acquired: industry + local,
      backlinks_industry: industry,
      backlinks_local: local,
    },
  };
}

describe('getStats periods', () => {
  it('without period is this_month, on the last second of the month', async () => {
    h.clock.set('2026-03-31T23:59:59Z');
    const res = await stats();
    expect(res.status).toBe(200);
    // p1, p2 (s1 scheduled and a1 archived not counted); b1 industry, b2 + b3 local (any status).
    expect(res.body).toEqual(expected('2026-03-01', '2026-03-31', 2, 1, 2));
    expect(Object.keys(res.body.data).sort()).toEqual(statsFields);
  });

  it('without period is this_month up to today, mid-month', async () => {
    h.clock.set('2026-03-15T12:00:00Z');
    expect((await stats()).body).toEqual(expected('2026-03-01', '2026-03-15', 1, 1, 1));
    expect((await stats('?period=this_month')).body).toEqual(expected('2026-03-01', '2026-03-15', 1, 1, 1));
  });

  it('this_month on the first instant of a month is that one day', async () => {
    h.clock.set('2026-03-01T00:00:00Z');
    expect((await stats('?period=this_month')).body).toEqual(expected('2026-03-01', '2026-03-01', 1, 1, 0));
  });

  it('this_month on the last second of a month is the whole month', async () => {
    h.clock.set('2026-03-31T23:59:59Z');
    expect((await stats('?period=this_month')).body).toEqual(expected('2026-03-01', '2026-03-31', 2, 1, 2));
  });

  it('follows the clock: one second later is a new month', async () => {
    h.clock.set('2026-04-01T00:00:00Z');
    expect((await stats()).body).toEqual(expected('2026-04-01', '2026-04-01', 1, 0, 1));
  });

  it('last_month in January is the previous December', async () => {
    h.clock.set('2026-01-10T08:00:00Z');
    expect((await stats('?period=last_month')).body).toEqual(expected('2025-12-01', '2025-12-31', 1, 1, 1));
  });

  it('last_month in April is March', async () => {
    h.clock.set('2026-04-01T00:00:00Z');
    expect((await stats('?period=last_month')).body).toEqual(expected('2026-03-01', '2026-03-31', 2, 1, 2));
  });

  it('last_30_days is today and the 29 days before, across a month boundary', async () => {
    h.clock.set('2026-03-29T10:00:00Z');
    // 2026-02-28 .. 2026-03-29: p3, p1; b4, b1 industry, b3 local.
    expect((await stats('?period=last_30_days')).body).toEqual(expected('2026-02-28', '2026-03-29', 2, 2, 1));
  });

  it('last_30_days across a year boundary', async () => {
    h.clock.set('2026-01-15T08:00:00Z');
    // 2025-12-17 .. 2026-01-15: p5, p6; b8 local (b7 on 12-05 is before).
    expect((await stats('?period=last_30_days')).body).toEqual(expected('2025-12-17', '2026-01-15', 2, 0, 1));
  });

  it('YYYY-MM is that whole month, whatever the clock', async () => {
    h.clock.set('2030-06-01T00:00:00Z');
    expect((await stats('?period=2026-03')).body).toEqual(expected('2026-03-01', '2026-03-31', 2, 1, 2));
    expect((await stats('?period=2025-12')).body).toEqual(expected('2025-12-01', '2025-12-31', 1, 1, 1));
    expect((await stats('?period=2028-02')).body).toEqual(expected('2028-02-01', '2028-02-29', 1, 0, 1));
    expect((await stats('?period=2026-02')).body).toEqual(expected('2026-02-01', '2026-02-28', 1, 1, 0));
  });

  it('YYYY-MM-DD is that day', async () => {
    expect((await stats('?period=2026-03-31')).body).toEqual(expected('2026-03-31', '2026-03-31', 1, 0, 1));
    expect((await stats('?period=2026-03-01')).body).toEqual(expected('2026-03-01', '2026-03-01', 1, 1, 0));
    expect((await stats('?period=2028-02-29')).body).toEqual(expected('2028-02-29', '2028-02-29', 1, 0, 1));
    expect((await stats('?period=2026-03-02')).body).toEqual(expected('2026-03-02', '2026-03-02', 0, 0, 0));
  });

  it('from/to is an inclusive range of UTC days', async () => {
    // p3, p1, p2, p4; b4, b1 industry; b3, b2, b5 local.
    expect((await stats('?from=2026-02-28&to=2026-04-01')).body).toEqual(expected('2026-02-28', '2026-04-01', 4, 2, 3));
    expect((await stats('?from=2026-03-01&to=2026-03-31')).body).toEqual(expected('2026-03-01', '2026-03-31', 2, 1, 2));
    expect((await stats('?from=2025-01-01&to=2030-12-31')).body).toEqual(expected('2025-01-01', '2030-12-31', 7, 3, 5));
  });

  it('a site without content counts zeros', async () => {
    expect((await stats('?period=2026-03', emptySiteId)).body).toEqual(
      expected('2026-03-01', '2026-03-31', 0, 0, 0, emptySiteId),
    );
  });
});

describe('getStats counting rules', () => {
  it('counts only published articles, and backlinks of every status', async () => {
    const c = await createCustomer(h.services);
    const { siteId: id } = await seedSite(h.services, c.email, {
      articles: [
        article('published', '2026-10-10T10:00:00Z', 'counted'),
        article('scheduled', '2026-10-11T10:00:00Z', 'scheduled in range'),
        article('archived', '2026-10-12T10:00:00Z', 'archived in range'),
        article('draft', null, 'draft'),
        article('draft', '2026-10-13T10:00:00Z', 'draft with a date'),
      ],
      backlinks: [
        backlink('industry', '2026-10-01T00:00:00Z', 'live'),
        backlink('industry', '2026-10-02T00:00:00Z', 'lost'),
        backlink('local', '2026-10-03T00:00:00Z', 'pending'),
        backlink('local', '2026-10-04T00:00:00Z', null),
        backlink('local', null, 'live'),
      ],
    });
    const res = await apiGet(h.app, `/api/v1/sites/${id}/stats?period=2026-10`, c.key);
    expect(res.body).toEqual(expected('2026-10-01', '2026-10-31', 1, 2, 2, id));
    const { backlinks_acquired, backlinks_industry, backlinks_local } = res.body.data;
    expect(backlinks_industry + backlinks_local).toBe(backlinks_acquired);
  });

  it('agrees with the lists over the same range', async () => {
    const range = 'from=2026-02-28&to=2026-04-01';
    const s = (await stats(`?${range}`)).body.data;
    const published = await apiGet(h.app, `/api/v1/sites/${siteId}/articles?${range}&status=published`, key);
    const backlinks = await apiGet(h.app, `/api/v1/sites/${siteId}/backlinks?${range}&per_page=100`, key);
    expect(s.articles_published).toBe(published.body.meta.total);
    expect(s.backlinks_acquired).toBe(backlinks.body.meta.total);
    expect(s.backlinks_industry).toBe(backlinks.body.data.filter((b: { category: string }) => b.category === 'industry').length);
  });
});

describe('getStats validation', () => {
  async function expect422(query: string, field: string) {
    const res = await stats(query);
    expect(res.status, query).toBe(422);
    expect(res.body.error, query).toBe('validation_failed');
    expect(Object.keys(res.body.fields), query).toEqual([field]);
    expect(res.body.fields[field].length).toBeGreaterThan(0);
  }

  it('period together with from/to is 422', async () => {
    await expect422('?period=this_month&from=2026-03-01&to=2026-03-31', 'period');
    await expect422('?period=2026-03&from=2026-03-01', 'period');
    await expect422('?period=last_month&to=2026-03-31', 'period');
  });

  it('from alone or to alone is 422 naming the missing one', async () => {
    await expect422('?from=2026-03-01', 'to');
    await expect422('?to=2026-03-31', 'from');
  });

  it('from after to is 422', async () => {
    await expect422('?from=2026-04-01&to=2026-03-31', 'from');
  });

  it.each([
    'fortnight',
    'this-month',
    'THIS_MONTH',
    'last_31_days',
    '2026-13',
    '2026-00',
    '2026-02-30',
    '2026-3',
    '2026',
    '',
  ])('period=%j is 422', async (period) => {
    await expect422(`?period=${encodeURIComponent(period)}`, 'period');
  });

  it('impossible from/to days are 422', async () => {
    await expect422('?from=2026-02-30&to=2026-03-31', 'from');
    await expect422('?from=2026-02-01&to=2026-02-29', 'to');
    await expect422('?from=2026-13-01&to=2026-12-31', 'from');
  });

  it('another account’s site is 404 for a valid period', async () => {
    const stranger = await createCustomer(h.services);
    const res = await apiGet(h.app, `/api/v1/sites/${siteId}/stats?period=2026-03`, stranger.key);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
  });
});
