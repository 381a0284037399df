import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { seedArticle } from '../helpers/write-fixtures.js';
import { csrfOf, InjectBrowser } from './browser.js';

/** Through HTTP: If-Match, key creation, the sign-in lock, the README's PATCH example. */

const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

const h = useHarness();

async function multipart(fields: Record<string, string | Buffer>): Promise<{ payload: Buffer; contentType: string }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, new Blob([new Uint8Array(value)], { type: 'image/png' }), 'cover.png');
  }
  const encoded = new Response(form);
  return { payload: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}

describe('If-Match', () => {
  it('without its quotes is a 422 naming the malformed header on every route that takes it, and nothing is saved', async () => {
    const a = await seedArticle(h.services);
    const auth = { authorization: `Bearer ${a.customer.key}` };
    const read = await h.app.inject({ url: `/api/v1/articles/${a.articleId}`, headers: auth });
    const etag = read.headers.etag as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    const bare = etag.slice(1, -1);
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#00f' } }).png().toBuffer();
    const form = await multipart({ image: png });

    const writes = [
      { method: 'PUT' as const, url: `/api/v1/articles/${a.articleId}`, type: 'application/json', payload: '{"body":"<p>New body.</p>"}' },
      { method: 'PATCH' as const, url: `/api/v1/articles/${a.articleId}`, type: 'application/json', payload: '{"title":"New title"}' },
      { method: 'POST' as const, url: `/api/v1/articles/${a.articleId}/featured-image`, type: 'application/json', payload: '{"url":"https://img.example/a.jpg"}' },
      { method: 'POST' as const, url: `/api/v1/articles/${a.articleId}/featured-image`, type: form.contentType, payload: form.payload },
    ];
    for (const value of [bare, `W/${bare}`, `"${bare}`, `${etag}, ${bare}`, 'a45-v1']) {
      for (const write of writes) {
        const response = await h.app.inject({ method: write.method, url: write.url, headers: { ...auth, 'content-type': write.type, 'if-match': value }, payload: write.payload });
        const context = `${write.method} ${write.url} If-Match: ${value}`;
        expect(response.statusCode, context).toBe(422);
        const error = response.json();
        expect(error.error, context).toBe('validation_failed');
        expect(error.fields['if-match'], context).toEqual([expect.stringContaining('If-Match header is malformed')]);
        expect(error.fields['if-match'][0]).toContain('double quotes');
      }
    }
    expect((await h.services.revisions.list(a.articleId)).length).toBe(1);
    const after = await h.app.inject({ url: `/api/v1/articles/${a.articleId}`, headers: auth });
    expect(after.headers.etag).toBe(etag);
    expect(after.body).toBe(read.body);

    // Quoted, the same tag holds; a stale quoted tag is still the 412.
    const stale = await h.app.inject({ method: 'PATCH', url: `/api/v1/articles/${a.articleId}`, headers: { ...auth, 'content-type': 'application/json', 'if-match': '"a0-v0"' }, payload: '{"title":"x"}' });
    expect(stale.statusCode).toBe(412);
    const saved = await h.app.inject({ method: 'PATCH', url: `/api/v1/articles/${a.articleId}`, headers: { ...auth, 'content-type': 'application/json', 'if-match': etag }, payload: '{"title":"New title"}' });
    expect(saved.statusCode).toBe(200);
    const star = await h.app.inject({ method: 'PATCH', url: `/api/v1/articles/${a.articleId}`, headers: { ...auth, 'content-type': 'application/json', 'if-match': '*' }, payload: '{"title":"Newer title"}' });
    expect(star.statusCode).toBe(200);
  });
});

describe('creating an API key in the UI (POST-redirect-GET)', () => {
  it('shows the new key once after the redirect; a reload creates no second key and shows it no more', async () => {
    const customer = await createCustomer(h.services);
    const browser = new InjectBrowser(h.app);
    await browser.signIn(customer.email);
    const before = await h.services.keys.list(customer.accountId);
    const page = await browser.get('/app/connect');
    const posted = await browser.post('/app/connect/keys', { _csrf: csrfOf(page.body), name: 'Widget' });
    expect(posted.statusCode).toBe(303);
    const location = posted.headers.location as string;
    expect(location).toMatch(/^\/app\/connect\?created=\d+$/);
    expect(posted.body).not.toMatch(/ak_[A-Za-z0-9]{40}/);

    // While the key waits for the next page, the database holds it only sealed.
    const rows = await h.services.db.kysely.selectFrom('sessions').select('flash').where('flash', 'is not', null).execute();
    expect(rows.length).toBeGreaterThan(0);

    const shown = await browser.get(location);
    expect(shown.statusCode).toBe(200);
    expect(shown.headers['cache-control']).toBe('no-store');
    const key = /id="new-key"[^>]*value="(ak_[A-Za-z0-9]{40})"/.exec(shown.body)?.[1];
    expect(key).toBeDefined();
    for (const row of rows) expect(row.flash).not.toContain(key!);
    expect((await h.app.inject({ url: '/api/v1/sites', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);

    // A reload of the page the browser is on: one key still, and its value is not shown again.
    const reloaded = await browser.get(location);
    expect(reloaded.statusCode).toBe(200);
    expect(reloaded.body).not.toContain(key!);
    expect(reloaded.body).toContain('Anchorage cannot show it again');
    const keys = await h.services.keys.list(customer.accountId);
    expect(keys.length).toBe(before.length + 1);
    expect(keys.filter((k) => k.name === 'Widget')).toHaveLength(1);
  });

  it('shows a key only to the session that created it', async () => {
    const customer = await createCustomer(h.services);
    const creator = new InjectBrowser(h.app);
    await creator.signIn(customer.email);
    const posted = await creator.post('/app/connect/keys', { _csrf: await creator.csrf('/app/connect'), name: 'Mine' });
    const other = new InjectBrowser(h.app);
    await other.signIn(customer.email);
    const elsewhere = await other.get(posted.headers.location as string);
    expect(elsewhere.statusCode).toBe(200);
    expect(elsewhere.body).not.toMatch(/id="new-key"/);
    const mine = await creator.get(posted.headers.location as string);
    expect(mine.body).toMatch(/id="new-key"[^>]*value="ak_[A-Za-z0-9]{40}"/);
  });
});

describe('sign-in lock', () => {
  it('after five failed sign-ins the page states the README’s one-minute lock and the wait Retry-After gives', async () => {
    expect(readme).toContain('| Failed UI sign-ins for one e-mail from one address | 5 within 15 minutes, then locked for 1 minute | 429 page: “Sign-in is locked for 1 minute; try again in N seconds” (N = `Retry-After`) |');
    const victim = await createCustomer(h.services);
    const browser = new InjectBrowser(h.app);
    for (let i = 0; i < 5; i += 1) {
      const failed = await browser.post('/app/sign-in', { _csrf: await browser.csrf(), email: victim.email, password: 'wrong password' });
      expect(failed.statusCode).toBe(401);
    }
    const locked = await browser.post('/app/sign-in', { _csrf: await browser.csrf(), email: victim.email, password: 'correct horse battery' });
    expect(locked.statusCode).toBe(429);
    const wait = Number(locked.headers['retry-after']);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect(locked.body).toContain(`Sign-in is locked for 1 minute; try again in ${wait} seconds.`);
  });
});

