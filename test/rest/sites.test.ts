import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { apiGet, freshKey, seedSite, seedSites, siteFields, token } from '../helpers/fixtures.js';

const h = useHarness();
let admin: Awaited<ReturnType<typeof createCustomer>>;

beforeAll(async () => {
  admin = await createCustomer(h.services, { staff: true });
});

beforeEach(async () => {
  // A new admin key per test, each with its own 60-requests-a-minute allowance.
  admin.key = await freshKey(h.services, admin.userId);
});

/** Two customers, each with sites, articles and backlinks of their own. */
async function twoCustomers() {
  const a = await createCustomer(h.services);
  const b = await createCustomer(h.services);
  const tok = token();
  const [a1, a2] = await seedSites(h.services, a.email, [
    {
      name: 'Alpha One',
      website_url: `https://alpha-one-${tok}.example`,
      language: 'en',
      country: 'US',
      geographic_scope: 'local',
      industry: 'Dental care',
      articles: [{ status: 'published', published_at: '2026-10-01T09:00:00Z', title: 'A1', body: '<p>a one</p>' }],
      backlinks: [{ category: 'local', acquired_at: '2026-10-02T09:00:00Z' }],
    },
    { name: 'Alpha Two', website_url: `https://alpha-two-${tok}.example` },
  ]);
  const b1 = await seedSite(h.services, b.email, {
    name: 'Beta One',
    website_url: `https://beta-one-${tok}.example`,
    articles: [{ status: 'published', published_at: '2026-10-01T09:00:00Z', title: 'B1', body: '<p>b one</p>' }],
    backlinks: [{ category: 'industry', acquired_at: '2026-10-02T09:00:00Z' }],
  });
  return { a, b, a1: a1!, a2: a2!, b1, tok };
}

const ids = (res: { body: { data: { id: number }[] } }) => res.body.data.map((s) => s.id);

describe('listSites: a customer key', () => {
  it('lists exactly the account’s sites, ordered by id, with the Site fields', async () => {
    const { a, a1, a2, tok } = await twoCustomers();
    const res = await apiGet(h.app, '/api/v1/sites', a.key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        {
          id: a1.siteId,
          name: 'Alpha One',
          website_url: `https://alpha-one-${tok}.example`,
          language: 'en',
          country: 'US',
          geographic_scope: 'local',
          industry: 'Dental care',
        },
        {
          id: a2.siteId,
          name: 'Alpha Two',
          website_url: `https://alpha-two-${tok}.example`,
          language: null,
          country: null,
          geographic_scope: null,
          industry: null,
        },
      ],
      meta: { page: 1, per_page: 25, total: 2, last_page: 1 },
    });
    for (const site of res.body.data) expect(Object.keys(site).sort()).toEqual(siteFields);
  });

  it('orders by id even when imported in several batches', async () => {
    const c = await createCustomer(h.services);
    const first = await seedSites(h.services, c.email, [{ name: 's1' }, { name: 's2' }, { name: 's3' }]);
    const second = await seedSite(h.services, c.email, { name: 's4' });
    const expected = [...first.map((s) => s.siteId), second.siteId].sort((x, y) => x - y);
    expect(ids(await apiGet(h.app, '/api/v1/sites', c.key))).toEqual(expected);
    expect(ids(await apiGet(h.app, '/api/v1/sites?per_page=2&page=2', c.key))).toEqual(expected.slice(2));
  });

  it('gives a customer without sites an empty list', async () => {
    const c = await createCustomer(h.services);
    const res = await apiGet(h.app, '/api/v1/sites', c.key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], meta: { page: 1, per_page: 25, total: 0, last_page: 1 } });
  });

  it('works with a read-only key', async () => {
    const { a, a1, a2 } = await twoCustomers();
    const readOnly = await h.services.keys.create(a.userId, { name: 'ro', readOnly: true });
    const res = await apiGet(h.app, '/api/v1/sites', readOnly.key);
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([a1.siteId, a2.siteId]);
    expect((await apiGet(h.app, `/api/v1/sites/${a1.siteId}/articles`, readOnly.key)).body.meta.total).toBe(1);
    expect((await apiGet(h.app, `/api/v1/sites/${a1.siteId}/backlinks`, readOnly.key)).body.meta.total).toBe(1);
    expect((await apiGet(h.app, `/api/v1/sites/${a1.siteId}/stats?period=2026-10`, readOnly.key)).body.data).toMatchObject({
      articles_published: 1,
      backlinks_acquired: 1,
    });
    expect((await apiGet(h.app, `/api/v1/articles/${a1.articleIds[0]}`, readOnly.key)).status).toBe(200);
  });

  it.each([
    ['account', 'account=1'],
    ['account', 'account=someone%40example.test'],
    ['website', 'website=example'],
    ['account', 'account=1&website=example'],
  ])('refuses the admin filter %s to a customer key with 403 forbidden (%s)', async (_field, query) => {
    const { a } = await twoCustomers();
    const res = await apiGet(h.app, `/api/v1/sites?${query}`, a.key);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', message: expect.any(String) });
  });

  it('refuses the admin filters to a read-only customer key too', async () => {
    const { a } = await twoCustomers();
    const readOnly = await h.services.keys.create(a.userId, { readOnly: true });
    const res = await apiGet(h.app, `/api/v1/sites?website=alpha`, readOnly.key);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });
});

