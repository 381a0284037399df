import { afterEach, describe, expect, it, vi } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import {
  articleRow,
  editCount,
  expectUnchanged,
  newKey,
  patch,
  PROTECTED_BODY,
  put,
  revisionsOf,
  seedArticle,
  send,
  snapshot,
} from '../helpers/write-fixtures.js';

const h = useHarness();
/** Every error body answered in this file, checked for leaks at the end. */
const errorBodies: string[] = [];

afterEach(() => {
  vi.restoreAllMocks();
});

const raw = async (method: 'PUT' | 'PATCH' | 'POST', url: string, key: string, payload: string | Buffer | undefined, contentType?: string) => {
  const res = await h.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${key}`, ...(contentType ? { 'content-type': contentType } : {}) },
    ...(payload !== undefined ? { payload } : {}),
  });
  if (res.statusCode >= 400) errorBodies.push(res.body);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a response body of any shape
  return { status: res.statusCode, body: res.json() as any, text: res.body };
};

const activityOf = (keyId: number) =>
  h.services.db.kysely.selectFrom('activity_log').selectAll().where('api_key_id', '=', keyId).orderBy('id', 'asc').execute();

describe('content types and malformed bodies', () => {
  it.each([
    ['PATCH', ''],
    ['PUT', ''],
    ['POST', '/featured-image'],
  ] as const)('%s%s with text/plain is 415 unsupported_media_type, nothing saved', async (method, suffix) => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const url = `/api/v1/articles/${a.articleId}${suffix}`;
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', undefined]) {
      const res = await raw(method, url, a.customer.key, method === 'POST' ? '{"url":"https://x.example/a.jpg"}' : '{"title":"x","body":"<p>x</p>"}', contentType);
      expect(res.status, String(contentType)).toBe(415);
      expect(res.body, String(contentType)).toEqual({ error: 'unsupported_media_type', message: expect.any(String) });
    }
    await expectUnchanged(h, a, before);
  });

  it('multipart/form-data on PATCH and PUT is 415', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const form = new FormData();
    form.append('title', 'x');
    form.append('body', '<p>x</p>');
    const encoded = new Response(form);
    const payload = Buffer.from(await encoded.arrayBuffer());
    for (const method of ['PATCH', 'PUT'] as const) {
      const res = await raw(method, `/api/v1/articles/${a.articleId}`, a.customer.key, payload, encoded.headers.get('content-type')!);
      expect(res.status, method).toBe(415);
      expect(res.body.error).toBe('unsupported_media_type');
    }
    await expectUnchanged(h, a, before);
  });

  it.each([
    ['PATCH', ''],
    ['PUT', ''],
    ['POST', '/featured-image'],
  ] as const)('%s%s with malformed JSON is 400 invalid_json, nothing saved', async (method, suffix) => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    for (const payload of ['{"title": "x",', '{title: "x"}', "{'title':'x'}", '', '{"title":"x"} trailing']) {
      const res = await raw(method, `/api/v1/articles/${a.articleId}${suffix}`, a.customer.key, payload, 'application/json');
      expect(res.status, payload).toBe(400);
      expect(res.body, payload).toEqual({ error: 'invalid_json', message: expect.any(String) });
    }
    await expectUnchanged(h, a, before);
  });

  it('JSON that is not an object is 422 validation_failed', async () => {
    const a = await seedArticle(h.services);
    for (const payload of ['[]', '"title"', '42', 'null']) {
      const res = await raw('PATCH', `/api/v1/articles/${a.articleId}`, a.customer.key, payload, 'application/json');
      expect(res.status, payload).toBe(422);
      expect(res.body.error, payload).toBe('validation_failed');
    }
  });

  it('application/json with a charset parameter is accepted', async () => {
    const a = await seedArticle(h.services);
    const res = await raw('PATCH', `/api/v1/articles/${a.articleId}`, a.customer.key, '{"title":"Charset"}', 'application/json; charset=utf-8');
    expect(res.status).toBe(200);
    expect((await articleRow(h, a.articleId)).title).toBe('Charset');
  });

  it('a JSON body over 5 MiB is 413 payload_too_large on PUT and PATCH', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const huge = 'x'.repeat(5 * 1024 * 1024 + 10);
    for (const [method, payload] of [
      ['PUT', JSON.stringify({ body: `<p>${huge}</p>` })],
      ['PATCH', JSON.stringify({ replacements: [{ find: 'Intro', replace: huge }] })],
    ] as const) {
      const res = await raw(method, `/api/v1/articles/${a.articleId}`, a.customer.key, payload, 'application/json');
      expect(res.status, method).toBe(413);
      expect(res.body).toEqual({ error: 'payload_too_large', message: expect.any(String) });
    }
    await expectUnchanged(h, a, before);
  });
});

describe('activity records of writes', () => {
  it.each([
    ['updateArticle', 'PUT', ''],
    ['editArticle', 'PATCH', ''],
    ['replaceFeaturedImage', 'POST', '/featured-image'],
  ] as const)('a successful %s stores exactly one activity row, beside its revision', async (operation, method, suffix) => {
    const a = await seedArticle(h.services);
    const { key, keyId } = await newKey(h.services, a.customer.userId);
    const body =
      method === 'PUT' ? { body: `${PROTECTED_BODY}<p>More.</p>` } : method === 'PATCH' ? { title: 'Logged' } : { url: 'https://img.example/logged.jpg' };
    const res = await send(h.app, method, `/api/v1/articles/${a.articleId}${suffix}`, key, body, { headers: { 'user-agent': 'writes-test/1.0' } });
    expect(res.status).toBe(200);
    await h.services.activity.flush();
    const rows = await activityOf(keyId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      account_id: a.customer.accountId,
      user_id: a.customer.userId,
      api_key_id: keyId,
      mcp_grant_id: null,
      channel: 'api',
      operation,
      method,
      path: `/api/v1/articles/${a.articleId}${suffix}`,
      tool: null,
      status: 200,
      error: null,
      user_agent: 'writes-test/1.0',
    });
    const revisions = await revisionsOf(h, a.articleId);
    expect(revisions).toHaveLength(2);
    expect(revisions[1]!.api_key_id).toBe(keyId);
  });

  it('no-op, dry-run and replayed writes get one activity row each, too', async () => {
    const a = await seedArticle(h.services);
    const { key, keyId } = await newKey(h.services, a.customer.userId);
    expect((await patch(h, a.articleId, key, { title: 'Original title' })).status).toBe(200);
    expect((await patch(h, a.articleId, key, { title: 'Dry' }, { query: '?dry_run=true' })).status).toBe(200);
    expect((await patch(h, a.articleId, key, { title: 'Once' }, { headers: { 'idempotency-key': 'act' } })).status).toBe(200);
    expect((await patch(h, a.articleId, key, { title: 'Once' }, { headers: { 'idempotency-key': 'act' } })).status).toBe(200);
    await h.services.activity.flush();
    const rows = await activityOf(keyId);
    expect(rows.map((r) => [r.operation, r.status, r.error])).toEqual([
      ['editArticle', 200, null],
      ['editArticle', 200, null],
      ['editArticle', 200, null],
      ['editArticle', 200, null],
    ]);
  });

  it('a refused write leaves neither a revision nor a change, and its activity row carries the error id', async () => {
    const a = await seedArticle(h.services);
    const { key, keyId } = await newKey(h.services, a.customer.userId);
    const before = await snapshot(h, a);
    const refusals = [
      [await put(h, a.articleId, key, { body: '<p>links gone</p>' }), 422, 'protected_links_violation'],
      [await patch(h, a.articleId, key, { replacements: [{ find: 'absent' }] }), 409, 'replacement_failed'],
      [await patch(h, a.articleId, key, { title: 'x' }, { headers: { 'if-match': '"stale"' } }), 412, 'precondition_failed'],
      [await patch(h, a.articleId, key, { title: 'x'.repeat(300) }), 422, 'validation_failed'],
    ] as const;
    for (const [res, status, error] of refusals) {
      expect(res.status).toBe(status);
      expect(res.body.error).toBe(error);
    }
    await expectUnchanged(h, a, before);
    await h.services.activity.flush();
    const rows = await activityOf(keyId);
    expect(rows.map((r) => [r.operation, r.status, r.error])).toEqual(refusals.map(([, status, error]) => [expect.any(String), status, error]));
    expect(rows.map((r) => r.operation)).toEqual(['updateArticle', 'editArticle', 'editArticle', 'editArticle']);
  });

  it('the activity record is written in the change’s transaction: when it cannot be stored, the change is rolled back', async () => {
    const a = await seedArticle(h.services);
    const { key, keyId } = await newKey(h.services, a.customer.userId);
    const before = await snapshot(h, a);
    vi.spyOn(h.services.activity, 'recordIn').mockRejectedValueOnce(new Error('insert into activity_log failed: disk full'));
    const res = await send(h.app, 'PATCH', `/api/v1/articles/${a.articleId}`, key, { title: 'Rolled back' });
    errorBodies.push(res.text);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'internal_error', message: expect.any(String) });
    expect(res.text).not.toMatch(/activity_log|disk full|insert/i);
    // Article, revision and edit allowance all rolled back together.
    await expectUnchanged(h, a, before);
    await h.services.activity.flush();
    const rows = await activityOf(keyId);
    expect(rows.map((r) => [r.status, r.error])).toEqual([[500, 'internal_error']]);
  });

  it('when the revision cannot be stored, nothing is saved', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    vi.spyOn(h.services.revisions, 'recordIn').mockRejectedValueOnce(new Error('revisions insert failed'));
    const res = await send(h.app, 'PUT', `/api/v1/articles/${a.articleId}`, a.customer.key, { body: `${PROTECTED_BODY}<p>x</p>` });
    errorBodies.push(res.text);
    expect(res.status).toBe(500);
    expect(res.body.error).toBe('internal_error');
    await expectUnchanged(h, a, before);
    expect(await editCount(h, a.customer.accountId)).toBe(0);
  });

  it('no activity row holds the API key or the request body', async () => {
    const a = await seedArticle(h.services);
    const { key, keyId } = await newKey(h.services, a.customer.userId);
    const marker = `SECRET-BODY-${Date.now()}`;
    expect((await put(h, a.articleId, key, { body: `${PROTECTED_BODY}<p>${marker}</p>`, reason: `${marker}-reason` })).status).toBe(200);
    expect((await patch(h, a.articleId, key, { title: `${marker}-title`, replacements: [{ find: marker, replace: `${marker}2` }] })).status).toBe(200);
    expect((await patch(h, a.articleId, key, { replacements: [{ find: `${marker}-absent` }] })).status).toBe(409);
    await send(h.app, 'PATCH', `/api/v1/articles/${a.articleId}`, undefined, { title: marker }, { headers: { 'x-api-key': `${key}x` } });
    await h.services.activity.flush();
    const rows = await h.services.db.kysely.selectFrom('activity_log').selectAll().execute();
    const dump = JSON.stringify(rows);
    expect((await activityOf(keyId)).length).toBe(3);
    expect(dump).not.toContain(key);
    expect(dump).not.toContain(key.slice(3));
    expect(dump).not.toContain(marker);
  });
});

describe('error bodies', () => {
  it('never carry a stack trace or SQL', () => {
    expect(errorBodies.length).toBeGreaterThan(20);
    for (const text of errorBodies) {
      const body = JSON.parse(text);
      expect(Object.keys(body)).toEqual(expect.arrayContaining(['error', 'message']));
      expect(Object.keys(body).every((k) => ['error', 'message', 'fields', 'failures', 'protected_links', 'limit'].includes(k))).toBe(true);
      expect(text).not.toMatch(/\bat .+:\d+:\d+|node_modules|\.ts:\d|stack/i);
      expect(text).not.toMatch(/\b(select|insert into|update \w+ set|delete from)\b|sqlite|postgres|syntax error|constraint/i);
    }
  });
});
