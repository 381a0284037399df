import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import {
  articleRow,
  expectUnchanged,
  revisionsOf,
  type SeededArticle,
  seedArticle,
  send,
  snapshot,
} from '../helpers/write-fixtures.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
});

const PUBLIC_URL = 'http://localhost:3999';

type Part = { name: string; value: string } | { name: string; file: Buffer; filename: string; type?: string };

/** A multipart/form-data body as a browser or curl would send it. */
async function multipart(parts: Part[]): Promise<{ payload: Buffer; contentType: string }> {
  const form = new FormData();
  for (const part of parts) {
    if ('file' in part) form.append(part.name, new Blob([new Uint8Array(part.file)], { type: part.type ?? 'application/octet-stream' }), part.filename);
    else form.append(part.name, part.value);
  }
  const encoded = new Response(form);
  return { payload: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}

async function postForm(harness: Harness, a: SeededArticle, parts: Part[], headers: Record<string, string> = {}) {
  const { payload, contentType } = await multipart(parts);
  return send(harness.app, 'POST', `/api/v1/articles/${a.articleId}/featured-image`, a.customer.key, undefined, {
    payload,
    headers: { 'content-type': contentType, ...headers },
  });
}

const postJson = (harness: Harness, a: SeededArticle, body: unknown) =>
  send(harness.app, 'POST', `/api/v1/articles/${a.articleId}/featured-image`, a.customer.key, body);

const solid = (width = 24, height = 16) => sharp({ create: { width, height, channels: 3, background: '#f00' } });

/** Random pixels: they do not compress, so the file size follows the pixel count. */
const noise = (width: number, height: number) =>
  sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function avifOrSkip(): Promise<Buffer | undefined> {
  try {
    return await solid().avif().toBuffer();
  } catch {
    return undefined;
  }
}

describe('replaceFeaturedImage with JSON', () => {
  it('sets the URL: 200 with the Article (no body), a revision, an ETag', async () => {
    const a = await seedArticle(h.services);
    const res = await postJson(h, a, { url: 'https://images.example.com/new-cover.jpg', reason: 'New cover' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: {
        id: a.articleId,
        site_id: a.siteId,
        title: 'Original title',
        url: 'https://site.example/article',
        status: 'published',
        published_at: '2026-10-01T09:00:00Z',
        target_keyword: 'setup guide',
        word_count: 22,
        featured_image_url: 'https://images.example.com/new-cover.jpg',
      },
    });
    expect(res.headers.etag).toMatch(/^".+"$/);
    expect((await articleRow(h, a.articleId)).featured_image_url).toBe('https://images.example.com/new-cover.jpg');
    const revisions = await revisionsOf(h, a.articleId);
    expect(revisions).toHaveLength(2);
    expect(revisions[1]).toMatchObject({
      featured_image_url: 'https://images.example.com/new-cover.jpg',
      title: 'Original title',
      origin: 'api',
      api_key_id: a.customer.keyId,
      reason: 'New cover',
    });
  });

  it.each([
    ['no url', {}, 'url'],
    ['url null', { url: null }, 'url'],
    ['javascript: URL', { url: 'javascript:alert(1)' }, 'url'],
    ['data: URL', { url: 'data:image/png;base64,iVBORw0KGgo=' }, 'url'],
    ['ftp URL', { url: 'ftp://x.example/a.jpg' }, 'url'],
    ['relative URL', { url: '/x.jpg' }, 'url'],
    ['protocol-relative URL', { url: '//x.example/a.jpg' }, 'url'],
    ['not a URL', { url: 'cover.jpg' }, 'url'],
    ['URL with a space', { url: 'https://x.example/a b.jpg' }, 'url'],
    ['URL with U+0000', { url: 'https://x.example/a\u0000.jpg' }, 'url'],
    ['reason too long', { url: 'https://x.example/a.jpg', reason: 'r'.repeat(2001) }, 'reason'],
  ])('refuses %s with 422 validation_failed, saving nothing', async (_name, body, field) => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const res = await postJson(h, a, body);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'validation_failed', message: expect.any(String), fields: { [field]: expect.any(Array) } });
    await expectUnchanged(h, a, before);
  });
});

