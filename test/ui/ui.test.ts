import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { refusedRequest, runInBrowser, signInThroughForm, useBrowser } from '../helpers/chromium.js';
import type { BacklinkFixture, ArticleFixture } from '../helpers/fixtures.js';
import { seedSite } from '../helpers/fixtures.js';
import { useHarness } from '../helpers/harness.js';
import { s256 } from '../../src/services/oauth/index.js';
import { pipelineRewrite } from '../web/browser.js';

const screenshots = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));

const email = 'owner@ui.example';
const userPassword = 'a long ui password';
const protectedLink = '<a href="https://partner.example/dental-guide" data-service-protected="backlink">dental care guide</a>';
const internalLink = '<a href="https://bakery.example/opening-hours" data-service-protected="internal">opening hours</a>';
const articleBody = [
  '<h2>Fresh every morning</h2>',
  `<p>Our bakers start at four, so the bread is warm when we open. Check our ${internalLink} before you come.</p>`,
  `<p>We wrote about healthy teeth and sugar in the ${protectedLink} of our neighbours.</p>`,
  '<ul><li>Sourdough</li><li>Rye</li><li>Brioche</li></ul>',
  '<p>Thank you for shopping local.</p>',
].join('\n');

/** Twelve months of history so the charts have something to draw. */
function history(): { articles: ArticleFixture[]; backlinks: BacklinkFixture[] } {
  const articles: ArticleFixture[] = [];
  const backlinks: BacklinkFixture[] = [];
  for (let m = 0; m < 12; m += 1) {
    const date = new Date(Date.UTC(2025, 11 + m, 1));
    const month = date.toISOString().slice(0, 7);
    for (let i = 0; i < 1 + (m % 3); i += 1) {
      articles.push({ status: 'published', title: `Monthly story ${month} #${i + 1}`, published_at: `${month}-1${i}T08:00:00Z`, target_keyword: 'bakery news', body: '<p>Story.</p>' });
    }
    for (let i = 0; i < 2 + (m % 4); i += 1) {
      backlinks.push({
        category: i % 3 === 0 ? 'local' : 'industry',
        acquired_at: `${month}-0${i + 1}T10:00:00Z`,
        source_domain: `source${i}.example`,
        source_url: `https://source${i}.example/${month}`,
        target_url: 'https://bakery.example/',
        anchor_text: `anchor ${i}`,
        anchor_type: 'partial',
        status: 'live',
      });
    }
  }
  return { articles, backlinks };
}

/** Non-transparent pixels a canvas has drawn. */
async function drawnPixels(page: Page, selector: string): Promise<number> {
  return page.$eval(selector, (element) => {
    const canvas = element as HTMLCanvasElement;
    const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    let drawn = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) drawn += 1;
    return drawn;
  });
}

/**
 * The UI in Debian's Chromium, driven by playwright-core against a real listening service.
 * Skipped only when Chromium is missing outside CI; in CI a missing browser fails the suite.
 */
