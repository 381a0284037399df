import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { editsPerDay } from '../../src/services/edit-allowance.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { apiGet, freshKey, seedSite } from '../helpers/fixtures.js';

const h = useHarness();
let customer: Awaited<ReturnType<typeof createCustomer>>;
let key: string;

const protectedLink = '<a href="https://partner.example/call" data-service-protected="backlink">Call 555-0100</a>';

beforeAll(async () => {
  customer = await createCustomer(h.services);
});

beforeEach(async () => {
  key = await freshKey(h.services, customer.userId);
});

const post = (siteId: number, payload: unknown, options: { query?: string; headers?: Record<string, string>; as?: string } = {}) =>
  h.app.inject({
    method: 'POST',
    url: `/api/v1/sites/${siteId}/replace${options.query ?? ''}`,
    headers: { authorization: `Bearer ${options.as ?? key}`, ...options.headers },
    payload: payload as object,
  });

const bodyOf = async (id: number) => (await apiGet(h.app, `/api/v1/articles/${id}`, key)).body.data.body as string;

const revisionCount = async (id: number) =>
  Number((await h.services.db.kysely.selectFrom('revisions').select((eb) => eb.fn.countAll().as('n')).where('article_id', '=', id).executeTakeFirstOrThrow()).n);

const site = (bodies: string[]) =>
  seedSite(h.services, customer.email, { articles: bodies.map((body, i) => ({ status: 'published' as const, title: `Call us ${i}`, published_at: `2026-10-0${i + 1}T09:00:00Z`, body })) });

