import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { articleRow, expectUnchanged, getArticle, PROTECTED_BODY, revisionsOf, type SeededArticle, seedArticle, send, snapshot } from '../helpers/write-fixtures.js';

// JSON bodies of 256 KiB or more are parsed by a pool thread (src/http/json-body.ts): they must be
// read, and refused, exactly as small ones are; no body may hold more than 10,000 values. Answers
// of a million characters or more are encoded and sent in parts (src/http/json-answer.ts): they
// must arrive whole.

let h: Harness;
let a: SeededArticle;

beforeAll(async () => {
  h = await startHarness();
  a = await seedArticle(h.services);
});
afterAll(() => h.close());

/** A body of about 1.2 MB: over the size that takes the stepwise path. */
const largeBody = `${PROTECTED_BODY}${'<p>Ünïcode words across the chunk boundaries — 😀.</p>'.repeat(20_000)}`;

const putRaw = (payload: string) =>
  send(h.app, 'PUT', `/api/v1/articles/${a.articleId}`, a.customer.key, undefined, { payload, headers: { 'content-type': 'application/json' } });

describe('large JSON request bodies', () => {
  it('are read whole, multi-byte characters included', async () => {
    expect(Buffer.byteLength(JSON.stringify({ body: largeBody }))).toBeGreaterThan(1_000_000);
    const res = await putRaw(JSON.stringify({ body: largeBody }));
    expect(res.status).toBe(200);
    expect((await articleRow(h, a.articleId)).body).toBe(largeBody);
  });

  // Parts are 512 KiB: a 4-byte character starting 1, 2 or 3 bytes before the first boundary is
  // split by it unless the part ends before the character.
  it.each([1, 2, 3])('keep a character whole that a part boundary would split %i byte(s) into it', async (before) => {
    const start = JSON.stringify({ body: `${PROTECTED_BODY}<p>` }).slice(0, -2);
    const filler = 'a'.repeat(512 * 1024 - before - Buffer.byteLength(start));
    const body = `${PROTECTED_BODY}<p>${filler}😀${'b'.repeat(600_000)}</p>`;
    const payload = JSON.stringify({ body });
    expect(Buffer.from(payload).subarray(512 * 1024 - before, 512 * 1024 - before + 4).toString()).toBe('😀');
    const res = await putRaw(payload);
    expect(res.status).toBe(200);
    expect((await articleRow(h, a.articleId)).body).toBe(body);
  });

  it.each([
    ['truncated JSON', JSON.stringify({ body: largeBody }).slice(0, -2)],
    ['a __proto__ key', `{"__proto__":{"polluted":true},"body":${JSON.stringify(largeBody)}}`],
    ['a constructor.prototype key', `{"constructor":{"prototype":{"polluted":true}},"body":${JSON.stringify(largeBody)}}`],
  ])('with %s are refused with invalid_json, as small ones, and change nothing', async (_, payload) => {
    const before = await snapshot(h, a);
    const res = await putRaw(payload);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_json' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await expectUnchanged(h, a, before);
  });
});