describe('replaceFeaturedImage with an upload', () => {
  const formats: [string, string, string, () => Promise<Buffer | undefined>][] = [
    ['PNG', 'png', 'image/png', () => solid().png().toBuffer()],
    ['JPEG', 'jpg', 'image/jpeg', () => solid().jpeg().toBuffer()],
    ['WebP', 'webp', 'image/webp', () => solid().webp().toBuffer()],
    ['GIF', 'gif', 'image/gif', () => solid().gif().toBuffer()],
    ['AVIF', 'avif', 'image/avif', avifOrSkip],
  ];

  it.each(formats)('%s: stored content-addressed under PUBLIC_URL/media and served byte-identical, immutable', async (name, extension, contentType, make) => {
    const image = await make();
    if (image === undefined) {
      console.warn(`SKIPPED: this sharp build cannot encode ${name}; the ${name} upload is not tested.`);
      return;
    }
    const a = await seedArticle(h.services);
    // The file name and declared type are ignored: the content decides.
    const res = await postForm(h, a, [
      { name: 'image', file: image, filename: 'upload.bin', type: 'application/octet-stream' },
      { name: 'reason', value: `${name} upload` },
    ]);
    expect(res.status, res.text).toBe(200);
    const expectedUrl = `${PUBLIC_URL}/media/${sha256(image)}.${extension}`;
    expect(res.body.data.featured_image_url).toBe(expectedUrl);
    expect(res.body.data).not.toHaveProperty('body');
    expect((await articleRow(h, a.articleId)).featured_image_url).toBe(expectedUrl);
    const revisions = await revisionsOf(h, a.articleId);
    expect(revisions).toHaveLength(2);
    expect(revisions[1]).toMatchObject({ featured_image_url: expectedUrl, reason: `${name} upload`, origin: 'api' });

    const served = await h.app.inject({ method: 'GET', url: new URL(expectedUrl).pathname });
    expect(served.statusCode).toBe(200);
    expect(served.rawPayload.equals(image)).toBe(true);
    expect(served.headers['content-type']).toBe(contentType);
    expect(String(served.headers['cache-control'])).toContain('immutable');
    expect(String(served.headers['cache-control'])).toMatch(/max-age=\d{7,}/);
    expect(served.headers['x-content-type-options']).toBe('nosniff');

    // The fs store (the default) keeps it under DATA_DIR/media.
    const file = join(h.settings.dataDir, 'media', `${sha256(image)}.${extension}`);
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file).equals(image)).toBe(true);
  });

  it('unknown media names are 404', async () => {
    const res = await h.app.inject({ method: 'GET', url: `/media/${'0'.repeat(64)}.png` });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBe('not_found');
    expect((await h.app.inject({ method: 'GET', url: '/media/..%2Fanchorage.sqlite' })).statusCode).toBe(404);
  });

  it('multipart with a url (and no image) sets that URL', async () => {
    const a = await seedArticle(h.services);
    const res = await postForm(h, a, [{ name: 'url', value: 'https://images.example.com/form.jpg' }]);
    expect(res.status).toBe(200);
    expect(res.body.data.featured_image_url).toBe('https://images.example.com/form.jpg');
  });

  it.each([
    ['a text file named x.png', async () => ({ file: Buffer.from('this is not an image at all, just text\n'), filename: 'x.png', type: 'image/png' })],
    ['an SVG', async () => ({ file: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>'), filename: 'x.svg', type: 'image/svg+xml' })],
    ['a TIFF', async () => ({ file: await solid().tiff().toBuffer(), filename: 'x.png', type: 'image/png' })],
    ['a truncated PNG', async () => ({ file: (await solid().png().toBuffer()).subarray(0, 40), filename: 'x.png', type: 'image/png' })],
    ['an HTML file', async () => ({ file: Buffer.from('<!doctype html><script>alert(1)</script>'), filename: 'x.gif', type: 'image/gif' })],
  ])('%s is 422 unsupported_image, nothing saved or stored', async (_name, make) => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const { file, filename, type } = await make();
    const res = await postForm(h, a, [{ name: 'image', file, filename, type }]);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'unsupported_image', message: expect.any(String) });
    await expectUnchanged(h, a, before);
    expect(existsSync(join(h.settings.dataDir, 'media', `${sha256(file)}.png`))).toBe(false);
  });

  it('multipart must carry exactly one of image or url (422), once each, and no other field', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const png = await solid().png().toBuffer();
    const cases: [string, Part[], string][] = [
      ['both', [{ name: 'image', file: png, filename: 'a.png' }, { name: 'url', value: 'https://x.example/a.jpg' }], 'url'],
      ['neither', [{ name: 'reason', value: 'nothing' }], 'image'],
      ['two images', [{ name: 'image', file: png, filename: 'a.png' }, { name: 'image', file: png, filename: 'b.png' }], 'image'],
      ['two urls', [{ name: 'url', value: 'https://x.example/a.jpg' }, { name: 'url', value: 'https://x.example/b.jpg' }], 'url'],
      ['file in another field', [{ name: 'photo', file: png, filename: 'a.png' }], 'photo'],
      ['unknown field', [{ name: 'url', value: 'https://x.example/a.jpg' }, { name: 'title', value: 'x' }], 'title'],
      ['bad url', [{ name: 'url', value: 'javascript:alert(1)' }], 'url'],
    ];
    for (const [name, parts, field] of cases) {
      const res = await postForm(h, a, parts);
      expect(res.status, name).toBe(422);
      expect(res.body.error, name).toBe('validation_failed');
      expect(Object.keys(res.body.fields), name).toContain(field);
    }
    await expectUnchanged(h, a, before);
  });

  it('a malformed multipart body is 400, not a server error', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    for (const [contentType, payload] of [
      ['multipart/form-data', 'no boundary given'],
      ['multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-data; name="url"\r\n\r\nhttps://x.example/a.jpg'],
    ]) {
      const res = await send(h.app, 'POST', `/api/v1/articles/${a.articleId}/featured-image`, a.customer.key, undefined, {
        payload: payload!,
        headers: { 'content-type': contentType! },
      });
      expect(res.status, contentType).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_json', message: expect.any(String) });
    }
    await expectUnchanged(h, a, before);
  });

  it('more than 40 megapixels is 422 image_too_large (a small file); exactly 40 MP is accepted', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const huge = await solid(8000, 6000).png({ compressionLevel: 9 }).toBuffer();
    expect(huge.length).toBeLessThan(h.settings.maxImageBytes);
    const res = await postForm(h, a, [{ name: 'image', file: huge, filename: 'huge.png' }]);
    expect(res.status).toBe(422);
    // `limit` is in the unit the message names: pixels.
    expect(res.body).toEqual({ error: 'image_too_large', message: expect.stringContaining('40000000 pixels'), limit: 40_000_000 });
    await expectUnchanged(h, a, before);

    const atLimit = await solid(8000, 5000).png({ compressionLevel: 9 }).toBuffer();
    const ok = await postForm(h, a, [{ name: 'image', file: atLimit, filename: 'limit.png' }]);
    expect(ok.status).toBe(200);
  });

  it('a multipart body over 12 MiB is 413 payload_too_large', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const res = await postForm(h, a, [{ name: 'image', file: Buffer.alloc(12 * 1024 * 1024 + 1024, 7), filename: 'big.png' }]);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'payload_too_large', message: expect.any(String) });
    await expectUnchanged(h, a, before);
  });

  it('a file over MAX_IMAGE_BYTES (10 MiB by default) but under 12 MiB is 422 image_too_large with the limit', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    expect(h.settings.maxImageBytes).toBe(10 * 1024 * 1024);
    const res = await postForm(h, a, [{ name: 'image', file: Buffer.alloc(11 * 1024 * 1024, 7), filename: 'big.png' }]);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'image_too_large', message: expect.any(String), limit: 10 * 1024 * 1024 });
    await expectUnchanged(h, a, before);
  });

  it('a JSON body over 5 MiB is 413 payload_too_large', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const res = await postJson(h, a, { url: `https://x.example/${'a'.repeat(5 * 1024 * 1024)}.jpg` });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'payload_too_large', message: expect.any(String) });
    await expectUnchanged(h, a, before);
  });
});

