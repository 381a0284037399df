import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { runInBrowser, useBrowser } from '../helpers/chromium.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { password } from './browser.js';

const screenshots = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));

/** Onboarding in Chromium: staff create an account, the new user opens the link, chooses a password and is signed in. */
describe.skipIf(!runInBrowser).each([1280, 390])('staff onboarding in Chromium at %i px', (width) => {
  const h = useHarness({ listen: true });
  const browser = useBrowser({ viewport: { width, height: 900 } });
  let base: string;
  let staffEmail: string;

  beforeAll(async () => {
    base = h.settings.publicUrl;
    staffEmail = (await createCustomer(h.services, { staff: true })).email;
    mkdirSync(screenshots, { recursive: true });
  }, 120_000);

  const sideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

  it('create account → one-time link → set password → signed in', async () => {
    const { page } = browser;
    await page.goto(`${base}/app/sign-in`);
    await page.getByLabel('E-mail').fill(staffEmail);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.goto(`${base}/app/staff`);
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(screenshots, `staff-onboarding-accounts-${width}.png`), fullPage: true });
    await page.getByLabel(/Account name/).fill('Lighthouse Café');
    await page.getByLabel('First user’s e-mail').fill('keeper@lighthouse.example');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForSelector('[data-password-link]');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Lighthouse Café');
    const link = await page.locator('#new-link').inputValue();
    expect(link).toMatch(/\/app\/welcome\/pl_[0-9A-Za-z]{40}$/);
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(screenshots, `staff-onboarding-link-${width}.png`), fullPage: true });

    await page.getByLabel('Website address').fill('https://lighthouse.example');
    await page.getByLabel('Name', { exact: true }).fill('Lighthouse Café');
    await page.getByLabel(/Language/).fill('fr');
    await page.getByRole('button', { name: 'Add site' }).click();
    await page.waitForSelector('.site-grid');
    expect(await page.locator('.site-grid').textContent()).toContain('Lighthouse Café');

    // The new user: the same browser without the staff member's cookies.
    await browser.context.clearCookies();
    await page.goto(link);
    expect(await page.textContent('main')).toContain('keeper@lighthouse.example');
    await page.getByLabel(/Password/).fill('short');
    // The browser's own minlength check keeps the short password from being sent.
    await page.getByRole('button', { name: 'Save password and sign in' }).click();
    expect(page.url()).toBe(link);
    await page.getByLabel(/Password/).fill('a lighthouse password');
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(screenshots, `staff-onboarding-welcome-${width}.png`), fullPage: true });
    await page.getByRole('button', { name: 'Save password and sign in' }).click();
    await page.waitForURL(`${base}/app`);
    expect(await page.textContent('header')).toContain('keeper@lighthouse.example');
    expect(await page.textContent('main')).toContain('Lighthouse Café');
    await page.screenshot({ path: join(screenshots, `staff-onboarding-signed-in-${width}.png`), fullPage: true });
    expect(browser.problems).toEqual([]);
    // Used once: the same link no longer opens.
    const again = await page.goto(link);
    expect(again?.status()).toBe(404);
  }, 120_000);
});