describe('request bodies that do not match their Content-Length', () => {
  it.each([
    ['longer, small', JSON.stringify({ body: PROTECTED_BODY }), 10],
    ['longer, large', JSON.stringify({ body: largeBody }), 300_000],
    ['shorter, small', JSON.stringify({ body: PROTECTED_BODY }), 100_000],
  ])('are refused with 400, %s, and change nothing', async (_, payload, declared) => {
    const before = await snapshot(h, a);
    const res = await send(h.app, 'PUT', `/api/v1/articles/${a.articleId}`, a.customer.key, undefined, {
      payload,
      headers: { 'content-type': 'application/json', 'content-length': String(declared) },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_json', message: 'The request body does not match its Content-Length.' });
    await expectUnchanged(h, a, before);
  });
});

describe('request bodies holding more than 10,000 values', () => {
  /** A PUT body of `values` JSON values: the object, its body, `extra` and the numbers in it. */
  const withValues = (values: number) => JSON.stringify({ body: PROTECTED_BODY, extra: new Array(values - 3).fill(0) });

  it('are refused with 413 payload_too_large, small or large, and change nothing', async () => {
    const before = await snapshot(h, a);
    for (const payload of [withValues(10_001), `{"body":${JSON.stringify(largeBody)},"extra":[${'{},'.repeat(100_000)}{}]}`]) {
      const res = await putRaw(payload);
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ error: 'payload_too_large', message: expect.stringContaining('more than 10,000 values') });
    }
    await expectUnchanged(h, a, before);
  });

  it('are parsed at 10,000, and validated (an unknown field is refused)', async () => {
    const res = await putRaw(withValues(10_000));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'validation_failed', fields: { extra: [expect.any(String)] } });
  });

  it.each([
    ['small', 10_001],
    ['large', 70_000],
  ])('are refused in forms too (%s): the UI with 413, the OAuth token endpoint with its invalid_request', async (_, fields) => {
    const form = Array.from({ length: fields }, (_, i) => `f${i}=`).join('&');
    const post = (url: string) => h.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form });
    expect((await post('/app/sign-in')).statusCode).toBe(413);
    const token = await post('/oauth/token');
    expect(token.statusCode).toBe(400);
    expect(token.json()).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('more than 10,000 values') });
  });
});

describe('large articles (SQLite: read and stored by the off-loop connection)', () => {
  it('a PATCH of a large article stores its body, revision, edit and activity exactly, and a refused one changes nothing', async () => {
    const seeded = await seedArticle(h.services);
    expect((await send(h.app, 'PUT', `/api/v1/articles/${seeded.articleId}`, seeded.customer.key, { body: largeBody })).status).toBe(200);
    const before = await snapshot(h, seeded);
    expect(before.row.body).toBe(largeBody);

    const refused = await send(h.app, 'PATCH', `/api/v1/articles/${seeded.articleId}`, seeded.customer.key, {
      replacements: [{ find: 'no such text anywhere', replace: 'x' }],
    });
    expect(refused.status).toBe(409);
    await expectUnchanged(h, seeded, before);

    const res = await send(h.app, 'PATCH', `/api/v1/articles/${seeded.articleId}`, seeded.customer.key, {
      replacements: [{ find: 'Intro paragraph', replace: 'Opening paragraph' }],
      reason: 'large edit',
    });
    expect(res.status).toBe(200);
    const expected = largeBody.replace('Intro paragraph', 'Opening paragraph');
    expect(res.body.data.body === expected).toBe(true);
    const after = await snapshot(h, seeded);
    expect(after.row.body === expected).toBe(true);
    expect(after.row.version).toBe(before.row.version + 1);
    expect(after.revisions).toBe(before.revisions + 1);
    expect(after.edits).toBe(before.edits + 1);
    const revision = (await revisionsOf(h, seeded.articleId)).at(-1)!;
    expect(revision.body === expected && revision.reason === 'large edit').toBe(true);
    expect(after.row.current_revision_id).toBe(revision.id);
    const read = await getArticle(h, seeded.articleId, seeded.customer.key);
    expect(read.status === 200 && read.body.data.body === expected).toBe(true);
    expect((await getArticle(h, seeded.articleId, a.customer.key)).status).toBe(404);
    // A large revision is read (for a restore, a diff) as exactly, and only under its own article.
    expect((await h.services.revisions.get(seeded.articleId, revision.id))?.body === expected).toBe(true);
    expect(await h.services.revisions.get(a.articleId, revision.id)).toBeUndefined();
    await h.services.activity.flush();
    const logged = await h.services.db.kysely
      .selectFrom('activity_log')
      .select(['operation', 'status'])
      .where('account_id', '=', seeded.customer.accountId)
      .orderBy('id')
      .execute();
    // The refusal's record is written in the background, the change's with the change.
    expect(logged.filter((entry) => entry.operation === 'editArticle').map((entry) => entry.status).sort()).toEqual([200, 409]);
  });

  it('a PUT of the large body it has, or a PATCH that leaves the body as it is, stores no new body (the thread compares them)', async () => {
    const seeded = await seedArticle(h.services);
    expect((await send(h.app, 'PUT', `/api/v1/articles/${seeded.articleId}`, seeded.customer.key, { body: largeBody })).status).toBe(200);
    const before = await snapshot(h, seeded);

    const same = await send(h.app, 'PUT', `/api/v1/articles/${seeded.articleId}`, seeded.customer.key, { body: largeBody });
    expect(same.status).toBe(200);
    expect(same.body.data.body === largeBody).toBe(true);
    const untouched = await send(h.app, 'PATCH', `/api/v1/articles/${seeded.articleId}`, seeded.customer.key, { replacements: [{ find: 'Intro paragraph', replace: 'Intro paragraph' }] });
    expect(untouched.status).toBe(200);
    expect(untouched.body.data.body === largeBody).toBe(true);
    await expectUnchanged(h, seeded, before);

    const retitled = await send(h.app, 'PATCH', `/api/v1/articles/${seeded.articleId}`, seeded.customer.key, { title: 'Retitled' });
    expect(retitled.status).toBe(200);
    expect(retitled.body.data.body === largeBody && retitled.body.data.title === 'Retitled').toBe(true);
    const after = await snapshot(h, seeded);
    expect(after.row.body === largeBody && after.row.title === 'Retitled').toBe(true);
    expect(after.revisions).toBe(before.revisions + 1);
    expect((await revisionsOf(h, seeded.articleId)).at(-1)!.body === largeBody).toBe(true);
  });
});