describe('replaceInSite', () => {
  it('replaces every occurrence in every body, case-insensitively, a revision each; titles untouched', async () => {
    const { siteId, articleIds } = await site(['<p>Call 555-0100.</p>', '<p>CALL 555-0100, call 555-0100.</p>', '<p>Nothing.</p>']);
    const res = await post(siteId, { find: 'call 555-0100', replace: 'Call 555-0199', reason: 'New number' });
    expect(res.statusCode).toBe(200);
    const answer = res.json();
    expect(answer.meta).toEqual({ articles: 2, occurrences: 3 });
    expect(answer.data.map((item: { article_id: number }) => item.article_id).sort()).toEqual([articleIds[0], articleIds[1]].sort());
    for (const item of answer.data) {
      const got = await apiGet(h.app, `/api/v1/articles/${item.article_id}`, key);
      expect(got.headers.etag).toBe(item.etag);
    }
    expect(await bodyOf(articleIds[1]!)).toBe('<p>Call 555-0199, Call 555-0199.</p>');
    expect((await apiGet(h.app, `/api/v1/articles/${articleIds[1]}`, key)).body.data.title).toBe('Call us 1');
    expect(await revisionCount(articleIds[0]!)).toBe(2);
    expect(await revisionCount(articleIds[2]!)).toBe(1);
    const revision = await h.services.db.kysely.selectFrom('revisions').select(['origin', 'reason']).where('article_id', '=', articleIds[0]!).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(revision).toEqual({ origin: 'api', reason: 'New number' });
    const search = await apiGet(h.app, `/api/v1/sites/${siteId}/search?q=555-0100`, key);
    expect(search.body.meta.total).toBe(0);
    // One activity record for the request, stored with the change.
    await h.services.activity.flush();
    const logged = await h.services.db.kysely.selectFrom('activity_log').select(['operation', 'status']).where('operation', '=', 'replaceInSite').where('account_id', '=', customer.accountId).execute();
    expect(logged).toEqual([{ operation: 'replaceInSite', status: 200 }]);
  });

  it('matches case exactly with match_case, and a dry run changes nothing', async () => {
    const { siteId, articleIds } = await site(['<p>Acme and ACME.</p>']);
    const dry = await post(siteId, { find: 'ACME', replace: 'Apex', match_case: true }, { query: '?dry_run=true' });
    expect(dry.statusCode).toBe(200);
    expect(dry.json()).toEqual({
      data: [{ article_id: articleIds[0], occurrences: 1, matches: [{ field: 'body', offset: 12, text: 'ACME', before: '<p>Acme and ', after: '.</p>' }] }],
      meta: { articles: 1, occurrences: 1, dry_run: true },
    });
    expect(await revisionCount(articleIds[0]!)).toBe(1);
    const real = await post(siteId, { find: 'ACME', replace: 'Apex', match_case: true });
    expect(real.json().meta).toEqual({ articles: 1, occurrences: 1 });
    expect(await bodyOf(articleIds[0]!)).toBe('<p>Acme and Apex.</p>');
  });

  it('refuses the whole request when one article’s protected link would change, naming each article', async () => {
    const { siteId, articleIds } = await site(['<p>Call 555-0100.</p>', `<p>${protectedLink}</p>`, `<p>x ${protectedLink} 555-0100</p>`]);
    const res = await post(siteId, { find: '555-0100', replace: '555-0199' });
    expect(res.statusCode).toBe(422);
    const error = res.json();
    expect(error.error).toBe('protected_links_violation');
    expect(error.articles.map((item: { article_id: number }) => item.article_id).sort()).toEqual([articleIds[1], articleIds[2]].sort());
    expect(error.articles[0].protected_links[0]).toMatchObject({ type: 'backlink', href: 'https://partner.example/call' });
    expect(await bodyOf(articleIds[0]!)).toBe('<p>Call 555-0100.</p>');
    expect(await revisionCount(articleIds[0]!)).toBe(1);
    // Narrowed with article_ids, it goes through.
    const narrowed = await post(siteId, { find: '555-0100', replace: '555-0199', article_ids: [articleIds[0]] });
    expect(narrowed.statusCode).toBe(200);
    expect(narrowed.json().meta.articles).toBe(1);
  });

  it('validates its input and answers 404 for another account’s site', async () => {
    const { siteId } = await site(['<p>x</p>']);
    for (const [payload, field] of [
      [{ find: '', replace: 'x' }, 'find'],
      [{ find: 'ab', replace: 'x' }, 'find'],
      [{ find: 'x'.repeat(501), replace: 'x' }, 'find'],
      [{ find: 'abc' }, 'replace'],
      [{ find: 'abc', replace: 'x', article_ids: [] }, 'article_ids'],
      [{ find: 'abc', replace: 'x', article_ids: [999999] }, 'article_ids'],
      [{ find: 'abc', replace: 'x', extra: 1 }, 'extra'],
    ] as const) {
      const res = await post(siteId, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(res.json().fields).toHaveProperty(field);
    }
    const other = await createCustomer(h.services);
    expect((await post(siteId, { find: 'abc', replace: 'x' }, { as: other.key })).statusCode).toBe(404);
    const readOnly = await freshKey(h.services, customer.userId, { readOnly: true });
    expect((await post(siteId, { find: 'abc', replace: 'x' }, { as: readOnly })).json().error).toBe('insufficient_scope');
  });

  it('refuses more than 500 articles, saying how to narrow', async () => {
    const { siteId } = await seedSite(h.services, customer.email, { articles: Array.from({ length: 501 }, () => ({ status: 'draft' as const, body: '<p>wide text</p>' })) });
    const res = await post(siteId, { find: 'wide', replace: 'narrow' });
    expect(res.statusCode).toBe(422);
    expect(res.json().fields.article_ids.join(' ')).toMatch(/501 articles.*at most 500.*article_ids/);
  });

  it('counts one edit per changed article and refuses a request that would pass the allowance', async () => {
    const owner = await createCustomer(h.services);
    const { siteId, articleIds } = await seedSite(h.services, owner.email, {
      articles: Array.from({ length: 3 }, () => ({ status: 'draft' as const, body: '<p>old brand</p>' })),
    });
    const now = h.clock.now();
    await h.services.db.kysely.insertInto('edit_counts').values({ account_id: owner.accountId, day: now.toISOString().slice(0, 10), count: editsPerDay - 2 }).execute();
    const res = await post(siteId, { find: 'old brand', replace: 'new brand' }, { as: owner.key });
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({ error: 'edit_limit_exceeded', limit: editsPerDay });
    expect(await revisionCount(articleIds[0]!)).toBe(1);
    const two = await post(siteId, { find: 'old brand', replace: 'new brand', article_ids: articleIds.slice(0, 2) }, { as: owner.key });
    expect(two.statusCode).toBe(200);
    const counted = await h.services.db.kysely.selectFrom('edit_counts').select('count').where('account_id', '=', owner.accountId).executeTakeFirstOrThrow();
    expect(counted.count).toBe(editsPerDay);
  });

  it('replays an Idempotency-Key and refuses it for another request', async () => {
    const { siteId, articleIds } = await site(['<p>once only</p>']);
    const headers = { 'idempotency-key': `k-${siteId}` };
    const first = await post(siteId, { find: 'once only', replace: 'once more' }, { headers });
    const again = await post(siteId, { find: 'once only', replace: 'once more' }, { headers });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect(await revisionCount(articleIds[0]!)).toBe(2);
    const other = await post(siteId, { find: 'once only', replace: 'twice' }, { headers });
    expect(other.json().error).toBe('idempotency_key_reused');
  });
});
