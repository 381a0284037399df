import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { type Harness, useHarness } from '../helpers/harness.js';
import { newKey, type SeededArticle, seedArticle, send, setEditCount } from '../helpers/write-fixtures.js';

// An upload the service refuses stores nothing and serves nothing new,
// whichever check refuses it, with either media store.

let counter = 0;
/** A PNG no other test uploads (its bytes, hence its name, are new). */
const freshPng = () => sharp({ create: { width: 8 + (counter++ % 50), height: 9, channels: 3, background: { r: counter % 256, g: 7, b: 99 } } }).png().toBuffer();
const nameOf = (bytes: Buffer) => `${createHash('sha256').update(bytes).digest('hex')}.png`;

async function form(parts: ({ name: string; value: string } | { name: string; file: Buffer })[]) {
  const body = new FormData();
  for (const part of parts) {
    if ('file' in part) body.append(part.name, new Blob([new Uint8Array(part.file)], { type: 'image/png' }), 'x.png');
    else body.append(part.name, part.value);
  }
  const encoded = new Response(body);
  return { payload: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}

async function upload(h: Harness, articleId: number, key: string, image: Buffer, headers: Record<string, string> = {}, extra: { name: string; value: string }[] = []) {
  const { payload, contentType } = await form([{ name: 'image', file: image }, ...extra]);
  return send(h.app, 'POST', `/api/v1/articles/${articleId}/featured-image`, key, undefined, {
    payload,
    headers: { 'content-type': contentType, ...headers },
  });
}

describe.each(['fs', 'db'] as const)('MEDIA_STORE=%s: a refused upload is not kept', (store) => {
  const h = useHarness({ env: { MEDIA_STORE: store } });

  /** Everything the media store holds: files under DATA_DIR/media and rows of the media table. */
  async function mediaStore() {
    const dir = join(h.settings.dataDir, 'media');
    const files = existsSync(dir) ? readdirSync(dir).sort() : [];
    const rows = (await h.services.db.kysely.selectFrom('media').select('key').orderBy('key').execute()).map((r) => r.key);
    return { files, rows };
  }

  async function expectNothingStored(image: Buffer, refuse: () => Promise<{ status: number; body: unknown }>, status: number, error: string) {
    const before = await mediaStore();
    const res = await refuse();
    expect(res.status).toBe(status);
    expect((res.body as { error: string }).error).toBe(error);
    expect(await mediaStore()).toEqual(before);
    expect((await h.app.inject({ method: 'GET', url: `/media/${nameOf(image)}` })).statusCode).toBe(404);
  }

  it('stores an accepted upload (the control: the listing sees a new image)', async () => {
    const a = await seedArticle(h.services);
    const image = await freshPng();
    const before = await mediaStore();
    const res = await upload(h, a.articleId, a.customer.key, image);
    expect(res.status).toBe(200);
    const after = await mediaStore();
    if (store === 'fs') expect(after.files).toEqual([...before.files, nameOf(image)].sort());
    else expect(after.rows).toEqual([...before.rows, nameOf(image)].sort());
    expect((await h.app.inject({ method: 'GET', url: `/media/${nameOf(image)}` })).statusCode).toBe(200);
  });

  it('to a missing article: 404', async () => {
    const a = await seedArticle(h.services);
    const image = await freshPng();
    await expectNothingStored(image, () => upload(h, 2_000_000_000, a.customer.key, image), 404, 'not_found');
  });

  it('to another account’s article: 404', async () => {
    const a = await seedArticle(h.services);
    const other = await seedArticle(h.services);
    const image = await freshPng();
    await expectNothingStored(image, () => upload(h, other.articleId, a.customer.key, image), 404, 'not_found');
  });

  it('with a stale If-Match: 412', async () => {
    const a = await seedArticle(h.services);
    const image = await freshPng();
    await expectNothingStored(image, () => upload(h, a.articleId, a.customer.key, image, { 'if-match': '"stale"' }), 412, 'precondition_failed');
  });

  it('with a read-only key: 403', async () => {
    const a = await seedArticle(h.services);
    const readOnly = await newKey(h.services, a.customer.userId, true);
    const image = await freshPng();
    await expectNothingStored(image, () => upload(h, a.articleId, readOnly.key, image), 403, 'insufficient_scope');
  });

  it('over the daily edit allowance: 429', async () => {
    const a: SeededArticle = await seedArticle(h.services);
    await setEditCount(h, a.customer.accountId, 200);
    const image = await freshPng();
    await expectNothingStored(image, () => upload(h, a.articleId, a.customer.key, image), 429, 'edit_limit_exceeded');
  });

  it('with a field the operation does not take: 422', async () => {
    const a = await seedArticle(h.services);
    const image = await freshPng();
    await expectNothingStored(image, () => upload(h, a.articleId, a.customer.key, image, {}, [{ name: 'colour', value: 'red' }]), 422, 'validation_failed');
  });

  it('with both image and url: 422', async () => {
    const a = await seedArticle(h.services);
    const image = await freshPng();
    await expectNothingStored(image, () => upload(h, a.articleId, a.customer.key, image, {}, [{ name: 'url', value: 'https://img.example/x.png' }]), 422, 'validation_failed');
  });

  it('reusing an Idempotency-Key for another request: 422', async () => {
    const a = await seedArticle(h.services);
    const headers = { 'idempotency-key': `k-${store}-reuse` };
    const first = await send(h.app, 'POST', `/api/v1/articles/${a.articleId}/featured-image`, a.customer.key, { url: 'https://img.example/first.jpg' }, { headers });
    expect(first.status).toBe(200);
    const image = await freshPng();
    await expectNothingStored(image, () => upload(h, a.articleId, a.customer.key, image, headers), 422, 'idempotency_key_reused');
  });
});
