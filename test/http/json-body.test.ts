import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { articleRow, expectUnchanged, PROTECTED_BODY, type SeededArticle, seedArticle, send, snapshot } from '../helpers/write-fixtures.js';

// JSON bodies of 1 MB or more are decoded and parsed in separate turns of the event loop
// (src/http/json-body.ts): they must be read, and refused, exactly as small ones are.

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
