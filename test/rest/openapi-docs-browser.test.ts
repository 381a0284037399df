import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runInBrowser, useBrowser } from '../helpers/chromium.js';
import { useHarness } from '../helpers/harness.js';

const anchor = readFileSync(new URL('../../src/web/assets/anchor.svg', import.meta.url));

/** /docs in Chromium carries the service's name and look, and real response descriptions. */
describe.skipIf(!runInBrowser)('/docs in Chromium', () => {
  // Rendering the reference holds the loop on a busy machine; load shedding is tested elsewhere.
  const h = useHarness({ listen: true, env: { OVERLOAD_EVENT_LOOP_DELAY_MS: '0' } });
  const browser = useBrowser();

  for (const viewport of [
    { width: 1280, height: 900 },
    { width: 390, height: 844 },
  ]) {
    it(`shows the Anchorage reference with its logo, colours and descriptions (${viewport.width} px)`, { timeout: 90_000 }, async () => {
      const page = await browser.context.newPage();
      await page.setViewportSize(viewport);
      await page.goto(`${h.settings.publicUrl}/docs`);
      await expect.poll(() => page.locator('.swagger-ui .info .title').textContent(), { timeout: 15_000 }).toContain('Anchorage API');
      expect(await page.title()).toBe('Anchorage API reference');

      const logo = page.locator('.topbar-wrapper .link img');
      expect(await logo.getAttribute('src')).toBe(`data:image/svg+xml;base64,${anchor.toString('base64')}`);
      expect(await logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
      const brand = await page.locator('.topbar-wrapper .link').evaluate((link) => getComputedStyle(link, '::after').content);
      expect(brand).toBe('"Anchorage API"');
      const topbar = await page.locator('.swagger-ui .topbar').evaluate((bar) => getComputedStyle(bar).backgroundColor);
      expect(topbar).toBe('rgb(255, 255, 255)');
      const favicon = await page.locator('link[rel="icon"]').getAttribute('href');
      expect((await page.request.get(new URL(favicon!, page.url()).href)).headers()['content-type']).toMatch(/^image\/svg\+xml/);

      // The declared tags with their descriptions, and an operation's responses described for real.
      await expect.poll(() => page.locator('.opblock-tag-section').count()).toBe(3);
      expect(await page.locator('.opblock-tag').first().textContent()).toContain('Read the websites of your account');
      await page.locator('#operations-Reporting-getArticle .opblock-summary').click();
      const responses = page.locator('#operations-Reporting-getArticle .responses-table');
      await expect.poll(() => responses.textContent()).toContain('Not modified');
      const text = (await page.locator('#swagger-ui').textContent()) ?? '';
      expect(text).not.toContain('Default Response');
      expect(text).toContain('The article with its HTML body and protected links');
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
      expect(browser.problems).toEqual([]);
      await page.close();
    });
  }
});