describe('large JSON request bodies past the queue bound', () => {
  let bounded: Harness;
  beforeAll(async () => {
    // One byte of queue: a large body may wait alone, a second one at the same time is refused.
    bounded = await startHarness({ env: { HTML_QUEUE_BYTES: '1' } });
  });
  afterAll(() => bounded.close());

  it('are refused with 429 rate_limited and Retry-After, and change nothing', async () => {
    const articles = await Promise.all([1, 2, 3, 4].map(() => seedArticle(bounded.services)));
    const before = await Promise.all(articles.map((article) => snapshot(bounded, article)));
    const answers = await Promise.all(
      articles.map((article) =>
        send(bounded.app, 'PUT', `/api/v1/articles/${article.articleId}`, article.customer.key, undefined, {
          payload: JSON.stringify({ body: largeBody }),
          headers: { 'content-type': 'application/json' },
        }),
      ),
    );
    const refused = answers.flatMap((answer, i) => (answer.status === 429 ? [i] : []));
    expect(answers.every(({ status }) => status === 200 || status === 429)).toBe(true);
    expect(refused.length).toBeGreaterThan(0);
    for (const i of refused) {
      expect(answers[i]!.body).toMatchObject({ error: 'rate_limited' });
      expect(answers[i]!.headers['retry-after']).toBe('1');
      await expectUnchanged(bounded, articles[i]!, before[i]!);
    }
  });
});

