import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCustomer, useHarness } from '../helpers/harness.js';
import {
  type ArticleFixture,
  type BacklinkFixture,
  apiGet,
  articleFields,
  backlinkFields,
  collectPages,
  freshKey,
  seedSite,
  seedSites,
} from '../helpers/fixtures.js';

const h = useHarness();
let customer: Awaited<ReturnType<typeof createCustomer>>;
/** A new key of `customer` per test: each key may make 60 requests a minute. */
let key: string;

beforeAll(async () => {
  customer = await createCustomer(h.services);
});

beforeEach(async () => {
  key = await freshKey(h.services, customer.userId);
});

const ids = (res: { body: { data: { id: number }[] } }) => res.body.data.map((x) => x.id);
const published = (at: string, extra: Partial<ArticleFixture> = {}): ArticleFixture => ({
  status: 'published',
  published_at: at,
  body: '<p>text</p>',
  ...extra,
});

describe('pagination', () => {
  let manySite: number;
  let manyIds: number[];
  let emptySite: number;
  let owner: Awaited<ReturnType<typeof createCustomer>>;
  let sitesKey: string;
  let siteIds: number[];

  beforeEach(async () => {
    sitesKey = await freshKey(h.services, owner.userId);
  });

  beforeAll(async () => {
    // 27 articles and 27 backlinks, one a day, so the newest-first order is the reverse of the ids.
    const days = Array.from({ length: 27 }, (_, i) => `2026-10-${String(i + 1).padStart(2, '0')}T08:00:00Z`);
    const seeded = await seedSite(h.services, customer.email, {
      name: 'Many',
      articles: days.map((d) => published(d)),
      backlinks: days.map((d) => ({ category: 'industry', acquired_at: d }) as BacklinkFixture),
    });
    manySite = seeded.siteId;
    manyIds = [...seeded.articleIds].reverse();
    expect([...seeded.backlinkIds].reverse()).toHaveLength(27);
    emptySite = (await seedSite(h.services, customer.email, { name: 'Empty' })).siteId;

    owner = await createCustomer(h.services);
    siteIds = (await seedSites(h.services, owner.email, Array.from({ length: 27 }, (_, i) => ({ name: `S${i}` })))).map(
      (s) => s.siteId,
    );
  });

  const endpoints = () => [
    ['listSites', '/api/v1/sites', sitesKey],
    ['listArticles', `/api/v1/sites/${manySite}/articles`, key],
    ['listBacklinks', `/api/v1/sites/${manySite}/backlinks`, key],
  ] as const;

  it('defaults to page 1 with 25 per page', async () => {
    for (const [name, url, key] of endpoints()) {
      const res = await apiGet(h.app, url, key);
      expect(res.status, name).toBe(200);
      expect(res.body.meta, name).toEqual({ page: 1, per_page: 25, total: 27, last_page: 2 });
      expect(res.body.data, name).toHaveLength(25);
    }
    expect(ids(await apiGet(h.app, '/api/v1/sites', sitesKey))).toEqual(siteIds.slice(0, 25));
    expect(ids(await apiGet(h.app, `/api/v1/sites/${manySite}/articles`, key))).toEqual(manyIds.slice(0, 25));
  });

  it('serves the second page with the remainder', async () => {
    for (const [name, url, key] of endpoints()) {
      const res = await apiGet(h.app, `${url}?page=2`, key);
      expect(res.body.meta, name).toEqual({ page: 2, per_page: 25, total: 27, last_page: 2 });
      expect(res.body.data, name).toHaveLength(2);
    }
    expect(ids(await apiGet(h.app, '/api/v1/sites?page=2', sitesKey))).toEqual(siteIds.slice(25));
    expect(ids(await apiGet(h.app, `/api/v1/sites/${manySite}/articles?page=2`, key))).toEqual(manyIds.slice(25));
  });

  it('accepts per_page 1 and 100', async () => {
    for (const [name, url, key] of endpoints()) {
      const one = await apiGet(h.app, `${url}?per_page=1&page=3`, key);
      expect(one.status, name).toBe(200);
      expect(one.body.meta, name).toEqual({ page: 3, per_page: 1, total: 27, last_page: 27 });
      expect(one.body.data, name).toHaveLength(1);
      const hundred = await apiGet(h.app, `${url}?per_page=100`, key);
      expect(hundred.status, name).toBe(200);
      expect(hundred.body.meta, name).toEqual({ page: 1, per_page: 100, total: 27, last_page: 1 });
      expect(hundred.body.data, name).toHaveLength(27);
    }
    expect(ids(await apiGet(h.app, `/api/v1/sites/${manySite}/articles?per_page=1&page=3`, key))).toEqual([
      manyIds[2],
    ]);
  });

  it('answers a page past the end with no data and the true meta', async () => {
    for (const [name, url, key] of endpoints()) {
      const res = await apiGet(h.app, `${url}?page=3`, key);
      expect(res.status, name).toBe(200);
      expect(res.body, name).toEqual({ data: [], meta: { page: 3, per_page: 25, total: 27, last_page: 2 } });
      const far = await apiGet(h.app, `${url}?page=1000&per_page=10`, key);
      expect(far.body, name).toEqual({ data: [], meta: { page: 1000, per_page: 10, total: 27, last_page: 3 } });
    }
  });

  it('gives an empty list total 0 and last_page 1', async () => {
    const empty = await createCustomer(h.services);
    for (const [url, k] of [
      ['/api/v1/sites', empty.key],
      [`/api/v1/sites/${emptySite}/articles`, key],
      [`/api/v1/sites/${emptySite}/backlinks`, key],
    ] as const) {
      const res = await apiGet(h.app, url, k);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [], meta: { page: 1, per_page: 25, total: 0, last_page: 1 } });
      const page2 = await apiGet(h.app, `${url}?page=2&per_page=7`, k);
      expect(page2.body).toEqual({ data: [], meta: { page: 2, per_page: 7, total: 0, last_page: 1 } });
    }
  });

  it.each([
    ['per_page', '0'],
    ['per_page', '101'],
    ['per_page', 'abc'],
    ['per_page', '1.5'],
    ['per_page', '-5'],
    ['per_page', ''],
    ['page', '0'],
    ['page', '-1'],
    ['page', 'x'],
    ['page', '2.5'],
    ['page', ''],
  ])('refuses %s=%j with 422 validation_failed naming the field', async (field, value) => {
    for (const [name, url, key] of endpoints()) {
      const res = await apiGet(h.app, `${url}?${field}=${encodeURIComponent(value)}`, key);
      expect(res.status, name).toBe(422);
      expect(res.body.error, name).toBe('validation_failed');
      expect(typeof res.body.message, name).toBe('string');
      expect(Object.keys(res.body.fields), name).toEqual([field]);
      expect(res.body.fields[field].length, name).toBeGreaterThan(0);
      for (const message of res.body.fields[field]) expect(typeof message).toBe('string');
    }
  });

  it('names both fields when both are invalid', async () => {
    const res = await apiGet(h.app, `/api/v1/sites/${manySite}/articles?page=0&per_page=500`, key);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.fields).sort()).toEqual(['page', 'per_page']);
  });
});

