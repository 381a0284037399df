import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { runInBrowser, signInThroughForm, useBrowser } from '../helpers/chromium.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { password } from './browser.js';

/** The site page's search box, the results, and "Replace…" with its preview, in Chromium. */
describe.skipIf(!runInBrowser)('search and replace in a browser', () => {
  const h = useHarness({ listen: true });
  const browser = useBrowser({ viewport: { width: 1280, height: 1000 } });
  let base: string;
  let page: Page;
  let key: string;
  let siteId: number;
  let articleIds: number[];

  beforeAll(async () => {
    page = browser.page;
    base = h.settings.publicUrl;
    const customer = await createCustomer(h.services);
    key = customer.key;
    const month = h.clock.now().toISOString().slice(0, 7);
    ({ siteId, articleIds } = await seedSite(h.services, customer.email, {
      name: 'Corner Bakery',
      articles: [
        { status: 'published', title: 'Opening hours', published_at: `${month}-01T09:00:00Z`, body: '<p>Call 555-0100 to order.</p>' },
        { status: 'published', title: 'Cakes', published_at: `${month}-02T09:00:00Z`, body: '<p>Cakes: call 555-0100, or 555-0100.</p>' },
      ],
    }));
    await signInThroughForm(page, base, customer.email, password);
  }, 120_000);

  it('searches from the site page, previews the replacement, then applies it', async () => {
    await page.goto(`${base}/app/sites/${siteId}`);
    await page.getByRole('searchbox', { name: 'Find in articles' }).fill('555-0100');
    await page.getByRole('button', { name: 'Find in articles' }).click();
    await page.waitForURL(/\/search\?q=555-0100/);
    await expect.poll(() => page.locator('#results-h').textContent()).toBe('2 articles with “555-0100”');
    expect(await page.locator('tr[data-article-id] mark').count()).toBe(3);

    await page.getByLabel('Replace with').fill('555-0199');
    await page.getByLabel('Reason (kept with each revision)').fill('New number');
    await page.getByRole('button', { name: 'Preview replacement' }).click();
    await expect.poll(() => page.locator('#preview-h').textContent()).toBe('Preview: 3 occurrences in 2 articles become “555-0199”');
    const unchanged = await fetch(`${base}/api/v1/articles/${articleIds[1]}`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await unchanged.json()) as { data: { body: string } }).data.body).toContain('555-0100');

    await page.getByRole('button', { name: 'Replace in 2 articles' }).click();
    await page.waitForURL(/replaced=2/);
    expect(await page.locator('.notice').first().textContent()).toContain('Replaced in 2 articles');
    expect(await page.locator('#results-h').textContent()).toBe('0 articles with “555-0100”');
    const changed = await fetch(`${base}/api/v1/articles/${articleIds[1]}`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await changed.json()) as { data: { body: string } }).data.body).toBe('<p>Cakes: call 555-0199, or 555-0199.</p>');
    const revision = await h.services.db.kysely.selectFrom('revisions').select(['origin', 'reason']).where('article_id', '=', articleIds[1]!).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(revision).toEqual({ origin: 'editor', reason: 'New number' });
    expect(browser.problems).toEqual([]);
  });

  it('says why a query is refused', async () => {
    const response = await page.goto(`${base}/app/sites/${siteId}/search?q=ab`);
    expect(response?.status()).toBe(422);
    expect(await page.locator('.notice').first().textContent()).toContain('At least 3 characters');
  });
});
