import { beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, startHarness, useHarness } from '../helpers/harness.js';
import { seedSite } from '../helpers/fixtures.js';
import { csrfOf, etagOf, InjectBrowser, password } from './browser.js';

const protectedLink = '<a href="https://partner.example/guide" data-service-protected="backlink">partner guide</a>';
const body = `<p>Intro text.</p><p>Read the ${protectedLink} today.</p>`;

describe('UI security', () => {
  const h = useHarness();
  let alice: Awaited<ReturnType<typeof createCustomer>>;
  let bob: Awaited<ReturnType<typeof createCustomer>>;
  let staff: Awaited<ReturnType<typeof createCustomer>>;
  let aliceSite: { siteId: number; articleIds: number[] };
  let staffSite: { siteId: number; articleIds: number[] };

  beforeAll(async () => {
    alice = await createCustomer(h.services);
    bob = await createCustomer(h.services);
    staff = await createCustomer(h.services, { staff: true });
    aliceSite = await seedSite(h.services, alice.email, {
      name: 'Alice Bakery',
      website_url: 'https://alice.example',
      articles: [{ status: 'published', title: 'Alice article', published_at: '2026-11-02T09:00:00Z', body }],
      backlinks: [{ category: 'industry', acquired_at: '2026-11-03T10:00:00Z', source_domain: 'news.example' }],
    });
    staffSite = await seedSite(h.services, staff.email, {
      name: 'Staff own site',
      articles: [{ status: 'published', title: 'Staff article', published_at: '2026-11-02T09:00:00Z', body: '<p>staff</p>' }],
    });
  });

  it('sends signed-out visitors to sign in, and back afterwards', async () => {
    const browser = new InjectBrowser(h.app);
    const response = await browser.get(`/app/sites/${aliceSite.siteId}?month=2026-11`);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(`/app/sign-in?next=${encodeURIComponent(`/app/sites/${aliceSite.siteId}?month=2026-11`)}`);
    const token = await browser.csrf(response.headers.location as string);
    const signedIn = await browser.post('/app/sign-in', {
      _csrf: token,
      email: alice.email,
      password,
      next: `/app/sites/${aliceSite.siteId}?month=2026-11`,
    });
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers.location).toBe(`/app/sites/${aliceSite.siteId}?month=2026-11`);
    expect((await browser.get(signedIn.headers.location as string)).statusCode).toBe(200);
  });

  it('starts a new session id on sign-in, never one the visitor brought (no session fixation)', async () => {
    const browser = new InjectBrowser(h.app);
    await browser.get('/app/sign-in');
    expect(browser.cookie).toBeUndefined();
    const anonymous = 'x'.repeat(43);
    browser.cookie = anonymous;
    const response = await browser.signIn(alice.email);
    expect(response.statusCode).toBe(303);
    const signedIn = browser.cookie;
    expect(signedIn).toBeTruthy();
    expect(signedIn).not.toBe(anonymous);
    const cookie = response.cookies.find((c) => c.name === 'anchorage_session')!;
    expect(cookie.httpOnly).toBe(true);
    expect(String(cookie.sameSite).toLowerCase()).toBe('lax');
    expect((await browser.get('/app')).statusCode).toBe(200);

    // The cookie brought before sign-in signs nobody in.
    const stale = new InjectBrowser(h.app);
    stale.cookie = anonymous;
    const again = await stale.get('/app');
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toMatch(/^\/app\/sign-in/);
  });

  it('slows sign-in down after 5 failures (429), even with the right password', async () => {
    const victim = await createCustomer(h.services);
    const browser = new InjectBrowser(h.app);
    for (let i = 0; i < 5; i += 1) {
      const token = await browser.csrf();
      const failed = await browser.post('/app/sign-in', { _csrf: token, email: victim.email, password: 'wrong password' });
      expect(failed.statusCode).toBe(401);
    }
    const token = await browser.csrf();
    const blocked = await browser.post('/app/sign-in', { _csrf: token, email: victim.email, password });
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.body).toContain('Too many failed sign-ins');
    expect(blocked.body).toContain(`try again in ${blocked.headers['retry-after']} seconds`);
  });

  it('refuses every form without the session’s CSRF token, and changes nothing', async () => {
    const browser = new InjectBrowser(h.app);
    await browser.signIn(alice.email);
    const articleId = aliceSite.articleIds[0]!;
    const before = await h.services.articles.visible({ ...actorOf(alice), staff: false }, articleId);
    const keysBefore = await h.services.keys.list(alice.accountId);
    const revisions = await h.services.revisions.list(articleId);

    const forms: [string, Record<string, string>][] = [
      [`/app/articles/${articleId}`, { title: 'Hijacked', meta_description: '', body: '<p>x</p>', etag: '' }],
      [`/app/articles/${articleId}/revisions/${revisions[0]!.number}/restore`, {}],
      ['/app/connect/keys', { name: 'Hijack key' }],
      [`/app/connect/keys/${alice.keyId}/revoke`, {}],
      ['/app/sign-out', {}],
    ];
    for (const [url, form] of forms) {
      for (const token of [undefined, 'not-the-token']) {
        const response = await browser.post(url, token === undefined ? form : { ...form, _csrf: token });
        expect(response.statusCode, `${url} with ${token ?? 'no token'}`).toBe(403);
        expect(response.headers['content-type']).toMatch(/text\/html/);
        expect(response.body).toContain('did not come from this site');
      }
    }
    // Sign-in itself needs the token too.
    const anonymous = new InjectBrowser(h.app);
    await anonymous.get('/app/sign-in');
    expect((await anonymous.post('/app/sign-in', { email: alice.email, password })).statusCode).toBe(403);

    const after = await h.services.articles.visible({ ...actorOf(alice), staff: false }, articleId);
    expect(after.title).toBe(before.title);
    expect(after.version).toBe(before.version);
    expect(await h.services.keys.list(alice.accountId)).toEqual(keysBefore);
    expect((await browser.get('/app')).statusCode).toBe(200); // still signed in
  });

  it('sign-up needs the CSRF token too (when open)', async () => {
    const open = await startHarness({ env: { ALLOW_SIGNUP: 'true' } });
    try {
      const browser = new InjectBrowser(open.app);
      await browser.get('/app/sign-up');
      const refused = await browser.post('/app/sign-up', { email: 'new@example.test', password: 'a long password 1' });
      expect(refused.statusCode).toBe(403);
      expect(await open.services.users.byEmail('new@example.test')).toBeUndefined();
    } finally {
      await open.close();
    }
  });

  it('never shows another account’s site, article, revisions or exports (404 page)', async () => {
    const browser = new InjectBrowser(h.app);
    await browser.signIn(bob.email);
    const articleId = aliceSite.articleIds[0]!;
    const urls = [
      `/app/sites/${aliceSite.siteId}`,
      `/app/sites/${aliceSite.siteId}?month=2026-11`,
      `/app/sites/${aliceSite.siteId}/articles.csv?month=2026-11`,
      `/app/sites/${aliceSite.siteId}/backlinks.csv?month=2026-11`,
      `/app/articles/${articleId}`,
      `/app/articles/${articleId}/revisions`,
      `/app/articles/${articleId}/revisions/diff?a=1&b=2`,
    ];
    for (const url of urls) {
      const response = await browser.get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.headers['content-type']).toMatch(/text\/html/);
      expect(response.body).not.toContain('Alice');
    }
    const sites = await browser.get('/app');
    expect(sites.body).not.toContain('Alice Bakery');

    // Writing is refused the same way, and nothing changes.
    const token = csrfOf(sites.body);
    const edit = await browser.post(`/app/articles/${articleId}`, { _csrf: token, title: 'Bob was here', meta_description: '', body, etag: '' });
    expect(edit.statusCode).toBe(404);
    const revisions = await h.services.revisions.list(articleId);
    const restore = await browser.post(`/app/articles/${articleId}/revisions/${revisions[0]!.number}/restore`, { _csrf: token });
    expect(restore.statusCode).toBe(404);
    for (const id of [alice.keyId, 999_999_999]) {
      const revoke = await browser.post(`/app/connect/keys/${id}/revoke`, { _csrf: token });
      expect(revoke.statusCode).toBe(404);
      expect(revoke.headers.location).toBeUndefined();
    }
    expect((await h.services.keys.list(alice.accountId)).find((k) => k.id === alice.keyId)?.revoked_at).toBeNull();
    const article = await h.services.db.kysely.selectFrom('articles').select('title').where('id', '=', articleId).executeTakeFirstOrThrow();
    expect(article.title).toBe('Alice article');
  });

  it('lets staff view every account, read-only', async () => {
    const browser = new InjectBrowser(h.app);
    await browser.signIn(staff.email);
    const overview = await browser.get('/app/staff');
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain(alice.email);
    expect(overview.body).toContain(`/app/staff/accounts/${alice.accountId}`);
    const account = await browser.get(`/app/staff/accounts/${alice.accountId}`);
    expect(account.body).toContain('Alice Bakery');

    // Own sites only on the home page.
    const home = await browser.get('/app');
    expect(home.body).toContain('Staff own site');
    expect(home.body).not.toContain('Alice Bakery');
    expect(home.body).toContain('href="/app/staff"');

    const report = await browser.get(`/app/sites/${aliceSite.siteId}?month=2026-11`);
    expect(report.statusCode).toBe(200);
    expect(report.body).toContain('Staff view, read-only');
    const articleId = aliceSite.articleIds[0]!;
    const article = await browser.get(`/app/articles/${articleId}`);
    expect(article.statusCode).toBe(200);
    expect(article.body).toContain('Editing is disabled');
    expect(article.body).toMatch(/<fieldset disabled>/);
    const revisionsPage = await browser.get(`/app/articles/${articleId}/revisions`);
    expect(revisionsPage.statusCode).toBe(200);

    const token = csrfOf(article.body);
    const edit = await browser.post(`/app/articles/${articleId}`, {
      _csrf: token,
      title: 'Staff edit',
      meta_description: '',
      body,
      etag: etagOf(article.body),
    });
    expect(edit.statusCode).toBe(403);
    const revisions = await h.services.revisions.list(articleId);
    const restore = await browser.post(`/app/articles/${articleId}/revisions/${revisions[0]!.number}/restore`, { _csrf: token });
    expect(restore.statusCode).toBe(403);
    expect((await h.services.revisions.list(articleId)).length).toBe(revisions.length);

    // Their own account's articles they edit like anyone else.
    const own = await browser.get(`/app/articles/${staffSite.articleIds[0]}`);
    expect(own.body).not.toContain('Editing is disabled');
    const saved = await browser.post(`/app/articles/${staffSite.articleIds[0]}`, {
      _csrf: token,
      title: 'Staff article, edited',
      meta_description: '',
      body: '<p>staff</p>',
      etag: etagOf(own.body),
    });
    expect(saved.statusCode).toBe(303);
  });

  it('keeps the staff overview from customers (403 page)', async () => {
    const browser = new InjectBrowser(h.app);
    await browser.signIn(bob.email);
    const response = await browser.get('/app/staff');
    expect(response.statusCode).toBe(403);
    expect(response.body).toContain('staff only');
    expect((await browser.get(`/app/staff/accounts/${alice.accountId}`)).statusCode).toBe(403);
    const home = await browser.get('/app');
    expect(home.body).not.toContain('href="/app/staff"');
  });

  it('serves every page with a CSP that allows no inline script or style', async () => {
    const browser = new InjectBrowser(h.app);
    await browser.signIn(alice.email);
    for (const url of ['/app/sign-in', '/app', `/app/sites/${aliceSite.siteId}`, `/app/articles/${aliceSite.articleIds[0]}`, '/app/connect', '/app/activity']) {
      const response = await browser.get(url);
      const csp = String(response.headers['content-security-policy']);
      expect(csp, url).toContain("script-src 'self'");
      expect(csp, url).toContain("style-src 'self'");
      expect(csp, url).not.toContain('unsafe-inline');
      expect(csp, url).toContain("frame-ancestors 'none'");
      // No inline scripts, handlers or style attributes in our markup.
      expect(response.body, url).not.toMatch(/<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")[^>]*>/);
      expect(response.body, url).not.toMatch(/\son[a-z]+="/);
      expect(response.body, url).not.toMatch(/\sstyle="/);
    }
  });
});

function actorOf(customer: { accountId: number; userId: number }) {
  return {
    accountId: customer.accountId,
    userId: customer.userId,
    credential: { kind: 'session' as const },
    channel: 'editor' as const,
    staff: false,
    scopes: ['read', 'write'] as const,
    request: null,
  };
}