describe('stable ordering under paging', () => {
  // Ties on the timestamp, drafts without one, and a spread of statuses.
  const articles: ArticleFixture[] = [
    published('2026-10-05T10:00:00Z', { title: 'o1' }),
    published('2026-10-05T10:00:00Z', { title: 'o2' }),
    { status: 'draft', title: 'o3', body: '<p>d</p>' },
    { status: 'scheduled', published_at: '2026-12-01T00:00:00Z', title: 'o4', body: '<p>s</p>' },
    { status: 'archived', published_at: '2025-01-01T00:00:00Z', title: 'o5', body: '<p>a</p>' },
    { status: 'draft', title: 'o6', body: '<p>d</p>' },
    published('2026-10-05T10:00:00Z', { title: 'o7' }),
    published('2026-09-01T00:00:00Z', { title: 'o8' }),
    published('2026-10-05T09:59:59Z', { title: 'o9' }),
  ];
  const articleOrder = ['o4', 'o7', 'o2', 'o1', 'o9', 'o8', 'o5', 'o6', 'o3'];

  const backlinks: BacklinkFixture[] = [
    { category: 'industry', acquired_at: '2026-10-05T10:00:00Z', anchor_text: 'k1' },
    { category: 'local', acquired_at: null, anchor_text: 'k2' },
    { category: 'local', acquired_at: '2026-10-05T10:00:00Z', anchor_text: 'k3', status: 'lost' },
    { category: 'industry', acquired_at: '2026-11-01T00:00:00Z', anchor_text: 'k4', status: 'pending' },
    { category: 'local', acquired_at: '2026-01-01T00:00:00Z', anchor_text: 'k5' },
    { category: 'industry', acquired_at: '2026-10-05T10:00:00Z', anchor_text: 'k6' },
    { category: 'industry', acquired_at: null, anchor_text: 'k7' },
  ];
  const backlinkOrder = ['k4', 'k6', 'k3', 'k1', 'k5', 'k7', 'k2'];

  let siteId: number;
  let articleIdOf: Map<string, number>;
  let backlinkIdOf: Map<string, number>;

  beforeAll(async () => {
    const seeded = await seedSite(h.services, customer.email, { name: 'Order', articles, backlinks });
    siteId = seeded.siteId;
    // The import keeps file order, so ids ascend in it (the id tie-break relies on that).
    expect(seeded.articleIds).toEqual([...seeded.articleIds].sort((a, b) => a - b));
    articleIdOf = new Map(articles.map((a, i) => [a.title!, seeded.articleIds[i]!]));
    backlinkIdOf = new Map(backlinks.map((b, i) => [b.anchor_text!, seeded.backlinkIds[i]!]));
  });

  it.each([1, 2, 3, 4, 9, 100])('articles: published_at desc, nulls last, then id desc (per_page %i)', async (perPage) => {
    const { items, pages } = await collectPages(h.app, `/api/v1/sites/${siteId}/articles`, key, perPage);
    expect(items.map((a) => a.id)).toEqual(articleOrder.map((t) => articleIdOf.get(t)));
    expect(pages).toBe(Math.max(1, Math.ceil(articles.length / perPage)));
  });

  it.each([1, 2, 3, 7, 100])('backlinks: acquired_at desc, nulls last, then id desc (per_page %i)', async (perPage) => {
    const { items, pages } = await collectPages(h.app, `/api/v1/sites/${siteId}/backlinks`, key, perPage);
    expect(items.map((b) => b.id)).toEqual(backlinkOrder.map((t) => backlinkIdOf.get(t)));
    expect(pages).toBe(Math.max(1, Math.ceil(backlinks.length / perPage)));
  });

  it('the same page asked twice is the same', async () => {
    const first = await apiGet(h.app, `/api/v1/sites/${siteId}/articles?per_page=2&page=2`, key);
    const second = await apiGet(h.app, `/api/v1/sites/${siteId}/articles?per_page=2&page=2`, key);
    expect(second.body).toEqual(first.body);
    expect(ids(first)).toEqual(['o2', 'o1'].map((t) => articleIdOf.get(t)));
  });
});

