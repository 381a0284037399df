import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, type Harness, startHarness } from '../helpers/harness.js';
import { authorizationUrl, password, pkce, registerClient } from './oauth-client.js';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * In a real browser: Chromium applies the consent page's CSP form-action to the redirect that
 * follows the POST, so Allow must reach the client's redirect URI, not be blocked.
 */
describe.skipIf(!existsSync(chromiumPath))('consent in Chromium', () => {
  let harness: Harness;
  let browser: Browser;
  let callbackServer: Server;
  let callbackBase: string;
  const received: URL[] = [];

  beforeAll(async () => {
    harness = await startHarness({ listen: true });
    callbackServer = createServer((request, response) => {
      // Only the redirect counts: the browser may also ask this origin for /favicon.ico.
      const url = new URL(request.url!, callbackBase);
      if (url.pathname === '/callback') received.push(url);
      response.end('<p>You can close this window.</p>');
    });
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    callbackBase = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => callbackServer?.close(resolve));
    await harness?.close();
  });

  it('signs in, shows the request, and Allow lands on the client with code, state and iss', async () => {
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
