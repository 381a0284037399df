import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, type Harness, startHarness } from '../helpers/harness.js';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A share link in Chromium: the report with its charts under the UI's CSP, no way into the app. */
describe('a report share link in Chromium', () => {
  let h: Harness;
  let context: BrowserContext;
  let userDataDir: string;
  let base: string;
  let token: string;
  const problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(chromiumPath)) throw new Error(`Chromium not found at ${chromiumPath}: the browser tests must run in CI.`);
    h = await startHarness();
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const address = h.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    base = `http://127.0.0.1:${address.port}`;
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
    userDataDir = mkdtempSync(join(tmpdir(), 'anchorage-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: chromiumPath,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await h?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  it('draws the report and its charts without a console error, with no link into the app', async () => {
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
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
    expect(problems).toEqual([]);
  });
});
