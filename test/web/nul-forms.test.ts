import { beforeAll, describe, expect, it } from 'vitest';
import { apiGet, seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { csrfOf, etagOf, InjectBrowser } from './browser.js';

/**
 * U+0000 in any field of any form of the UI: refused with 422 naming the field, nothing saved.
 * PostgreSQL's text cannot hold it: the sign-in e-mail, the sign-up form and a share link's name
 * answered 500 there.
 */
describe('UI forms holding U+0000', () => {
  const h = useHarness({ env: { ALLOW_SIGNUP: 'true' } });
  let alice: Awaited<ReturnType<typeof createCustomer>>;
  let siteId: number;
  let articleId: number;
  let browser: InjectBrowser;

  beforeAll(async () => {
    alice = await createCustomer(h.services);
    const site = await seedSite(h.services, alice.email, { articles: [{ status: 'published', title: 'Article', body: '<p>Body.</p>' }] });
    siteId = site.siteId;
    articleId = site.articleIds[0]!;
    browser = new InjectBrowser(h.app);
    await browser.signIn(alice.email);
  });

  const expectRefused = (response: { statusCode: number; body: string }, field: string) => {
    expect(response.statusCode, field).toBe(422);
    expect(response.body).toContain(`<strong>${field}</strong>: Must not contain the character U+0000.`);
  };

  it('sign-in: refused, and the visitor stays signed out', async () => {
    for (const field of ['email', 'password']) {
      const visitor = new InjectBrowser(h.app);
      const token = await visitor.csrf('/app/sign-in');
      const form = { _csrf: token, email: alice.email, password: 'correct horse battery', next: '/app', [field]: `a\u0000${field === 'email' ? alice.email : 'b'}` };
      expectRefused(await visitor.post('/app/sign-in', form), field);
      expect((await visitor.get('/app')).statusCode).toBe(303);
    }
  });

  it('sign-up: refused, no account made', async () => {
    for (const field of ['email', 'account', 'password']) {
      const visitor = new InjectBrowser(h.app);
      const token = await visitor.csrf('/app/sign-up');
      const email = `nul-${field}@example.com`;
      const form = { _csrf: token, email, account: 'Account', password: 'a long enough password', [field]: field === 'email' ? `nul\u0000@example.com` : 'with\u0000nul' };
      expectRefused(await visitor.post('/app/sign-up', form), field);
      expect(await h.services.users.byEmail(email)).toBeUndefined();
    }
  });

  it('share links, report mail, API keys: refused, nothing made', async () => {
    const page = await browser.get(`/app/sites/${siteId}/shares`);
    const token = csrfOf(page.body);
    const shares = (await h.services.reportShares.list(alice.accountId, siteId)).length;
    expectRefused(await browser.post(`/app/sites/${siteId}/shares`, { _csrf: token, name: 'a\u0000b', days: '7' }), 'name');
    expectRefused(await browser.post(`/app/sites/${siteId}/shares`, { _csrf: token, name: 'ab', days: '7\u0000' }), 'days');
    expect(await h.services.reportShares.list(alice.accountId, siteId)).toHaveLength(shares);
    expectRefused(await browser.post(`/app/sites/${siteId}/subscriptions`, { _csrf: token, address: 'a\u0000@example.com' }), 'address');
    const keys = (await h.services.keys.list(alice.accountId)).length;
    expectRefused(await browser.post('/app/connect/keys', { _csrf: csrfOf((await browser.get('/app/connect')).body), name: 'with\u0000nul' }), 'name');
    expect(await h.services.keys.list(alice.accountId)).toHaveLength(keys);
  });

  it('the article editor: refused in any field, the body included, and nothing saved', async () => {
    const page = await browser.get(`/app/articles/${articleId}`);
    const current = (await apiGet(h.app, `/api/v1/articles/${articleId}`, alice.key)).body.data.body as string;
    const revisions = (await h.services.revisions.list(articleId)).length;
    for (const field of ['title', 'meta_description', 'body', 'reason']) {
      const form = { _csrf: csrfOf(page.body), etag: etagOf(page.body), title: 'New title', meta_description: 'Meta', body: `${current}<p>more</p>`, [field]: 'with\u0000nul' };
      expectRefused(await browser.post(`/app/articles/${articleId}`, form), field);
    }
    expect(await h.services.revisions.list(articleId)).toHaveLength(revisions);
  });

  it('a field given twice is refused when any of its values holds U+0000', async () => {
    const token = csrfOf((await browser.get('/app/connect')).body);
    const keys = (await h.services.keys.list(alice.accountId)).length;
    const response = await h.app.inject({
      method: 'POST',
      url: '/app/connect/keys',
      headers: { cookie: `anchorage_session=${browser.cookie}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${encodeURIComponent(token)}&name=fine&name=bad%00`,
    });
    expectRefused(response, 'name');
    expect(await h.services.keys.list(alice.accountId)).toHaveLength(keys);
  });
});