describe('MAX_IMAGE_BYTES setting', () => {
  let small: Harness;
  beforeAll(async () => {
    small = await startHarness({ env: { MAX_IMAGE_BYTES: '2000' } });
  });
  afterAll(async () => {
    await small?.close();
  });

  it('an image over the setting is 422 image_too_large with limit = 2000; a smaller one is accepted', async () => {
    const a = await seedArticle(small.services);
    const before = await snapshot(small, a);
    const big = await noise(40, 40);
    expect(big.length).toBeGreaterThan(2000);
    const res = await postForm(small, a, [{ name: 'image', file: big, filename: 'noise.png' }]);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'image_too_large', message: expect.any(String), limit: 2000 });
    await expectUnchanged(small, a, before);

    const tiny = await solid(4, 4).png().toBuffer();
    expect(tiny.length).toBeLessThanOrEqual(2000);
    expect((await postForm(small, a, [{ name: 'image', file: tiny, filename: 'tiny.png' }])).status).toBe(200);
  });
});

describe('MEDIA_STORE=db', () => {
  let dbStore: Harness;
  beforeAll(async () => {
    dbStore = await startHarness({ env: { MEDIA_STORE: 'db' } });
  });
  afterAll(async () => {
    await dbStore?.close();
  });

  it('stores the bytes in the media table and serves them from there (no file on disk)', async () => {
    const a = await seedArticle(dbStore.services);
    const image = await solid(30, 20).webp().toBuffer();
    const res = await postForm(dbStore, a, [{ name: 'image', file: image, filename: 'x.webp' }]);
    expect(res.status).toBe(200);
    const name = `${sha256(image)}.webp`;
    expect(res.body.data.featured_image_url).toBe(`${PUBLIC_URL}/media/${name}`);

    const rows = await dbStore.services.db.kysely.selectFrom('media').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key).toBe(name);
    expect(rows[0]!.content_type).toBe('image/webp');
    expect(Buffer.from(rows[0]!.bytes).equals(image)).toBe(true);
    expect(existsSync(join(dbStore.settings.dataDir, 'media', name))).toBe(false);

    const served = await dbStore.app.inject({ method: 'GET', url: `/media/${name}` });
    expect(served.statusCode).toBe(200);
    expect(served.rawPayload.equals(image)).toBe(true);
    expect(served.headers['content-type']).toBe('image/webp');
    expect(String(served.headers['cache-control'])).toContain('immutable');

    // The same image again is the same name: one row.
    const b = await seedArticle(dbStore.services);
    expect((await postForm(dbStore, b, [{ name: 'image', file: image, filename: 'again.webp' }])).status).toBe(200);
    expect(await dbStore.services.db.kysely.selectFrom('media').select('key').execute()).toHaveLength(1);
  });
});
