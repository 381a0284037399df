import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { runInBrowser, signInThroughForm, useBrowser } from '../helpers/chromium.js';
import type { ArticleFixture, BacklinkFixture } from '../helpers/fixtures.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { password } from './browser.js';

const backlinkCount = 32;
const articleCount = 25;

function october(): { articles: ArticleFixture[]; backlinks: BacklinkFixture[] } {
  const articles: ArticleFixture[] = Array.from({ length: articleCount }, (_, i) => ({
    status: 'published',
    title: `October story ${i + 1}`,
    published_at: `2026-10-${String(1 + (i % 28)).padStart(2, '0')}T08:00:00Z`,
    body: '<p>Story.</p>',
  }));
  const backlinks: BacklinkFixture[] = Array.from({ length: backlinkCount }, (_, i) => ({
    category: i % 2 === 0 ? 'industry' : 'local',
    acquired_at: `2026-10-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00Z`,
    source_domain: `source${i + 1}.example`,
    source_url: `https://source${i + 1}.example/post`,
    target_url: 'https://print.example/',
    anchor_text: `anchor number ${i + 1}`,
    anchor_type: 'partial',
    status: 'live',
  }));
  return { articles, backlinks };
}

/**
 * In Chromium: a printed report holds every row, and featured images show at any address the service is opened at, with
 * a placeholder for images the page cannot load.
 */