describe('isolation between accounts', () => {
  async function notFoundPair(url: (id: number) => string, foreignId: number, key: string) {
    const foreign = await apiGet(h.app, url(foreignId), key);
    const missing = await apiGet(h.app, url(999999), key);
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect(foreign.body.error).toBe('not_found');
    expect(Object.keys(foreign.body).sort()).toEqual(['error', 'message']);
    return foreign;
  }

  it('answers another account’s site exactly like a nonexistent one', async () => {
    const { a, b1 } = await twoCustomers();
    await notFoundPair((id) => `/api/v1/sites/${id}/articles`, b1.siteId, a.key);
    await notFoundPair((id) => `/api/v1/sites/${id}/backlinks`, b1.siteId, a.key);
    await notFoundPair((id) => `/api/v1/sites/${id}/stats`, b1.siteId, a.key);
    await notFoundPair((id) => `/api/v1/sites/${id}/stats?period=last_month`, b1.siteId, a.key);
    await notFoundPair((id) => `/api/v1/sites/${id}/articles?status=published&from=2026-10-01&to=2026-10-31`, b1.siteId, a.key);
  });

  it('answers another account’s article exactly like a nonexistent one', async () => {
    const { a, b1 } = await twoCustomers();
    await notFoundPair((id) => `/api/v1/articles/${id}`, b1.articleIds[0]!, a.key);
  });

  it('lets each customer read their own site, and only theirs', async () => {
    const { a, b, a1, b1 } = await twoCustomers();
    const own = await apiGet(h.app, `/api/v1/sites/${a1.siteId}/articles`, a.key);
    expect(own.body.data.map((x: { title: string }) => x.title)).toEqual(['A1']);
    const theirs = await apiGet(h.app, `/api/v1/sites/${b1.siteId}/articles`, b.key);
    expect(theirs.body.data.map((x: { title: string }) => x.title)).toEqual(['B1']);
    expect((await apiGet(h.app, `/api/v1/sites/${a1.siteId}/articles`, b.key)).status).toBe(404);
    expect((await apiGet(h.app, `/api/v1/articles/${a1.articleIds[0]}`, b.key)).status).toBe(404);
    expect(ids(await apiGet(h.app, '/api/v1/sites', b.key))).toEqual([b1.siteId]);
  });

  it('keeps a second user key of the same account inside that account only', async () => {
    const { a, a1, a2 } = await twoCustomers();
    const second = await h.services.keys.create(a.userId, { name: 'second' });
    expect(ids(await apiGet(h.app, '/api/v1/sites', second.key))).toEqual([a1.siteId, a2.siteId]);
  });
});

