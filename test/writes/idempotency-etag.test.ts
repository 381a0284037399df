import { describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import {
  articleRow,
  editCount,
  expectUnchanged,
  getArticle,
  patch,
  PROTECTED_BODY,
  put,
  revisionsOf,
  seedArticle,
  send,
  setEditCount,
  snapshot,
} from '../helpers/write-fixtures.js';

const h = useHarness();

const noon = '2026-11-15T12:00:00Z';
const idem = (key: string, extra: Record<string, string> = {}) => ({ headers: { 'idempotency-key': key, ...extra } });

/** Applying this twice would be visible: the find still matches once after the first run. */
const growing = { replacements: [{ find: 'Closing words here.', replace: 'Closing words here. More.' }], reason: 'grow' };
const grownOnce = PROTECTED_BODY.replace('Closing words here.', 'Closing words here. More.');

const featuredImage = (id: number, key: string, url: string, headers: Record<string, string> = {}) =>
  send(h.app, 'POST', `/api/v1/articles/${id}/featured-image`, key, { url }, { headers });

describe('Idempotency-Key', () => {
  it('the same key and request replays the first response (status, body, ETag); the change happens once', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const first = await patch(h, a.articleId, a.customer.key, growing, idem('retry-1'));
    expect(first.status).toBe(200);
    expect(first.body.data.body).toBe(grownOnce);
    const again = await patch(h, a.articleId, a.customer.key, growing, idem('retry-1'));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.etag).toBe(first.headers.etag);

    expect((await articleRow(h, a.articleId)).body).toBe(grownOnce);
    expect(await revisionsOf(h, a.articleId)).toHaveLength(2);
    expect(await editCount(h, a.customer.accountId)).toBe(1);
    const stored = await h.services.db.kysely.selectFrom('idempotency_keys').selectAll().where('account_id', '=', a.customer.accountId).execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ key: 'retry-1', state: 'done' });
  });

  it('PUT and featured-image replay too', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const body = `${PROTECTED_BODY}<p>Appended.</p>`;
    const first = await put(h, a.articleId, a.customer.key, { body, title: 'Put once' }, idem('put-1'));
    const second = await put(h, a.articleId, a.customer.key, { body, title: 'Put once' }, idem('put-1'));
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    const image1 = await featuredImage(a.articleId, a.customer.key, 'https://img.example/once.jpg', { 'idempotency-key': 'img-1' });
    const image2 = await featuredImage(a.articleId, a.customer.key, 'https://img.example/once.jpg', { 'idempotency-key': 'img-1' });
    expect(image1.status).toBe(200);
    expect(image2.status).toBe(200);
    expect(image2.body).toEqual(image1.body);
    expect(await revisionsOf(h, a.articleId)).toHaveLength(3);
    expect(await editCount(h, a.customer.accountId)).toBe(2);
  });

  it('the same key with a different request is 422 idempotency_key_reused, and nothing changes', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const b = await seedArticle(h.services, {}, a.customer);
    expect((await patch(h, a.articleId, a.customer.key, { title: 'First' }, idem('reuse'))).status).toBe(200);
    const beforeA = await snapshot(h, a);
    const beforeB = await snapshot(h, b);
    const attempts = [
      await patch(h, a.articleId, a.customer.key, { title: 'Second' }, idem('reuse')),
      await patch(h, a.articleId, a.customer.key, { title: 'First', reason: 'now with a reason' }, idem('reuse')),
      await patch(h, b.articleId, a.customer.key, { title: 'First' }, idem('reuse')),
      await put(h, a.articleId, a.customer.key, { body: PROTECTED_BODY, title: 'First' }, idem('reuse')),
      await featuredImage(a.articleId, a.customer.key, 'https://img.example/x.jpg', { 'idempotency-key': 'reuse' }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: 'idempotency_key_reused', message: expect.any(String) });
    }
    await expectUnchanged(h, a, beforeA);
    await expectUnchanged(h, b, beforeB);
  });

  it('a refused first request (409) is replayed, not run again', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const request = { replacements: [{ find: 'LATER' , replace: 'NOW' }] };
    const first = await patch(h, a.articleId, a.customer.key, request, idem('fails'));
    expect(first.status).toBe(409);
    expect(first.body).toEqual({ error: 'replacement_failed', message: expect.any(String), failures: [{ index: 0, matches: 0 }] });

    // Now the request would succeed if it ran again.
    expect((await patch(h, a.articleId, a.customer.key, { replacements: [{ find: 'Closing', replace: 'LATER' }] })).status).toBe(200);
    const before = await snapshot(h, a);
    const retry = await patch(h, a.articleId, a.customer.key, request, idem('fails'));
    expect(retry.status).toBe(409);
    expect(retry.body).toEqual(first.body);
    await expectUnchanged(h, a, before);
    expect(before.row.body).toContain('LATER');
  });

  it('a request refused for the edit limit is not stored: the retry runs once the allowance allows', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    await setEditCount(h, a.customer.accountId, 200);
    const refused = await patch(h, a.articleId, a.customer.key, { title: 'Later' }, idem('limited'));
    expect(refused.status).toBe(429);
    await setEditCount(h, a.customer.accountId, 0);
    const retry = await patch(h, a.articleId, a.customer.key, { title: 'Later' }, idem('limited'));
    expect(retry.status).toBe(200);
    expect((await articleRow(h, a.articleId)).title).toBe('Later');
  });

  it('a large body (over 1M characters) is replayed whole, first as a change, then as a no-op; the stored answers hold no copy of it', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const body = `${PROTECTED_BODY}${'<p>Large, with ü, € and 😀 to replay exactly.</p>'.repeat(25_000)}`;
    expect(body.length).toBeGreaterThan(1_000_000);
    const first = await put(h, a.articleId, a.customer.key, { body, title: 'Large once' }, idem('large-1'));
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.body).toBe(body);
    const again = await put(h, a.articleId, a.customer.key, { body, title: 'Large once' }, idem('large-1'));
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.etag).toBe(first.headers.etag);
    // The same body again under a new key changes nothing, and its replay is whole too.
    const noop = await put(h, a.articleId, a.customer.key, { body, title: 'Large once' }, idem('large-2'));
    expect(noop.status).toBe(200);
    expect(noop.text).toBe(first.text);
    const noopAgain = await put(h, a.articleId, a.customer.key, { body, title: 'Large once' }, idem('large-2'));
    expect(noopAgain.text).toBe(first.text);
    // Another request under a used key is still told apart (its fingerprint hashed in parts).
    const other = await put(h, a.articleId, a.customer.key, { body: `${body}<p>More.</p>`, title: 'Large once' }, idem('large-1'));
    expect(other.status).toBe(422);
    expect(other.body.error).toBe('idempotency_key_reused');

    expect((await articleRow(h, a.articleId)).body).toBe(body);
    expect(await revisionsOf(h, a.articleId)).toHaveLength(2);
    const stored = await h.services.db.kysely.selectFrom('idempotency_keys').select(['key', 'response']).where('account_id', '=', a.customer.accountId).orderBy('key').execute();
    expect(stored.map((row) => row.key)).toEqual(['large-1', 'large-2']);
    for (const row of stored) expect(row.response!.length).toBeLessThan(10_000);
  });

  it('a no-op first request is replayed promptly (its key does not stay pending)', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const first = await patch(h, a.articleId, a.customer.key, { title: 'Original title' }, idem('noop'));
    expect(first.status).toBe(200);
    const started = Date.now();
    const retry = await patch(h, a.articleId, a.customer.key, { title: 'Original title' }, idem('noop'));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);
    await expectUnchanged(h, a, before);
  });

  it('10 concurrent identical requests with one key: one change, one revision, all get the same 200 body', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const results = await Promise.all(Array.from({ length: 10 }, () => patch(h, a.articleId, a.customer.key, growing, idem('burst'))));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    for (const r of results) expect(r.body).toEqual(results[0]!.body);
    expect(results[0]!.body.data.body).toBe(grownOnce);
    expect((await articleRow(h, a.articleId)).body).toBe(grownOnce);
    expect(await revisionsOf(h, a.articleId)).toHaveLength(2);
    expect(await editCount(h, a.customer.accountId)).toBe(1);
  });

  it('keys are kept 24 hours: after 23 h the retry replays, after 25 h it runs again', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    expect((await patch(h, a.articleId, a.customer.key, { title: 'Keyed' }, idem('day'))).status).toBe(200);
    expect((await patch(h, a.articleId, a.customer.key, { title: 'Other' })).status).toBe(200);

    h.clock.set('2026-11-16T11:00:00Z');
    const replay = await patch(h, a.articleId, a.customer.key, { title: 'Keyed' }, idem('day'));
    expect(replay.status).toBe(200);
    expect(replay.body.data.title).toBe('Keyed');
    expect((await articleRow(h, a.articleId)).title).toBe('Other');
    expect(await revisionsOf(h, a.articleId)).toHaveLength(3);

    h.clock.set('2026-11-16T13:00:00Z');
    const rerun = await patch(h, a.articleId, a.customer.key, { title: 'Keyed' }, idem('day'));
    expect(rerun.status).toBe(200);
    expect((await articleRow(h, a.articleId)).title).toBe('Keyed');
    expect(await revisionsOf(h, a.articleId)).toHaveLength(4);
    h.clock.set(noon);
  });

  it('keys are per account: another account may use the same key', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const b = await seedArticle(h.services);
    expect((await patch(h, a.articleId, a.customer.key, { title: 'A' }, idem('shared'))).status).toBe(200);
    const other = await patch(h, b.articleId, b.customer.key, { title: 'B' }, idem('shared'));
    expect(other.status).toBe(200);
    expect(other.body.data.title).toBe('B');
    expect((await articleRow(h, b.articleId)).title).toBe('B');
    expect((await articleRow(h, a.articleId)).title).toBe('A');
  });

  it('a key with a control character is refused (422), nothing changes', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    for (const key of ['with\u0000nul', 'tab\there']) {
      const res = await patch(h, a.articleId, a.customer.key, { title: 'Changed' }, idem(key));
      expect(res.status, JSON.stringify(key)).toBe(422);
      expect(res.body.error).toBe('validation_failed');
    }
    await expectUnchanged(h, a, before);
  });

  it('a dry run does not use the key: the real request with the same key then runs', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const dry = await patch(h, a.articleId, a.customer.key, { title: 'Dry first' }, { ...idem('dry'), query: '?dry_run=true' });
    expect(dry.status).toBe(200);
    expect(dry.body.meta.dry_run).toBe(true);
    const wet = await patch(h, a.articleId, a.customer.key, { title: 'Dry first' }, idem('dry'));
    expect(wet.status).toBe(200);
    expect(wet.body.meta.dry_run).toBeUndefined();
    expect((await articleRow(h, a.articleId)).title).toBe('Dry first');
  });
});