describe.skipIf(!runInBrowser)('a printed report and images, in a browser', () => {
  const h = useHarness({ listen: true });
  // Images that cannot load are console errors: only the pages' own errors count.
  const browser = useBrowser({ consoleErrors: false });
  let port: number;
  let page: Page;
  let siteId: number;
  let uploadedId: number;
  let insecureId: number;
  let brokenId: number;
  let email: string;

  beforeAll(async () => {
    page = browser.page;
    port = Number(new URL(h.settings.publicUrl).port);
    expect(h.settings.publicUrl).toBe(`http://127.0.0.1:${port}`);
    const customer = await createCustomer(h.services);
    email = customer.email;
    const { articles, backlinks } = october();
    const seeded = await seedSite(h.services, email, {
      name: 'Print Shop',
      website_url: 'https://print.example',
      articles: [
        ...articles,
        { status: 'published', title: 'Uploaded cover', published_at: '2026-11-02T09:00:00Z', body: '<p>Cover uploaded through the API.</p>' },
        {
          status: 'published',
          title: 'Insecure cover',
          published_at: '2026-11-03T09:00:00Z',
          featured_image_url: 'http://images.example/insecure.jpg',
          body: '<p>Before.</p><p><img src="http://images.example/in-body.jpg" alt="A photo in the body"></p><p>After.</p>',
        },
        { status: 'published', title: 'Broken cover', published_at: '2026-11-04T09:00:00Z', featured_image_url: 'https://broken.invalid/missing.jpg', body: '<p>x</p>' },
      ],
      backlinks,
    });
    siteId = seeded.siteId;
    [uploadedId, insecureId, brokenId] = seeded.articleIds.slice(articleCount) as [number, number, number];

    // An image uploaded through the API is stored under PUBLIC_URL (127.0.0.1).
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#2a7' } }).png().toBuffer();
    const form = new FormData();
    form.append('image', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'cover.png');
    const uploaded = await fetch(`${h.settings.publicUrl}/api/v1/articles/${uploadedId}/featured-image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}` },
      body: form,
    });
    expect(uploaded.status).toBe(200);
    const mediaUrl = ((await uploaded.json()) as { data: { featured_image_url: string } }).data.featured_image_url;
    expect(mediaUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/media/[0-9a-f]{64}\\.png$`));
    // The same image in the body, by its full address.
    const put = await fetch(`${h.settings.publicUrl}/api/v1/articles/${uploadedId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: `<p>Cover uploaded through the API.</p><p><img src="${mediaUrl}" alt="The cover again"></p>` }),
    });
    expect(put.status).toBe(200);
  }, 120_000);

  it('prints every row of each table of the month, and says how many', async () => {
    const base = `http://127.0.0.1:${port}`;
    await signInThroughForm(page, base, email, password);
    await page.goto(`${base}/app/sites/${siteId}?month=2026-10`);
    const backlinkRows = page.locator('#backlinks tbody tr:visible');
    const articleRows = page.locator('#articles tbody tr:visible');
    // On screen: one page of 20, with the pager.
    expect(await backlinkRows.count()).toBe(20);
    expect(await articleRows.count()).toBe(20);
    await expect(page.locator('#backlinks .pager-range:visible').textContent()).resolves.toBe(`1–20 of ${backlinkCount}`);

    await page.emulateMedia({ media: 'print' });
    try {
      expect(await backlinkRows.count()).toBe(backlinkCount);
      expect(await articleRows.count()).toBe(articleCount);
      const shown = await backlinkRows.locator('td:nth-child(3)').allTextContents();
      expect(new Set(shown)).toEqual(new Set(Array.from({ length: backlinkCount }, (_, i) => `anchor number ${i + 1}`)));
      await expect(page.locator('#backlinks .pager-range:visible').textContent()).resolves.toBe(`All ${backlinkCount} backlinks.`);
      await expect(page.locator('#articles .pager-range:visible').textContent()).resolves.toBe(`All ${articleCount} articles.`);
      expect(await page.locator('.pager .button:visible').count()).toBe(0);
      // The PDF a user saves holds them too (Chromium's print to PDF).
      const pdf = await page.pdf({ format: 'A4' });
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    } finally {
      await page.emulateMedia({ media: 'screen' });
    }

    // The second page on screen, and a printout of it still holds every row.
    await page.goto(`${base}/app/sites/${siteId}?month=2026-10&bpage=2`);
    expect(await backlinkRows.count()).toBe(backlinkCount - 20);
    await page.emulateMedia({ media: 'print' });
    expect(await backlinkRows.count()).toBe(backlinkCount);
    await page.emulateMedia({ media: 'screen' });
  });

  const naturalWidth = (selector: string) => page.$eval(selector, (image) => (image as HTMLImageElement).naturalWidth);

  it('shows an uploaded image (featured and in the body) at 127.0.0.1 and at localhost alike', async () => {
    for (const host of ['127.0.0.1', 'localhost']) {
      const base = `http://${host}:${port}`;
      if (host === 'localhost') await signInThroughForm(page, base, email, password);
      await page.goto(`${base}/app/articles/${uploadedId}`, { waitUntil: 'load' });
      const image = page.locator('img.featured');
      await expect(image.getAttribute('src'), host).resolves.toMatch(/^\/media\/[0-9a-f]{64}\.png$/);
      expect(await naturalWidth('img.featured'), host).toBe(40);
      await expect(page.locator('.prose img').getAttribute('src'), host).resolves.toMatch(/^\/media\/[0-9a-f]{64}\.png$/);
      expect(await naturalWidth('.prose img'), host).toBe(40);
      expect(await page.locator('.image-placeholder').count(), host).toBe(0);
    }
  });

  it('shows a placeholder naming the address for an http:// featured image and body image, and for a broken one', async () => {
    const base = `http://localhost:${port}`;
    await page.goto(`${base}/app/articles/${insecureId}`, { waitUntil: 'load' });
    const placeholders = page.locator('.image-placeholder');
    await placeholders.nth(1).waitFor();
    expect(await page.locator('img.featured').count()).toBe(0);
    const featured = placeholders.first();
    await expect(featured.textContent()).resolves.toContain('Image not shown.');
    await expect(featured.textContent()).resolves.toContain('http://images.example/insecure.jpg');
    await expect(featured.getAttribute('aria-label')).resolves.toBe('Featured image of “Insecure cover”: not shown');
    // The body's http:// image, blocked by the page's policy, becomes a placeholder too.
    const inBody = page.locator('.prose .image-placeholder');
    await expect(inBody.textContent()).resolves.toContain('http://images.example/in-body.jpg');
    await expect(inBody.getAttribute('aria-label')).resolves.toBe('A photo in the body: not shown');
    expect(await page.locator('.prose img').count()).toBe(0);

    await page.goto(`${base}/app/articles/${brokenId}`, { waitUntil: 'load' });
    const broken = page.locator('.image-placeholder');
    await broken.waitFor();
    await expect(broken.textContent()).resolves.toContain('could not be loaded');
    await expect(broken.textContent()).resolves.toContain('https://broken.invalid/missing.jpg');
    expect(browser.problems).toEqual([]);
  });
});
