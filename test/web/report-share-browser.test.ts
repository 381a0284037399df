import { beforeAll, describe, expect, it } from 'vitest';
import { runInBrowser, useBrowser } from '../helpers/chromium.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';

/** A share link in Chromium: the report with its charts under the UI's CSP, no way into the app. */
describe.skipIf(!runInBrowser)('a report share link in Chromium', () => {
  const h = useHarness({ listen: true });
  const browser = useBrowser();
  let base: string;
  let token: string;

  beforeAll(async () => {
    base = h.settings.publicUrl;
    const owner = await createCustomer(h.services);
    const month = h.clock.now().toISOString().slice(0, 7);
    const { siteId } = await seedSite(h.services, owner.email, {
      name: 'Browser Bakery',
      website_url: 'https://browser-bakery.example',
      articles: [{ status: 'published', title: 'Shared in the browser', published_at: `${month}-01T09:00:00Z` }],
      backlinks: [{ category: 'local', acquired_at: `${month}-01T09:00:00Z`, source_url: 'https://town.example/', anchor_text: 'browser anchor' }],
    });
    const site = await h.services.db.kysely.selectFrom('sites').selectAll().where('id', '=', siteId).executeTakeFirstOrThrow();
    token = (await h.services.reportShares.create(site, owner.userId, { name: 'Browser', days: 30 })).token;
  }, 120_000);

  it('draws the report and its charts without a console error, with no link into the app', async () => {
    const { page } = browser;
    const response = await page.goto(`${base}/share/${token}`);
    expect(response?.status()).toBe(200);
    await expect.poll(() => page.evaluate(() => document.querySelectorAll('canvas[data-chart]').length)).toBe(2);
    // Chart.js draws into each canvas: its pixels are no longer all transparent.
    await expect
      .poll(() =>
        page.evaluate(() =>
          [...document.querySelectorAll<HTMLCanvasElement>('canvas[data-chart]')].every((canvas) => {
            const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
            return pixels.some((value, i) => i % 4 === 3 && value > 0);
          }),
        ),
      )
      .toBe(true);
    expect(await page.textContent('main')).toContain('Shared in the browser');
    expect(await page.locator('a[href^="/app"], nav[aria-label="Main"], form').count()).toBe(0);
    expect(browser.problems).toEqual([]);
  });
});
