import { describe, expect, it } from 'vitest';
import { runInBrowser } from '../helpers/chromium.js';
import { createCustomer } from '../helpers/harness.js';
import { authorizationUrl, password, pkce, registerClient, useBrowserOAuth } from '../helpers/oauth-client.js';

/**
 * In a real browser: Chromium applies the consent page's CSP form-action to the redirect that
 * follows the POST, so Allow must reach the client's redirect URI, not be blocked.
 */
describe.skipIf(!runInBrowser)('consent in Chromium', () => {
  const oauth = useBrowserOAuth();

  it('signs in, shows the request, and Allow lands on the client with code, state and iss', async () => {
    const { harness, browser, callbackBase, received } = oauth;
    const base = harness.settings.publicUrl;
    const customer = await createCustomer(harness.services);
    const client = await registerClient(base, { client_name: 'Browser client', redirect_uris: [`${callbackBase}/callback`] });
    const page = await browser.newPage();
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    await page.goto(authorizationUrl(base, client, pkce().challenge).href);
    await page.getByLabel('E-mail').fill(customer.email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain('Browser client');
    await page.getByLabel(/only$/).check();
    await page.getByRole('button', { name: 'Allow' }).click();
    await expect.poll(() => received.length).toBe(1);
    expect(blocked).toEqual([]);
    const callback = received[0]!;
    expect(callback.pathname).toBe('/callback');
    expect(callback.searchParams.get('code')).toBeTruthy();
    expect(callback.searchParams.get('state')).toBe('state-123');
    expect(callback.searchParams.get('iss')).toBe(base);
    await page.close();
  });
});