describe('listArticles filters', () => {
  let siteId: number;
  let id: Record<string, number>;

  beforeAll(async () => {
    const fixtures: ArticleFixture[] = [
      published('2026-09-30T23:59:59Z', { title: 'r1' }),
      published('2026-10-01T00:00:00Z', { title: 'r2' }),
      published('2026-10-15T12:00:00Z', { title: 'r3' }),
      { status: 'scheduled', published_at: '2026-10-31T23:59:59Z', title: 'r4', body: '<p>s</p>' },
      published('2026-11-01T00:00:00Z', { title: 'r5' }),
      { status: 'draft', title: 'r6', body: '<p>d</p>' },
      { status: 'archived', published_at: '2026-10-20T00:00:00Z', title: 'r7', body: '<p>a</p>' },
    ];
    const seeded = await seedSite(h.services, customer.email, { name: 'Ranges', articles: fixtures });
    siteId = seeded.siteId;
    id = Object.fromEntries(fixtures.map((f, i) => [f.title!, seeded.articleIds[i]!]));
  });

  const titles = (res: { body: { data: { title: string }[] } }) => res.body.data.map((a) => a.title);
  const list = (query: string) => apiGet(h.app, `/api/v1/sites/${siteId}/articles${query}`, key);

  it('without filters lists everything, drafts last', async () => {
    const res = await list('');
    expect(titles(res)).toEqual(['r5', 'r4', 'r7', 'r3', 'r2', 'r1', 'r6']);
    expect(res.body.meta.total).toBe(7);
  });

  it('from/to are inclusive UTC days at both ends and exclude drafts', async () => {
    const res = await list('?from=2026-10-01&to=2026-10-31');
    expect(res.status).toBe(200);
    expect(titles(res)).toEqual(['r4', 'r7', 'r3', 'r2']);
    expect(res.body.meta).toEqual({ page: 1, per_page: 25, total: 4, last_page: 1 });
  });

  it('a single day', async () => {
    expect(titles(await list('?from=2026-10-01&to=2026-10-01'))).toEqual(['r2']);
    expect(titles(await list('?from=2026-09-30&to=2026-09-30'))).toEqual(['r1']);
    expect(titles(await list('?from=2026-10-31&to=2026-10-31'))).toEqual(['r4']);
    expect(titles(await list('?from=2026-10-02&to=2026-10-14'))).toEqual([]);
  });

  it('from alone and to alone are open-ended and exclude drafts', async () => {
    expect(titles(await list('?from=2026-10-01'))).toEqual(['r5', 'r4', 'r7', 'r3', 'r2']);
    expect(titles(await list('?to=2026-10-31'))).toEqual(['r4', 'r7', 'r3', 'r2', 'r1']);
    expect(titles(await list('?from=2026-11-01'))).toEqual(['r5']);
    expect(titles(await list('?to=2026-09-30'))).toEqual(['r1']);
  });

  it('filters by status, alone and with a range', async () => {
    expect(titles(await list('?status=published'))).toEqual(['r5', 'r3', 'r2', 'r1']);
    expect(titles(await list('?status=draft'))).toEqual(['r6']);
    expect(titles(await list('?status=scheduled'))).toEqual(['r4']);
    expect(titles(await list('?status=archived'))).toEqual(['r7']);
    const ranged = await list('?status=published&from=2026-10-01&to=2026-10-31');
    expect(titles(ranged)).toEqual(['r3', 'r2']);
    expect(ranged.body.meta.total).toBe(2);
    expect(titles(await list('?status=draft&from=2026-01-01&to=2026-12-31'))).toEqual([]);
  });

  it('pages within a filter with the filtered total', async () => {
    const res = await list('?from=2026-10-01&to=2026-10-31&per_page=3&page=2');
    expect(res.body).toEqual({
      data: [expect.objectContaining({ id: id.r2, title: 'r2' })],
      meta: { page: 2, per_page: 3, total: 4, last_page: 2 },
    });
  });

  it.each([
    ['status', '?status=bogus'],
    ['status', '?status=Published'],
    ['status', '?status='],
    ['from', '?from=2026-13-01'],
    ['from', '?from=2026-13-01&to=2026-12-31'],
    ['from', '?from=2026-10-1&to=2026-10-31'],
    ['from', '?from=yesterday'],
    ['to', '?from=2026-02-01&to=2026-02-30'],
    ['to', '?to=2026-02-29'],
    ['to', '?to=2026-10-01T00:00:00Z'],
    ['from', '?from=2026-11-01&to=2026-10-31'],
  ])('refuses an invalid %s (%s) with 422', async (field, query) => {
    const res = await list(query);
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('validation_failed');
    expect(Object.keys(res.body.fields)).toEqual([field]);
  });
});