describe.skipIf(!runInBrowser)('the UI in a browser', () => {
  const h = useHarness();
  let base: string;
  let page: Page;
  let siteId: number;
  let articleId: number;
  let guardedArticleId: number;
  let apiKey: string;
  let setupKey: string;

  const shot = (name: string) => page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
  const api = (path: string, key: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    mkdirSync(screenshots, { recursive: true });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const address = h.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    base = `http://127.0.0.1:${address.port}`;

    const { user_id } = await h.services.users.create({ email, password: userPassword, account: 'Corner Bakery Ltd' });
    setupKey = (await h.services.keys.create(user_id, { name: 'Setup key' })).key;
    const { articles, backlinks } = history();
    const seeded = await seedSite(h.services, email, {
      name: 'Corner Bakery',
      website_url: 'https://bakery.example',
      language: 'en',
      country: 'GB',
      geographic_scope: 'local',
      industry: 'Bakery',
      articles: [
        { status: 'published', title: 'Why our bread is fresh', published_at: '2026-11-03T09:00:00Z', target_keyword: 'fresh bread', meta_description: 'How we bake.', body: articleBody },
        { status: 'published', title: 'Sugar and your teeth', published_at: '2026-11-04T09:00:00Z', target_keyword: 'sugar teeth', body: '<p>Less sugar, happier teeth.</p>' },
        ...articles,
      ],
      backlinks,
    });
    siteId = seeded.siteId;
    articleId = seeded.articleIds[0]!;
    guardedArticleId = seeded.articleIds[1]!;
    await seedSite(h.services, email, { name: 'Second Shop', website_url: 'https://second.example', industry: 'Cafe', country: 'GB', language: 'en' });
  }, 120_000);

  const browser = useBrowser({ clipboardOrigin: () => base, consoleErrors: { except: refusedRequest } });
  beforeAll(() => {
    page = browser.page;
    page.on('dialog', (dialog) => void dialog.accept());
  });

  it('signs in and lists the sites', async () => {
    await page.goto(`${base}/app`);
    expect(page.url()).toContain('/app/sign-in');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(userPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/app`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Your sites');
    await expect(page.locator('.site-card').count()).resolves.toBe(2);
    await expect(page.locator('.site-card h2').first().textContent()).resolves.toBe('Corner Bakery');
    await shot('sites');
  });

  it('draws the report’s charts, with the numbers of the API', async () => {
    await page.goto(`${base}/app/sites/${siteId}?month=2026-11`);
    await page.waitForSelector('#backlinks-chart[data-rendered="true"]');
    await page.waitForSelector('#articles-chart[data-rendered="true"]');
    expect(await drawnPixels(page, '#backlinks-chart')).toBeGreaterThan(2000);
    expect(await drawnPixels(page, '#articles-chart')).toBeGreaterThan(1000);
    expect((await page.$eval('#backlinks-chart', (c) => (c as HTMLCanvasElement).toDataURL())).length).toBeGreaterThan(5000);

    // November is the current month: reported to date, as the API's this_month.
    const stats = (await (await api(`/api/v1/sites/${siteId}/stats?period=this_month`, setupKey)).json()) as { data: Record<string, number> };
    for (const name of ['articles_published', 'backlinks_acquired', 'backlinks_industry', 'backlinks_local']) {
      const shown = await page.locator(`[data-stat-value="${name}"]`).textContent();
      expect(Number(shown), name).toBe(stats.data[name]);
    }
    expect(stats.data.articles_published).toBeGreaterThan(0);
    await shot('report');

    // The month picker moves to another month.
    await page.getByLabel('Month', { exact: true }).fill('2026-10');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/month=2026-10/);
    const october = (await (await api(`/api/v1/sites/${siteId}/stats?period=2026-10`, setupKey)).json()) as { data: Record<string, number> };
    expect(Number(await page.locator('[data-stat-value="backlinks_acquired"]').textContent())).toBe(october.data.backlinks_acquired);

    // Printing hides navigation and forms.
    await page.emulateMedia({ media: 'print' });
    expect(await page.locator('header nav').isVisible()).toBe(false);
    expect(await page.locator('.month-picker').isVisible()).toBe(false);
    expect(await page.locator('#backlinks-chart').isVisible()).toBe(true);
    await page.emulateMedia({ media: 'screen' });
  });

  it('stays within a phone’s width, and is keyboard reachable', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/app/sites/${siteId}?month=2026-11`);
    await page.waitForSelector('#backlinks-chart[data-rendered="true"]');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await shot('report-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base}/app`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.className)).toBe('skip');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
  });

  it('creates a key that works with the API', async () => {
    await page.goto(`${base}/app/connect`);
    await page.getByLabel('Name').fill('Website widget');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForSelector('#new-key');
    apiKey = await page.locator('#new-key').inputValue();
    expect(apiKey).toMatch(/^ak_[A-Za-z0-9]{40}$/);
    await page.getByRole('button', { name: 'Copy key' }).click();
    // The label changes once the (asynchronous) clipboard write settles.
    await page.getByRole('button', { name: /Copied|Ctrl\+C/ }).waitFor({ timeout: 10_000 });
    await shot('connect');

    const response = await api('/api/v1/sites', apiKey);
    expect(response.status).toBe(200);
    const sites = (await response.json()) as { data: { id: number; name: string }[] };
    expect(sites.data.map((s) => s.name)).toEqual(['Corner Bakery', 'Second Shop']);
    expect((await api(`/api/v1/sites/${siteId}/stats?period=2026-11`, apiKey)).status).toBe(200);
    expect((await api('/api/v1/sites/999999/articles', apiKey)).status).toBe(404);
  });

  it('edits an article and shows the new revision with origin editor', async () => {
    await page.goto(`${base}/app/articles/${articleId}`);
    await expect(page.locator('.prose a[data-service-protected]').count()).resolves.toBe(2);
    await expect(page.locator('#guard-status').textContent()).resolves.toContain('All 2 protected links are intact');
    await shot('article');
    await page.getByLabel('Title').fill('Why our bread is always fresh');
    // The HTML view of the editor (the rich-text view is the default).
    await page.getByRole('button', { name: 'HTML', exact: true }).click();
    const body = await page.locator('#body').inputValue();
    await page.locator('#body').fill(body.replace('Thank you for shopping local.', 'Thank you for shopping local. See you tomorrow!'));
    await page.getByLabel('Reason for the change').fill('Friendlier ending');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(/saved=1/);
    await expect(page.locator('.notice-success').textContent()).resolves.toContain('A new revision with origin editor was recorded');
    await expect(page.locator('.prose').textContent()).resolves.toContain('See you tomorrow!');

    await page.getByRole('link', { name: 'Revisions' }).first().click();
    await page.waitForURL(/\/revisions$/);
    const newest = page.locator('tbody tr').first();
    await expect(newest.locator('.badge-editor').textContent()).resolves.toBe('editor');
    await expect(newest.textContent()).resolves.toContain('Friendlier ending');
    await expect(newest.textContent()).resolves.toContain(email);
    await shot('revisions');
  });

  it('refuses an edit that breaks a protected link, and says which', async () => {
    await page.goto(`${base}/app/articles/${articleId}`);
    await page.getByRole('button', { name: 'HTML', exact: true }).click();
    const body = await page.locator('#body').inputValue();
    await page.locator('#body').fill(body.replace('>dental care guide</a>', '>our guide</a>'));
    // editor.js warns while typing (after a short pause), before the server refuses.
    await page.waitForFunction(() => document.getElementById('guard-status')?.textContent?.includes('Saving would be refused'));
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForSelector('.notice-error');
    const message = await page.locator('.notice-error').textContent();
    expect(message).toContain('Not saved: your edit removes or changes protected links');
    expect(message).toContain('https://partner.example/dental-guide');
    expect(message).toContain('dental care guide');
    expect(await page.locator('#body').inputValue()).toContain('>our guide</a>');
    await shot('article-refused');
    const stored = (await (await api(`/api/v1/articles/${articleId}`, apiKey)).json()) as { data: { body: string } };
    expect(stored.data.body).toContain('>dental care guide</a>');
  });

  it('compares two revisions', async () => {
    await page.goto(`${base}/app/articles/${articleId}/revisions`);
    const rows = page.locator('tbody tr');
    await rows.last().locator('input[name="a"]').check();
    await rows.first().locator('input[name="b"]').check();
    await page.getByRole('button', { name: 'Compare A with B' }).click();
    await page.waitForURL(/\/revisions\/diff\?/);
    await expect(page.locator('.diff ins').first().textContent()).resolves.toContain('See you tomorrow!');
    await expect(page.locator('.diff del').first().textContent()).resolves.toContain('Thank you for shopping local.</p>');
    await expect(page.locator('.fields-diff ins').textContent()).resolves.toBe('Why our bread is always fresh');
    await shot('diff');
  });

  it('restores a revision, and refuses a restore that would drop a later protected link', async () => {
    // Restore the imported revision of the edited article: its protected links are all there.
    await page.goto(`${base}/app/articles/${articleId}/revisions`);
    await page.locator('tbody tr').last().getByRole('button', { name: 'Restore' }).click();
    await page.waitForURL(/restored=\d+/);
    await expect(page.locator('.notice-success').textContent()).resolves.toContain('was restored');
    await expect(page.locator('tbody tr').first().locator('.badge-editor').count()).resolves.toBe(1);
    const restored = (await (await api(`/api/v1/articles/${articleId}`, apiKey)).json()) as { data: { body: string; title: string } };
    expect(restored.data.body).toBe(articleBody);
    expect(restored.data.title).toBe('Why our bread is fresh');

    // The pipeline inserts a protected backlink into the other article; its first revision lacks it.
    await pipelineRewrite(h.services, guardedArticleId, `<p>Less sugar, happier teeth. Read the ${protectedLink}.</p>`);
    await page.goto(`${base}/app/articles/${guardedArticleId}/revisions`);
    await page.locator('tbody tr').last().getByRole('button', { name: 'Restore' }).click();
    await page.waitForSelector('.notice-error');
    const message = await page.locator('.notice-error').textContent();
    expect(message).toContain('was not restored');
    expect(message).toContain('https://partner.example/dental-guide');
    await shot('restore-refused');
    const unchanged = (await (await api(`/api/v1/articles/${guardedArticleId}`, apiKey)).json()) as { data: { body: string } };
    expect(unchanged.data.body).toContain('data-service-protected');
  });

  it('shows the API calls just made in the activity log', async () => {
    await h.services.activity.flush();
    await page.goto(`${base}/app/activity`);
    const table = page.locator('table');
    await expect(table.textContent()).resolves.toContain('GET /api/v1/sites');
    await expect(table.textContent()).resolves.toContain('key “Website widget”');
    const user = await h.services.users.byEmail(email);
    const widget = (await h.services.keys.list(user!.account_id)).find((key) => key.name === 'Website widget')!;
    await page.getByLabel('Credential').selectOption(`key:${widget.id}`);
    await page.getByLabel('Result').selectOption('error');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/status=error/);
    const rows = page.locator('tbody tr');
    await expect(rows.count()).resolves.toBe(1);
    await expect(rows.first().textContent()).resolves.toContain('/api/v1/sites/999999/articles');
    await page.goto(`${base}/app/activity`);
    await shot('activity');
  });

  it('revokes a key, and the API refuses it', async () => {
    await page.goto(`${base}/app/connect`);
    const row = page.locator('tr', { hasText: 'Website widget' });
    await row.getByRole('button', { name: /Revoke/ }).click();
    await page.waitForURL(/revoked=1/);
    await expect(page.locator('.notice-success').textContent()).resolves.toContain('The key was revoked');
    await expect(page.locator('tr', { hasText: 'Website widget' }).locator('.badge-revoked').count()).resolves.toBe(1);
    const refused = await api('/api/v1/sites', apiKey);
    expect(refused.status).toBe(401);
    expect((await api('/api/v1/sites', setupKey)).status).toBe(200);
  });

  it('scrolls no page sideways on a 390 px phone, signed in, signed out and as staff', async () => {
    const registered = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'An assistant with a rather long name for a phone screen', redirect_uris: ['http://127.0.0.1:7777/callback'] }),
    });
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const user = (await h.services.users.verifyPassword(email, userPassword))!;
    const verifier = 'v'.repeat(43);
    const resource = `${h.settings.mcpPublicUrl}`;
    const code = await h.services.oauth.issueCode({ clientId, userId: user.id, redirectUri: 'http://127.0.0.1:7777/callback', codeChallenge: s256(verifier), resource, scope: 'articles:read articles:write' });
    await h.services.oauth.exchangeCode({ code, clientId, redirectUri: 'http://127.0.0.1:7777/callback', codeVerifier: verifier, resource });
    const revisions = await h.services.revisions.list(articleId);
    const authorize = new URL('/oauth/authorize', base);
    for (const [name, value] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1:7777/callback', code_challenge: s256(verifier), code_challenge_method: 'S256', state: 's', resource })) {
      authorize.searchParams.set(name, value);
    }
    const signedIn = [
      '/app',
      `/app/sites/${siteId}?month=2026-11`,
      `/app/sites/${siteId}?month=2026-10`,
      `/app/articles/${articleId}`,
      `/app/articles/${articleId}/revisions`,
      `/app/articles/${articleId}/revisions/diff?a=${revisions.at(-1)!.number}&b=${revisions[0]!.number}`,
      '/app/connect',
      '/app/connections',
      '/app/activity',
      '/app/staff',
      '/app/sites/999999',
      '/app/no-such-page',
      `${authorize.pathname}${authorize.search}`,
      '/oauth/authorize?client_id=nobody',
    ];
    const staffEmail = 'staff@ui.example';
    const staff = await h.services.users.create({ email: staffEmail, password: userPassword, staff: true });
    const wide: string[] = [];
    const check = async (path: string) => {
      await page.goto(`${base}${path}`);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      if (width <= 390) return;
      // Names the outermost elements that stick out, so a failure says what to fix.
      const culprits = await page.evaluate(() =>
        [...document.querySelectorAll('body *')]
          .filter((element) => {
            if (element.getBoundingClientRect().right <= 391 || element.parentElement!.getBoundingClientRect().right > 391) return false;
            for (let up = element.parentElement; up; up = up.parentElement) {
              if (getComputedStyle(up).overflowX !== 'visible') return false;
            }
            return true;
          })
          .slice(0, 3)
          .map((element) => `${element.tagName.toLowerCase()}.${[...element.classList].join('.')}`),
      );
      wide.push(`${path}: ${width}px (${culprits.join(', ')})`);
    };
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const path of signedIn) await check(path);
      await browser.context.clearCookies();
      await check('/app/sign-in');
      await check('/app/sign-up');
      await signInThroughForm(page, base, staffEmail, userPassword);
      await check('/app/staff');
      await check(`/app/staff/accounts/${staff.account_id}`);
      await check(`/app/staff/accounts/${user.account_id}`);
      await shot('staff-phone');
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    expect(wide).toEqual([]);
  });

  it('logged no script errors and no CSP violations on any page', () => {
    expect(browser.problems).toEqual([]);
  });
});
