import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { runInBrowser, signInThroughForm, useBrowser } from '../helpers/chromium.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, TestClock, useHarness } from '../helpers/harness.js';
import { password } from '../web/browser.js';

const screenshots = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));

/** In Chromium at 1280 and 390 px: the report's months and the keys page's name. */
describe.skipIf(!runInBrowser)('the report’s months and the keys page, in Chromium', () => {
  const h = useHarness({ listen: true, clock: new TestClock(new Date('2026-11-28T12:00:00Z')) });
  const browser = useBrowser();
  let base: string;
  let page: Page;
  let siteId: number;

  beforeAll(async () => {
    page = browser.page;
    base = h.settings.publicUrl;
    const alice = await createCustomer(h.services);
    siteId = (
      await seedSite(h.services, alice.email, {
        name: 'Quay Dental',
        articles: [{ status: 'published', title: 'Crowns explained', published_at: '2026-11-03T09:00:00Z', body: '<p>x</p>' }],
        backlinks: [
          { category: 'local', acquired_at: '2026-11-05T10:00:00Z', source_domain: 'nov.example' },
          { category: 'industry', acquired_at: '2026-10-05T10:00:00Z', source_domain: 'oct.example' },
        ],
      })
    ).siteId;
    mkdirSync(screenshots, { recursive: true });
    await signInThroughForm(page, base, alice.email, password);
  }, 180_000);

  const shot = (name: string) => page.screenshot({ path: join(screenshots, `report-months-${name}.png`), fullPage: true });
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

  for (const width of [1280, 390]) {
    it(`the report ends at the current month, marked so far, and refuses a month ahead (${width} px)`, async () => {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${base}/app/sites/${siteId}`);
      await expect(page.locator('h1 [data-partial-month]').textContent()).resolves.toBe('so far');
      expect(await page.locator('h1 [data-partial-month]').isVisible()).toBe(true);
      expect(await page.locator('.month-picker a[rel="next"]').count()).toBe(0);
      expect(await page.locator('.month-picker a[rel="prev"]').isVisible()).toBe(true);
      expect(await overflow()).toBeLessThanOrEqual(0);
      await shot(`report-${width}`);

      // The picker does not submit a month past its max.
      await page.locator('#month').fill('2026-12');
      await page.getByRole('button', { name: 'Show' }).click();
      expect(await page.locator('#month').evaluate((input: HTMLInputElement) => input.validity.rangeOverflow)).toBe(true);
      expect(new URL(page.url()).search).toBe('');

      // Typed into the address bar, it is a 422 that says why and leads back.
      const refused = await page.goto(`${base}/app/sites/${siteId}?month=2026-12`);
      expect(refused!.status()).toBe(422);
      await expect(page.getByRole('alert').textContent()).resolves.toContain('December 2026 has not begun yet: the latest report is November 2026, so far.');
      expect(await page.locator('[data-stat-value]').count()).toBe(0);
      expect(await overflow()).toBeLessThanOrEqual(0);
      await shot(`report-ahead-${width}`);
      await page.getByRole('link', { name: 'Show November 2026 so far' }).click();
      await page.waitForURL(`${base}/app/sites/${siteId}`);

      // The month before has the way forward to the current one.
      await page.locator('.month-picker a[rel="prev"]').click();
      await page.waitForURL(`${base}/app/sites/${siteId}?month=2026-10`);
      expect(await page.locator('[data-partial-month]').count()).toBe(0);
      await page.locator('.month-picker a[rel="next"]').click();
      await page.waitForURL(`${base}/app/sites/${siteId}?month=2026-11`);
    }, 60_000);

    it(`the keys page is named for what it does, from the sites page and the menu (${width} px)`, async () => {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${base}/app`);
      const menu = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys & assistants' });
      expect(await menu.isVisible()).toBe(true);
      expect(await page.getByText('Connect a site').count()).toBe(0);
      expect(await overflow()).toBeLessThanOrEqual(0);
      await shot(`sites-${width}`);
      await page.getByRole('link', { name: 'API keys and assistants' }).click();
      await page.waitForURL(`${base}/app/connect`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('API keys and assistants');
      expect(await menu.getAttribute('aria-current')).toBe('page');
      expect(await overflow()).toBeLessThanOrEqual(0);
      await shot(`keys-${width}`);
    }, 60_000);
  }
});