describe('listBacklinks filters', () => {
  let siteId: number;

  beforeAll(async () => {
    const fixtures: BacklinkFixture[] = [
      { category: 'industry', acquired_at: '2026-09-30T23:59:59Z', anchor_text: 'b1' },
      { category: 'local', acquired_at: '2026-10-01T00:00:00Z', anchor_text: 'b2', status: 'pending' },
      { category: 'local', acquired_at: '2026-10-15T12:00:00Z', anchor_text: 'b3', status: 'lost' },
      { category: 'industry', acquired_at: '2026-10-31T23:59:59Z', anchor_text: 'b4', status: 'live' },
      { category: 'industry', acquired_at: '2026-11-01T00:00:00Z', anchor_text: 'b5' },
      { category: 'local', acquired_at: null, anchor_text: 'b6' },
    ];
    siteId = (await seedSite(h.services, customer.email, { name: 'Backlink ranges', backlinks: fixtures })).siteId;
  });

  const anchors = (res: { body: { data: { anchor_text: string }[] } }) => res.body.data.map((b) => b.anchor_text);
  const list = (query: string) => apiGet(h.app, `/api/v1/sites/${siteId}/backlinks${query}`, key);

  it('without filters lists everything, undated last', async () => {
    expect(anchors(await list(''))).toEqual(['b5', 'b4', 'b3', 'b2', 'b1', 'b6']);
  });

  it('from/to filter acquired_at, inclusive at both ends, whatever the status', async () => {
    const res = await list('?from=2026-10-01&to=2026-10-31');
    expect(anchors(res)).toEqual(['b4', 'b3', 'b2']);
    expect(res.body.meta).toEqual({ page: 1, per_page: 25, total: 3, last_page: 1 });
    expect(anchors(await list('?from=2026-09-30&to=2026-09-30'))).toEqual(['b1']);
    expect(anchors(await list('?from=2026-11-01&to=2026-11-01'))).toEqual(['b5']);
  });

  it('from alone and to alone', async () => {
    expect(anchors(await list('?from=2026-10-01'))).toEqual(['b5', 'b4', 'b3', 'b2']);
    expect(anchors(await list('?to=2026-10-31'))).toEqual(['b4', 'b3', 'b2', 'b1']);
  });

  it.each([
    ['from', '?from=2026-13-01&to=2026-12-31'],
    ['from', '?from=2026-13-01'],
    ['to', '?to=2026-04-31'],
    ['from', '?from=2026-11-01&to=2026-10-31'],
  ])('refuses an invalid %s (%s) with 422', async (field, query) => {
    const res = await list(query);
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('validation_failed');
    expect(Object.keys(res.body.fields)).toEqual([field]);
  });
});

