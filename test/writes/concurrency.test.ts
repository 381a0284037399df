import { beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/services/actor.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, dialectName, useHarness } from '../helpers/harness.js';
import {
  articleRow,
  editCount,
  getArticle,
  newKey,
  patch,
  PROTECTED_BODY,
  revisionsOf,
  seedArticle,
  setEditCount,
} from '../helpers/write-fixtures.js';

const h = useHarness();
let base = '';

beforeAll(async () => {
  // A real listener: the concurrent requests below travel over TCP like a client's.
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const address = h.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  base = `http://127.0.0.1:${address.port}`;
});

const noon = '2026-11-15T12:00:00Z';

async function fetchPatch(id: number, key: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/api/v1/articles/${id}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a response body of any shape
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

const tokens = Array.from({ length: 50 }, (_, i) => String(i).padStart(2, '0'));

describe(`no lost updates (${dialectName})`, () => {
  it('50 concurrent PATCHes, each replacing its own token, all apply: 50 revisions, 50 edits counted', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services, { body: tokens.map((t) => `<p>TOKEN${t}</p>`).join('') });
    const results = await Promise.all(
      tokens.map((t) => fetchPatch(a.articleId, a.customer.key, { replacements: [{ find: `TOKEN${t}`, replace: `DONE${t}` }], reason: `token ${t}` })),
    );
    expect(results.map((r) => r.status)).toEqual(tokens.map(() => 200));

    const finalBody = tokens.map((t) => `<p>DONE${t}</p>`).join('');
    expect((await articleRow(h, a.articleId)).body).toBe(finalBody);
    const get = await getArticle(h, a.articleId, (await newKey(h.services, a.customer.userId)).key);
    expect(get.body.data.body).toBe(finalBody);

    const revisions = (await revisionsOf(h, a.articleId)).slice(1);
    expect(revisions).toHaveLength(50);
    // Each revision builds on the one before: the k-th holds exactly k replaced tokens.
    revisions.forEach((revision, k) => {
      expect(revision.origin).toBe('api');
      expect(revision.body.split('DONE').length - 1).toBe(k + 1);
    });
    expect(new Set(revisions.map((r) => r.reason))).toEqual(new Set(tokens.map((t) => `token ${t}`)));
    expect(await editCount(h, a.customer.accountId)).toBe(50);
    expect((await articleRow(h, a.articleId)).version).toBe(51);
    // A write that found the article moved rolled back its revision, count and record, then retried.
    const records = await h.services.db.kysely
      .selectFrom('activity_log')
      .select(['status', 'request_id'])
      .where('account_id', '=', a.customer.accountId)
      .where('operation', '=', 'editArticle')
      .execute();
    expect(records.map((r) => r.status)).toEqual(tokens.map(() => 200));
    expect(new Set(records.map((r) => r.request_id)).size).toBe(50);
  });

  it('25 concurrent PATCHes, each with its own Idempotency-Key: each applies once, and each key replays its own first answer', async () => {
    h.clock.set(noon);
    const some = tokens.slice(0, 25);
    const a = await seedArticle(h.services, { body: some.map((t) => `<p>TOKEN${t}</p>`).join('') });
    // Writes that found the article moved retried; what each key kept must be its write's final answer.
    const send = (t: string) =>
      fetchPatch(a.articleId, a.customer.key, { replacements: [{ find: `TOKEN${t}`, replace: `DONE${t}` }] }, { 'idempotency-key': `key-${t}` });
    const first = await Promise.all(some.map(send));
    expect(first.map((r) => r.status)).toEqual(some.map(() => 200));
    const replays = await Promise.all(some.map(send));
    replays.forEach((replay, i) => {
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual(first[i]!.body);
      expect(replay.headers.get('etag')).toBe(first[i]!.headers.get('etag'));
    });
    // Each answer shows its own write applied on top of those before it.
    expect(new Set(first.map((r) => r.headers.get('etag'))).size).toBe(25);
    first.forEach((r, i) => expect(r.body.data.body).toContain(`DONE${some[i]}`));
    expect((await articleRow(h, a.articleId)).body).toBe(some.map((t) => `<p>DONE${t}</p>`).join(''));
    expect((await revisionsOf(h, a.articleId)).slice(1)).toHaveLength(25);
    expect(await editCount(h, a.customer.accountId)).toBe(25);
    const kept = await h.services.db.kysely.selectFrom('idempotency_keys').select('key').where('account_id', '=', a.customer.accountId).execute();
    expect(kept.map((row) => row.key).sort()).toEqual(some.map((t) => `key-${t}`));
  });

  it('50 concurrent PATCHes with the same If-Match: exactly one applies, the others get 412 and change nothing', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services, { body: tokens.map((t) => `<p>TOKEN${t}</p>`).join('') });
    const etag = (await getArticle(h, a.articleId, a.customer.key)).headers.etag as string;
    const results = await Promise.all(
      tokens.map((t) => fetchPatch(a.articleId, a.customer.key, { replacements: [{ find: `TOKEN${t}`, replace: `DONE${t}` }] }, { 'if-match': etag })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(results.filter((r) => r.status === 412)).toHaveLength(49);
    for (const r of results.filter((x) => x.status === 412)) expect(r.body.error).toBe('precondition_failed');
    const body = (await articleRow(h, a.articleId)).body;
    expect(body.split('DONE').length - 1).toBe(1);
    expect(await revisionsOf(h, a.articleId)).toHaveLength(2);
    expect(await editCount(h, a.customer.accountId)).toBe(1);
  });
});

