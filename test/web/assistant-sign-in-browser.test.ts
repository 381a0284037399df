import { describe, expect, it } from 'vitest';
import { runInBrowser } from '../helpers/chromium.js';
import { createCustomer } from '../helpers/harness.js';
import { authorizationUrl, password, pkce, registerClient, useBrowserOAuth } from '../helpers/oauth-client.js';

/** An assistant's connection in Chromium, at desktop and phone width. */
describe.skipIf(!runInBrowser)('an assistant connecting, in Chromium', () => {
  const oauth = useBrowserOAuth();

  for (const viewport of [
    { width: 1280, height: 900 },
    { width: 390, height: 844 },
  ]) {
    it(`names the application at sign-in and keeps the consent focused until Deny (${viewport.width} px)`, async () => {
      const { harness, browser, callbackBase, received } = oauth;
      const base = harness.settings.publicUrl;
      const customer = await createCustomer(harness.services);
      const client = await registerClient(base, { client_name: 'Quill Writer', redirect_uris: [`${callbackBase}/callback`] });
      const page = await browser.newPage({ viewport });
      await page.goto(authorizationUrl(base, client, pkce().challenge).href);
      await expect(page.locator('[data-waiting-app]').textContent()).resolves.toContain('Quill Writer wants to connect to your Anchorage account.');
      expect(await page.locator('[data-waiting-app]').isVisible()).toBe(true);
      await page.getByLabel('E-mail').fill(customer.email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain('Quill Writer');

      // Nothing to wander off to: no navigation, no link but the skip link; only the decision.
      expect(await page.locator('nav').count()).toBe(0);
      expect(await page.locator('a:visible:not(.skip)').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Allow' }).isVisible()).toBe(true);
      expect(await page.getByRole('button', { name: 'Deny' }).isVisible()).toBe(true);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);

      await page.getByRole('button', { name: 'Deny' }).click();
      await expect.poll(() => received.some((url) => url.searchParams.get('error') === 'access_denied')).toBe(true);
      await page.close();
    });
  }
});
