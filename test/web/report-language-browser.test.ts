import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runInBrowser, useBrowser } from '../helpers/chromium.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, TestClock, useHarness } from '../helpers/harness.js';

const screenshots = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));

/** A German site's report in Chromium: the charts' legends and month labels in German, under the UI's CSP. */
describe.skipIf(!runInBrowser)('a German report in Chromium', () => {
  const h = useHarness({ listen: true, clock: new TestClock(new Date('2026-12-15T12:00:00Z')) });
  const browser = useBrowser();
  let base: string;
  let token: string;

  beforeAll(async () => {
    base = h.settings.publicUrl;
    const owner = await createCustomer(h.services);
    const { siteId } = await seedSite(h.services, owner.email, {
      name: 'Bäckerei Müller',
      language: 'de',
      country: 'DE',
      website_url: 'https://baeckerei.example',
      articles: Array.from({ length: 6 }, (_, i) => ({ status: 'published' as const, title: `Brot Nummer ${i + 1}`, published_at: `2026-${String(6 + i).padStart(2, '0')}-03T09:00:00Z`, target_keyword: 'brot' })),
      backlinks: Array.from({ length: 8 }, (_, i) => ({
        category: i % 2 ? ('local' as const) : ('industry' as const),
        status: 'live' as const,
        acquired_at: `2026-${String(4 + i).padStart(2, '0')}-04T09:00:00Z`,
        source_url: `https://quelle${i}.example/`,
        target_url: 'https://baeckerei.example/',
        anchor_text: `Anker ${i}`,
      })),
    });
    const site = await h.services.db.kysely.selectFrom('sites').selectAll().where('id', '=', siteId).executeTakeFirstOrThrow();
    token = (await h.services.reportShares.create(site, owner.userId, { name: 'Kunde', days: 30 })).token;
  }, 120_000);

  it('draws the charts with German legends and months', async () => {
    const { page } = browser;
    expect((await page.goto(`${base}/share/${token}?month=2026-11`))?.status()).toBe(200);
    await page.waitForSelector('#backlinks-chart[data-rendered="true"]');
    await page.waitForSelector('#articles-chart[data-rendered="true"]');
    const charts = await page.evaluate(() => {
      const chart = (id: string) => (window as unknown as { Chart: { getChart(id: string): { data: { labels: string[] }; legend: { legendItems: { text: string }[] }; options: { locale: string } } } }).Chart.getChart(id)!;
      return ['backlinks-chart', 'articles-chart'].map((id) => ({ legend: chart(id).legend.legendItems.map((item) => item.text), last: chart(id).data.labels.at(-1), locale: chart(id).options.locale }));
    });
    expect(charts).toEqual([
      { legend: ['Branche', 'Lokal'], last: 'Nov. 2026', locale: 'de-DE' },
      { legend: ['Veröffentlichte Artikel'], last: 'Nov. 2026', locale: 'de-DE' },
    ]);
    expect(await page.getAttribute('main', 'lang')).toBe('de');
    expect(await page.locator('h1').textContent()).toBe('Bäckerei Müller · November 2026');
    mkdirSync(screenshots, { recursive: true });
    await page.screenshot({ path: join(screenshots, 'report-german.png'), fullPage: true });
    expect(browser.problems).toEqual([]);
  });
});