describe('response fields', () => {
  it('an Article has exactly the interface fields, no body', async () => {
    const { siteId, articleIds } = await seedSite(h.services, customer.email, {
      articles: [
        {
          status: 'published',
          title: 'How Often Should You Get a Dental Check-Up?',
          url: 'https://brightsmile.example/blog/dental-check-up',
          published_at: '2026-10-01T09:00:00Z',
          target_keyword: 'dental check-up',
          meta_description: 'Twice a year.',
          featured_image_url: 'https://images.example.com/check-up.jpg',
          body: '<h2>Check-ups</h2><p>Twice a <strong>year</strong> is the rule of thumb.</p>',
        },
      ],
    });
    const res = await apiGet(h.app, `/api/v1/sites/${siteId}/articles`, key);
    expect(res.body.data).toEqual([
      {
        id: articleIds[0],
        site_id: siteId,
        title: 'How Often Should You Get a Dental Check-Up?',
        url: 'https://brightsmile.example/blog/dental-check-up',
        status: 'published',
        published_at: '2026-10-01T09:00:00Z',
        target_keyword: 'dental check-up',
        word_count: 9,
        featured_image_url: 'https://images.example.com/check-up.jpg',
      },
    ]);
    expect(Object.keys(res.body.data[0]).sort()).toEqual(articleFields);
  });

  it('an Article imported with nulls shows them as null', async () => {
    const { siteId, articleIds } = await seedSite(h.services, customer.email, {
      articles: [
        {
          status: 'draft',
          title: null,
          url: null,
          published_at: null,
          target_keyword: null,
          featured_image_url: null,
          body: '',
        },
        { status: 'draft', body: '<p>one two</p>' },
      ],
    });
    const res = await apiGet(h.app, `/api/v1/sites/${siteId}/articles`, key);
    expect(res.body.data).toEqual([
      {
        id: articleIds[1],
        site_id: siteId,
        title: null,
        url: null,
        status: 'draft',
        published_at: null,
        target_keyword: null,
        word_count: 2,
        featured_image_url: null,
      },
      {
        id: articleIds[0],
        site_id: siteId,
        title: null,
        url: null,
        status: 'draft',
        published_at: null,
        target_keyword: null,
        word_count: 0,
        featured_image_url: null,
      },
    ]);
  });

  it('a Backlink has exactly the interface fields, category included', async () => {
    const { siteId, backlinkIds } = await seedSite(h.services, customer.email, {
      backlinks: [
        {
          acquired_at: '2026-09-14T10:30:00Z',
          source_domain: 'healthdirectory.example',
          source_url: 'https://healthdirectory.example/dentists/springfield',
          target_url: 'https://brightsmile.example/',
          anchor_text: 'Springfield dentist',
          anchor_type: 'partial',
          status: 'live',
          category: 'local',
        },
        { category: 'industry' },
      ],
    });
    const res = await apiGet(h.app, `/api/v1/sites/${siteId}/backlinks`, key);
    expect(res.body.data).toEqual([
      {
        id: backlinkIds[0],
        acquired_at: '2026-09-14T10:30:00Z',
        source_domain: 'healthdirectory.example',
        source_url: 'https://healthdirectory.example/dentists/springfield',
        target_url: 'https://brightsmile.example/',
        anchor_text: 'Springfield dentist',
        anchor_type: 'partial',
        status: 'live',
        category: 'local',
      },
      {
        id: backlinkIds[1],
        acquired_at: null,
        source_domain: null,
        source_url: null,
        target_url: null,
        anchor_text: null,
        anchor_type: null,
        status: null,
        category: 'industry',
      },
    ]);
    for (const b of res.body.data) expect(Object.keys(b).sort()).toEqual(backlinkFields);
  });
});