describe('large JSON answers', () => {
  // Parts are 256 Ki characters of the answer: with pairs packed back to back, one of the two
  // bodies puts a pair across each boundary, whatever the length of what precedes the body.
  it.each(['', 'x'])('arrive whole, chunked, surrogate pairs included (offset %j)', async (shift) => {
    const body = `${PROTECTED_BODY}<p>${shift}${'😀'.repeat(600_000)}</p><p>"quoted" back\\slash\ttab\nline\u2028</p>`;
    const written = await putRaw(JSON.stringify({ body }));
    expect(written.status).toBe(200);
    expect(written.headers['transfer-encoding']).toBe('chunked');
    expect((written.body as { data: { body: string } }).data.body).toBe(body);

    const read = await getArticle(h, a.articleId, a.customer.key);
    expect(read.status).toBe(200);
    expect(read.headers['content-length']).toBeUndefined();
    expect(read.text).not.toContain('\uFFFD');
    expect((read.body as { data: { body: string } }).data.body).toBe(body);
    // The body is escaped in parts between the rest of the answer: the text is what one JSON
    // serialisation of the whole answer gives, byte for byte.
    expect(read.text).toBe(JSON.stringify(read.body));
    expect(written.text).toBe(JSON.stringify(written.body));
  });

  it('a small answer keeps its Content-Length', async () => {
    await putRaw(JSON.stringify({ body: PROTECTED_BODY }));
    const read = await getArticle(h, a.articleId, a.customer.key);
    expect(read.headers['content-length']).toBe(String(Buffer.byteLength(read.text)));
  });
});

describe('large JSON request bodies over a socket', () => {
  // Read chunk by chunk into a buffer of the declared length (or joined, without one): a body
  // arriving in many pieces must be read whole, and one past the limit refused before it is read.
  let served: Harness;
  let article: SeededArticle;
  beforeAll(async () => {
    served = await startHarness({ listen: true });
    article = await seedArticle(served.services);
  });
  afterAll(() => served.close());

  /** PUTs `payload` in pieces of `piece` bytes, with a Content-Length unless `chunked`. */
  const putInPieces = (payload: Buffer, piece: number, chunked = false) =>
    new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
      const headers: Record<string, string> = { authorization: `Bearer ${article.customer.key}`, 'content-type': 'application/json' };
      if (!chunked) headers['content-length'] = String(payload.length);
      const request = httpRequest(new URL(`/api/v1/articles/${article.articleId}`, served.settings.publicUrl), { method: 'PUT', headers }, (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString()) }));
      });
      request.on('error', reject);
      for (let at = 0; at < payload.length; at += piece) request.write(payload.subarray(at, at + piece));
      request.end();
    });

  it.each([
    ['with a Content-Length', false],
    ['chunked, without one', true],
  ])('are read whole when sent in many pieces, %s', async (_, chunked) => {
    const body = `${largeBody}<p>${chunked ? 'chunked' : 'declared'}</p>`;
    const answer = await putInPieces(Buffer.from(JSON.stringify({ body })), 7_919, chunked);
    expect(answer.status).toBe(200);
    expect((await articleRow(served, article.articleId)).body).toBe(body);
  });

  it.each([
    ['with a Content-Length', false],
    ['chunked, without one', true],
  ])('past the 5 MiB limit are refused with 413 payload_too_large, %s, and change nothing', async (_, chunked) => {
    const before = await snapshot(served, article);
    const answer = await putInPieces(Buffer.from(JSON.stringify({ body: 'x'.repeat(5 * 1024 * 1024) })), 65_536, chunked);
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ error: 'payload_too_large' });
    await expectUnchanged(served, article, before);
  });

  it('cut short of their Content-Length (the client half-closes) are refused with 400 and change nothing', async () => {
    const before = await snapshot(served, article);
    const payload = Buffer.from(JSON.stringify({ body: `${largeBody}<p>cut short</p>` }));
    const { port } = new URL(served.settings.publicUrl);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `PUT /api/v1/articles/${article.articleId} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${article.customer.key}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${payload.length * 2}\r\n\r\n`,
        );
        socket.end(payload);
      });
      const parts: Buffer[] = [];
      socket.on('data', (part: Buffer) => parts.push(part));
      socket.on('close', () => resolve(Buffer.concat(parts).toString()));
      socket.on('error', reject);
    });
    // Node's HTTP parser sees the request end inside its body: the server's answer to a malformed request.
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"error":"invalid_json"');
    await expectUnchanged(served, article, before);
    expect((await getArticle(served, article.articleId, article.customer.key)).status).toBe(200);
  });
});