describe('listSites: an admin (staff) key', () => {
  it('lists every site of every account, ordered by id', async () => {
    await twoCustomers();
    const all = await h.services.db.kysely.selectFrom('sites').select('id').orderBy('id').execute();
    const res = await apiGet(h.app, '/api/v1/sites?per_page=100', admin.key);
    expect(res.status).toBe(200);
    expect(res.body.meta.total).toBe(all.length);
    expect(ids(res)).toEqual(all.map((r) => r.id).slice(0, 100));
  });

  it('reads another account’s articles, backlinks, stats and article', async () => {
    const { b1 } = await twoCustomers();
    expect((await apiGet(h.app, `/api/v1/sites/${b1.siteId}/articles`, admin.key)).body.data[0].title).toBe('B1');
    expect((await apiGet(h.app, `/api/v1/sites/${b1.siteId}/backlinks`, admin.key)).body.data[0].category).toBe('industry');
    expect((await apiGet(h.app, `/api/v1/sites/${b1.siteId}/stats?period=2026-10`, admin.key)).body.data).toEqual({
      site_id: b1.siteId,
      from: '2026-10-01',
      to: '2026-10-31',
      articles_published: 1,
      backlinks_acquired: 1,
      backlinks_industry: 1,
      backlinks_local: 0,
    });
    expect((await apiGet(h.app, `/api/v1/articles/${b1.articleIds[0]}`, admin.key)).body.data.title).toBe('B1');
  });

  it('filters by account as a user id', async () => {
    const { a, b, a1, a2, b1 } = await twoCustomers();
    expect(ids(await apiGet(h.app, `/api/v1/sites?account=${b.userId}`, admin.key))).toEqual([b1.siteId]);
    expect(ids(await apiGet(h.app, `/api/v1/sites?account=${a.userId}`, admin.key))).toEqual([a1.siteId, a2.siteId]);
  });

  it('filters by account as an e-mail, case-insensitively', async () => {
    const { a, b, a1, a2, b1 } = await twoCustomers();
    expect(ids(await apiGet(h.app, `/api/v1/sites?account=${encodeURIComponent(b.email)}`, admin.key))).toEqual([
      b1.siteId,
    ]);
    const shouted = encodeURIComponent(a.email.toUpperCase());
    const res = await apiGet(h.app, `/api/v1/sites?account=${shouted}`, admin.key);
    expect(res.body).toMatchObject({ meta: { page: 1, per_page: 25, total: 2, last_page: 1 } });
    expect(ids(res)).toEqual([a1.siteId, a2.siteId]);
  });

  it('gives an unknown account an empty list', async () => {
    for (const account of ['999999', '2147483648', '3000000000', '99999999999999999999', 'nobody@example.test', 'not-an-email']) {
      const res = await apiGet(h.app, `/api/v1/sites?account=${encodeURIComponent(account)}`, admin.key);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [], meta: { page: 1, per_page: 25, total: 0, last_page: 1 } });
    }
  });

  it('filters by website as a case-insensitive substring', async () => {
    const c = await createCustomer(h.services);
    const tok = token();
    const [upper, lower, other] = await seedSites(h.services, c.email, [
      { website_url: `https://Shop-${tok}.Example/Blog` },
      { website_url: `https://www.shop-${tok}.example` },
      { website_url: `https://unrelated-${tok}.example` },
      { website_url: null },
    ]);
    expect(ids(await apiGet(h.app, `/api/v1/sites?website=SHOP-${tok}`, admin.key))).toEqual([
      upper!.siteId,
      lower!.siteId,
    ]);
    expect(ids(await apiGet(h.app, `/api/v1/sites?website=${tok}.example/blog`, admin.key))).toEqual([upper!.siteId]);
    expect(ids(await apiGet(h.app, `/api/v1/sites?website=unrelated-${tok}`, admin.key))).toEqual([other!.siteId]);
    expect(ids(await apiGet(h.app, `/api/v1/sites?website=nothing-${tok}`, admin.key))).toEqual([]);
  });

  it('matches % and _ in website literally', async () => {
    const c = await createCustomer(h.services);
    const tok = token();
    const [percent, plain, underscore, x] = await seedSites(h.services, c.email, [
      { website_url: `https://fifty%off-${tok}.example` },
      { website_url: `https://fiftyXoff-${tok}.example` },
      { website_url: `https://a_b-${tok}.example` },
      { website_url: `https://axb-${tok}.example` },
    ]);
    expect(ids(await apiGet(h.app, `/api/v1/sites?website=${encodeURIComponent(`%off-${tok}`)}`, admin.key))).toEqual([
      percent!.siteId,
    ]);
    expect(ids(await apiGet(h.app, `/api/v1/sites?website=${encodeURIComponent(`a_b-${tok}`)}`, admin.key))).toEqual([
      underscore!.siteId,
    ]);
    // A lone wildcard character matches only URLs containing it.
    const lonePercent = await apiGet(h.app, `/api/v1/sites?website=${encodeURIComponent('%')}&account=${c.userId}`, admin.key);
    expect(ids(lonePercent)).toEqual([percent!.siteId]);
    const loneUnderscore = await apiGet(h.app, `/api/v1/sites?website=_&account=${c.userId}`, admin.key);
    expect(ids(loneUnderscore)).toEqual([underscore!.siteId]);
    expect(ids(await apiGet(h.app, `/api/v1/sites?website=xoff&account=${c.userId}`, admin.key))).toEqual([plain!.siteId]);
    expect(ids(await apiGet(h.app, `/api/v1/sites?website=axb&account=${c.userId}`, admin.key))).toEqual([x!.siteId]);
  });

  it('matches a backslash in website literally', async () => {
    const c = await createCustomer(h.services);
    const tok = token();
    const [slashed] = await seedSites(h.services, c.email, [
      { website_url: `https://back\\slash-${tok}.example` },
      { website_url: `https://backslash-${tok}.example` },
    ]);
    const res = await apiGet(h.app, `/api/v1/sites?website=${encodeURIComponent(`back\\slash-${tok}`)}`, admin.key);
    expect(ids(res)).toEqual([slashed!.siteId]);
  });

  it('combines account and website', async () => {
    const { a, b, a2, tok } = await twoCustomers();
    expect(ids(await apiGet(h.app, `/api/v1/sites?account=${a.userId}&website=two-${tok}`, admin.key))).toEqual([
      a2.siteId,
    ]);
    expect(ids(await apiGet(h.app, `/api/v1/sites?account=${b.userId}&website=alpha-two-${tok}`, admin.key))).toEqual([]);
  });

  it('refuses an empty website or account filter as invalid', async () => {
    const res = await apiGet(h.app, '/api/v1/sites?website=', admin.key);
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('validation_failed');
    expect(Object.keys(res.body.fields)).toEqual(['website']);
    const acc = await apiGet(h.app, '/api/v1/sites?account=', admin.key);
    expect(acc.status).toBe(422);
    expect(Object.keys(acc.body.fields)).toEqual(['account']);
  });

  it('refuses U+0000 in a website or account filter as invalid, on either database', async () => {
    for (const [field, query] of [
      ['account', 'account=%00'],
      ['account', 'account=a%00b%40example.com'],
      ['website', 'website=shop%00'],
    ] as const) {
      const res = await apiGet(h.app, `/api/v1/sites?${query}`, admin.key);
      expect(res.status).toBe(422);
      expect(res.body.error).toBe('validation_failed');
      expect(res.body.fields).toEqual({ [field]: ['Must not contain the character U+0000.'] });
    }
  });

  it('an admin key still sees its own account’s sites like any site', async () => {
    const staff = await createCustomer(h.services, { staff: true });
    const own = await seedSite(h.services, staff.email, { website_url: `https://staff-${token()}.example` });
    expect(ids(await apiGet(h.app, `/api/v1/sites?account=${staff.userId}`, staff.key))).toEqual([own.siteId]);
  });
});