describe(`edit allowance: 200 writes per UTC day per account (${dialectName})`, () => {
  it('200 writes succeed (across several keys of the account), the 201st is 429 edit_limit_exceeded with limit 200 and Retry-After', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    let key = a.customer.key;
    for (let i = 1; i <= 200; i++) {
      // Every key has 60 requests a minute: the account's allowance is shared by all of them.
      if (i % 50 === 0) key = (await newKey(h.services, a.customer.userId)).key;
      const res = await patch(h, a.articleId, key, { title: `Title ${i}` });
      expect(res.status, `write ${i}`).toBe(200);
      expect(String(res.headers['ratelimit']), `write ${i}`).toContain(`"edits";r=${200 - i};`);
    }
    expect(await editCount(h, a.customer.accountId)).toBe(200);

    const refused = await patch(h, a.articleId, key, { title: 'Title 201' });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'edit_limit_exceeded', message: expect.any(String), limit: 200 });
    // Noon UTC: the allowance renews in 12 hours.
    expect(refused.headers['retry-after']).toBe('43200');

    // PUT and featured-image are writes too.
    const refusedPut = await h.app.inject({
      method: 'PUT',
      url: `/api/v1/articles/${a.articleId}`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ body: `${PROTECTED_BODY}<p>more</p>`, title: 'x' }),
    });
    expect(refusedPut.statusCode).toBe(429);
    expect(refusedPut.json()).toEqual({ error: 'edit_limit_exceeded', message: expect.any(String), limit: 200 });
    const refusedImage = await h.app.inject({
      method: 'POST',
      url: `/api/v1/articles/${a.articleId}/featured-image`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ url: 'https://img.example/over.jpg' }),
    });
    expect(refusedImage.statusCode).toBe(429);
    expect(refusedImage.json().error).toBe('edit_limit_exceeded');

    const row = await articleRow(h, a.articleId);
    expect(row.title).toBe('Title 200');
    expect(row.featured_image_url).toBe('https://img.example/original.jpg');
    expect(await revisionsOf(h, a.articleId)).toHaveLength(201);
    expect(await editCount(h, a.customer.accountId)).toBe(200);

    // Another account is unaffected.
    const other = await seedArticle(h.services);
    expect((await patch(h, other.articleId, other.customer.key, { title: 'fine' })).status).toBe(200);
  });

  it('concurrent writes near the limit never exceed it: at 190, 20 concurrent PATCHes → exactly 10 succeed', async () => {
    h.clock.set(noon);
    const customer = await createCustomer(h.services);
    const { articleIds } = await seedSite(h.services, customer.email, {
      articles: Array.from({ length: 20 }, (_, i) => ({ status: 'draft' as const, title: `A${i}`, body: `<p>Article ${i}</p>` })),
    });
    await setEditCount(h, customer.accountId, 190);
    const results = await Promise.all(articleIds.map((id) => fetchPatch(id, customer.key, { title: 'changed' })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    for (const r of results.filter((x) => x.status === 429)) expect(r.body).toMatchObject({ error: 'edit_limit_exceeded', limit: 200 });
    expect(await editCount(h, customer.accountId)).toBe(200);

    // Exactly the articles whose write succeeded changed, each with one revision.
    for (const [i, id] of articleIds.entries()) {
      const row = await articleRow(h, id);
      const revisions = await revisionsOf(h, id);
      if (results[i]!.status === 200) {
        expect(row.title).toBe('changed');
        expect(revisions).toHaveLength(2);
      } else {
        expect(row.title).toBe(`A${i}`);
        expect(revisions).toHaveLength(1);
      }
    }
  });

  it('concurrent first writes of a day all count: 20 concurrent PATCHes with no count yet → 20 succeed, count 20', async () => {
    h.clock.set(noon);
    const customer = await createCustomer(h.services);
    const { articleIds } = await seedSite(h.services, customer.email, {
      articles: Array.from({ length: 20 }, (_, i) => ({ status: 'draft' as const, title: `F${i}`, body: `<p>Article ${i}</p>` })),
    });
    expect(await editCount(h, customer.accountId)).toBe(0);
    const results = await Promise.all(articleIds.map((id) => fetchPatch(id, customer.key, { title: 'first' })));
    expect(results.map((r) => r.status)).toEqual(articleIds.map(() => 200));
    expect(await editCount(h, customer.accountId)).toBe(20);
  });

  it('UI editor writes do not count and are not refused at the limit', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    await setEditCount(h, a.customer.accountId, 200);
    const editor: Actor = {
      accountId: a.customer.accountId,
      userId: a.customer.userId,
      credential: { kind: 'session' },
      channel: 'editor',
      staff: false,
      scopes: ['read', 'write'],
      request: null,
    };
    const result = await h.services.articleWrites.edit(editor, a.articleId, { title: 'From the editor', reason: 'typo' });
    expect(result.changed).toBe(true);
    expect(result.allowance).toBeUndefined();
    const revisions = await revisionsOf(h, a.articleId);
    expect(revisions.at(-1)).toMatchObject({ origin: 'editor', user_id: a.customer.userId, api_key_id: null, reason: 'typo', title: 'From the editor' });
    expect(await editCount(h, a.customer.accountId)).toBe(200);

    // Below the limit, an editor write leaves the count alone too.
    await setEditCount(h, a.customer.accountId, 5);
    await h.services.articleWrites.edit(editor, a.articleId, { title: 'Editor again' });
    expect(await editCount(h, a.customer.accountId)).toBe(5);
    const api = await patch(h, a.articleId, a.customer.key, { title: 'API' });
    expect(api.status).toBe(200);
    expect(await editCount(h, a.customer.accountId)).toBe(6);
  });

  it('MCP writes share the account’s allowance with API writes', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const mcp: Actor = {
      accountId: a.customer.accountId,
      userId: a.customer.userId,
      credential: { kind: 'mcp_grant', id: 4242 },
      channel: 'mcp',
      staff: false,
      scopes: ['read', 'write'],
      request: null,
    };
    await setEditCount(h, a.customer.accountId, 198);
    const viaMcp = await h.services.articleWrites.edit(mcp, a.articleId, { title: 'From MCP' });
    expect(viaMcp.allowance).toMatchObject({ limit: 200, remaining: 1 });
    expect((await revisionsOf(h, a.articleId)).at(-1)).toMatchObject({ origin: 'mcp', mcp_grant_id: 4242, api_key_id: null });
    expect((await patch(h, a.articleId, a.customer.key, { title: 'From API' })).status).toBe(200);
    await expect(h.services.articleWrites.edit(mcp, a.articleId, { title: 'Too many' })).rejects.toMatchObject({ code: 'edit_limit_exceeded', status: 429 });
    expect(await editCount(h, a.customer.accountId)).toBe(200);
    expect((await articleRow(h, a.articleId)).title).toBe('From API');
  });

  it('a request refused with 429 rate_limited is not counted as an edit', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    for (let i = 0; i < 60; i++) expect((await getArticle(h, a.articleId, a.customer.key)).status).toBe(200);
    const before = await articleRow(h, a.articleId);
    const res = await patch(h, a.articleId, a.customer.key, { title: 'too fast' });
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: 'rate_limited', message: expect.any(String), limit: 60 });
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await articleRow(h, a.articleId)).toEqual(before);
    expect(await revisionsOf(h, a.articleId)).toHaveLength(1);
    expect(await editCount(h, a.customer.accountId)).toBe(0);
  });

  it('renews on the next UTC day', async () => {
    const a = await seedArticle(h.services);
    h.clock.set('2026-11-15T23:59:59Z');
    await setEditCount(h, a.customer.accountId, 200);
    const refused = await patch(h, a.articleId, a.customer.key, { title: 'late' });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('edit_limit_exceeded');
    expect(refused.headers['retry-after']).toBe('1');

    h.clock.set('2026-11-16T00:00:00Z');
    const renewed = await patch(h, a.articleId, a.customer.key, { title: 'early' });
    expect(renewed.status).toBe(200);
    expect(String(renewed.headers['ratelimit'])).toContain('"edits";r=199;');
    expect(await editCount(h, a.customer.accountId, '2026-11-16')).toBe(1);
    expect(await editCount(h, a.customer.accountId, '2026-11-15')).toBe(200);
  });

  it('write responses show the daily allowance in RateLimit-Policy and RateLimit', async () => {
    // The real time, so that the reset (t) can be checked against the wall clock.
    const now = new Date();
    h.clock.set(now.toISOString());
    const a = await seedArticle(h.services);
    await setEditCount(h, a.customer.accountId, 41);
    const res = await patch(h, a.articleId, a.customer.key, { title: 'headers' });
    expect(res.status).toBe(200);
    const policy = String(res.headers['ratelimit-policy']);
    expect(policy).toContain('"default";q=60;w=60');
    expect(policy).toContain('"edits";q=200;w=86400');
    const match = /"edits";r=(\d+);t=(\d+)/.exec(String(res.headers['ratelimit']));
    expect(match).not.toBeNull();
    expect(Number(match![1])).toBe(158);
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    expect(Math.abs(Number(match![2]) - (midnight - now.getTime()) / 1000)).toBeLessThanOrEqual(3);
    // The per-key request limit keeps its classic headers.
    expect(res.headers['x-ratelimit-limit']).toBe('60');
    h.clock.set(noon);
  });
});
