import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { refusedRequest, runInBrowser, signInThroughForm, useBrowser } from '../helpers/chromium.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { password } from './browser.js';

const screenshots = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));

/** The provider's side in Chromium: upload an import file, read its plan, apply it and follow it; then delete the account, typing its name. */
describe.skipIf(!runInBrowser).each([1280, 390])('staff import and delete in Chromium at %i px', (width) => {
  const h = useHarness({ listen: true });
  // The refused confirmation answers 422, which Chromium reports on the console.
  const browser = useBrowser({ viewport: { width, height: 900 }, consoleErrors: { except: refusedRequest } });
  let base: string;
  let staffEmail: string;
  let customer: Awaited<ReturnType<typeof createCustomer>>;

  beforeAll(async () => {
    base = h.settings.publicUrl;
    staffEmail = (await createCustomer(h.services, { staff: true })).email;
    customer = await createCustomer(h.services);
    await h.services.db.kysely.updateTable('accounts').set({ name: 'Lighthouse Café' }).where('id', '=', customer.accountId).execute();
    mkdirSync(screenshots, { recursive: true });
  }, 120_000);

  const sideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

  it('upload → plan → apply → imported; then delete the account with its name typed', async () => {
    const { page } = browser;
    await signInThroughForm(page, base, staffEmail, password);

    const file = {
      sites: [
        {
          owner: customer.email,
          website_url: 'https://lighthouse.example',
          name: 'Lighthouse Café',
          articles: [{ url: 'https://lighthouse.example/menu', title: 'Menu', status: 'published', published_at: '2026-11-02T09:00:00Z', body: '<p>Coffee.</p>' }],
          backlinks: Array.from({ length: 2_000 }, (_, i) => ({ source_url: `https://s${i}.example/`, target_url: 'https://lighthouse.example/', category: 'local', status: 'live', acquired_at: '2026-11-03T09:00:00Z' })),
        },
      ],
    };
    await page.goto(`${base}/app/staff/accounts/${customer.accountId}`);
    await page.getByRole('link', { name: 'Import a file' }).click();
    await page.getByLabel(/Import file/).setInputFiles({ name: 'delivery.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(file)) });
    await page.getByRole('button', { name: 'Check the file' }).click();
    // The check runs in a child process: the page follows it, then shows the plan.
    await page.waitForSelector('text=No problems. Nothing has been written yet', { timeout: 60_000 });
    expect(await page.locator('table').textContent()).toContain('2000');
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(screenshots, `staff-import-plan-${width}.png`), fullPage: true });
    await page.getByRole('button', { name: 'Apply the import' }).click();
    // The page follows the apply (the progress script) and shows what it did.
    await page.waitForSelector('text=The file was imported.', { timeout: 60_000 });
    expect(await page.locator('table').textContent()).toContain('created');
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(screenshots, `staff-import-done-${width}.png`), fullPage: true });
    const backlinks = await h.services.db.kysely.selectFrom('backlinks').select((eb) => eb.fn.countAll().as('n')).where('account_id', '=', customer.accountId).executeTakeFirstOrThrow();
    expect(Number(backlinks.n)).toBe(2_000);


    // The progress page, held at "applying" by hand, follows the import until it is over.
    await page.goto(`${base}/app/staff/imports`);
    await page.getByLabel(/Import file/).setInputFiles({ name: 'delivery.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(file)) });
    await page.getByRole('button', { name: 'Check the file' }).click();
    await page.waitForSelector('text=No problems. Nothing has been written yet', { timeout: 60_000 });
    const tokenHash = createHash('sha256').update(new URL(page.url()).pathname.split('/').at(-1)!).digest('hex');
    const uploads = () => h.services.db.kysely.updateTable('import_uploads').where('token_hash', '=', tokenHash);
    // The check's page, held at "checking" by hand, follows it until it is over.
    await uploads().set({ state: 'checking' }).execute();
    await page.reload();
    await page.waitForSelector('text=Checking the file…');
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(screenshots, `staff-import-checking-${width}.png`), fullPage: true });
    await uploads().set({ state: 'planned' }).execute();
    await page.waitForSelector('text=No problems. Nothing has been written yet');
    await uploads().set({ state: 'applying', progress: JSON.stringify({ sites: 0, articles: 1, backlinks: 999 }) }).execute();
    await page.reload();
    await page.waitForSelector('text=1000 of 2002 rows written (1 of 1 articles, 999 of 2000 backlinks).');
    expect(await page.locator('progress').getAttribute('value')).toBe('1000');
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(screenshots, `staff-import-progress-${width}.png`), fullPage: true });
    await uploads().set({ progress: JSON.stringify({ sites: 0, articles: 1, backlinks: 1999 }) }).execute();
    await page.waitForSelector('text=2000 of 2002 rows written');
    await uploads().set({ state: 'applied', progress: JSON.stringify({ sites: 1, articles: 1, backlinks: 2000 }), outcome: JSON.stringify({ sites: [] }) }).execute();
    await page.waitForSelector('text=The file was imported.');

    expect(browser.problems).toEqual([]);
    await page.goto(`${base}/app/staff/accounts/${customer.accountId}`);
    await page.getByLabel(/Type the account’s name/).fill('Lighthouse');
    await page.getByRole('button', { name: 'Delete this account' }).click();
    await page.waitForSelector('text=Nothing was deleted');
    expect(await h.services.uiQueries.account(customer.accountId)).toBeDefined();
    await page.getByLabel(/Type the account’s name/).fill('Lighthouse Café');
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(screenshots, `staff-delete-confirm-${width}.png`), fullPage: true });
    await page.getByRole('button', { name: 'Delete this account' }).click();
    await page.waitForURL(`${base}/app/staff?deleted=1`);
    expect(await page.textContent('main')).toContain('The account Lighthouse Café was deleted');
    expect(await h.services.uiQueries.account(customer.accountId)).toBeUndefined();
    expect(browser.problems).toEqual([]);
  }, 240_000);
});