describe('ETag and If-Match', () => {
  it('PATCH with the current ETag succeeds and returns the new one; the old one is then 412 precondition_failed', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const etag = (await getArticle(h, a.articleId, a.customer.key)).headers.etag as string;
    const ok = await patch(h, a.articleId, a.customer.key, { title: 'Matched' }, { headers: { 'if-match': etag } });
    expect(ok.status).toBe(200);
    const newEtag = ok.headers.etag as string;
    expect(newEtag).not.toBe(etag);
    expect((await getArticle(h, a.articleId, a.customer.key)).headers.etag).toBe(newEtag);

    const before = await snapshot(h, a);
    const stale = await patch(h, a.articleId, a.customer.key, { title: 'Stale' }, { headers: { 'if-match': etag } });
    expect(stale.status).toBe(412);
    expect(stale.body).toEqual({ error: 'precondition_failed', message: expect.any(String) });
    const junk = await patch(h, a.articleId, a.customer.key, { title: 'Stale' }, { headers: { 'if-match': '"nonsense"' } });
    expect(junk.status).toBe(412);
    await expectUnchanged(h, a, before);

    const next = await patch(h, a.articleId, a.customer.key, { title: 'Matched again' }, { headers: { 'if-match': newEtag } });
    expect(next.status).toBe(200);
  });

  it('If-Match: * passes, and so does a list naming the current ETag', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    expect((await patch(h, a.articleId, a.customer.key, { title: 'Star' }, { headers: { 'if-match': '*' } })).status).toBe(200);
    const etag = (await getArticle(h, a.articleId, a.customer.key)).headers.etag as string;
    const listed = await patch(h, a.articleId, a.customer.key, { title: 'Listed' }, { headers: { 'if-match': `"old", ${etag}` } });
    expect(listed.status).toBe(200);
  });

  it('a weak validator never matches If-Match (strong comparison, RFC 9110)', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const etag = (await getArticle(h, a.articleId, a.customer.key)).headers.etag as string;
    const before = await snapshot(h, a);
    const weak = await patch(h, a.articleId, a.customer.key, { title: 'Weak' }, { headers: { 'if-match': `W/${etag}` } });
    expect(weak.status).toBe(412);
    await expectUnchanged(h, a, before);
  });

  it('PUT honours If-Match', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const etag = (await getArticle(h, a.articleId, a.customer.key)).headers.etag as string;
    await patch(h, a.articleId, a.customer.key, { title: 'Moved on' });
    const before = await snapshot(h, a);
    const stale = await put(h, a.articleId, a.customer.key, { body: `${PROTECTED_BODY}<p>x</p>` }, { headers: { 'if-match': etag } });
    expect(stale.status).toBe(412);
    expect(stale.body.error).toBe('precondition_failed');
    await expectUnchanged(h, a, before);
    const current = (await getArticle(h, a.articleId, a.customer.key)).headers.etag as string;
    const ok = await put(h, a.articleId, a.customer.key, { body: `${PROTECTED_BODY}<p>x</p>` }, { headers: { 'if-match': current } });
    expect(ok.status).toBe(200);
  });

  it('featured-image honours If-Match (JSON and multipart)', async () => {
    h.clock.set(noon);
    const a = await seedArticle(h.services);
    const etag = (await getArticle(h, a.articleId, a.customer.key)).headers.etag as string;
    await patch(h, a.articleId, a.customer.key, { title: 'Moved on' });
    const before = await snapshot(h, a);
    const stale = await featuredImage(a.articleId, a.customer.key, 'https://img.example/stale.jpg', { 'if-match': etag });
    expect(stale.status).toBe(412);
    expect(stale.body.error).toBe('precondition_failed');

    const form = new FormData();
    form.append('url', 'https://img.example/stale-multipart.jpg');
    const encoded = new Response(form);
    const multipart = await send(h.app, 'POST', `/api/v1/articles/${a.articleId}/featured-image`, a.customer.key, undefined, {
      payload: Buffer.from(await encoded.arrayBuffer()),
      headers: { 'content-type': encoded.headers.get('content-type')!, 'if-match': etag },
    });
    expect(multipart.status).toBe(412);
    await expectUnchanged(h, a, before);

    const current = (await getArticle(h, a.articleId, a.customer.key)).headers.etag as string;
    const ok = await featuredImage(a.articleId, a.customer.key, 'https://img.example/fresh.jpg', { 'if-match': current });
    expect(ok.status).toBe(200);
    expect(ok.headers.etag).not.toBe(current);
    expect((await articleRow(h, a.articleId)).featured_image_url).toBe('https://img.example/fresh.jpg');
  });
});
