import { afterEach, describe, expect, it } from 'vitest';
import { registrationsPerHour } from '../../src/services/limits.js';
import { fetchClientMetadataDocument, isPublicAddress, OAuthService } from '../../src/services/oauth/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { authorizationUrl, pkce } from '../helpers/oauth-client.js';

/**
 * Client ID metadata documents: anyone may open the authorization endpoint, and an unknown https
 * client id makes the server fetch its document. The fetch reaches public addresses only (in
 * every IPv6 form that carries an IPv4 address), each address gets a window of requests before
 * anything is fetched, each fetch counts as a new client, and no failure says why it failed.
 */

describe('the addresses a document fetch may reach', () => {
  const forms: { form: string; blocked: string[]; allowed: string[] }[] = [
    { form: 'IPv4', blocked: ['127.0.0.1', '10.1.2.3', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1'], allowed: ['8.8.8.8', '93.184.216.34'] },
    { form: 'IPv4-mapped ::ffff:a.b.c.d', blocked: ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '::ffff:10.0.0.1'], allowed: ['::ffff:8.8.8.8', '::ffff:808:808'] },
    { form: 'IPv4-compatible ::a.b.c.d', blocked: ['::7f00:1', '::127.0.0.1', '::a9fe:a9fe', '::c0a8:101', '::', '::1'], allowed: ['::808:808'] },
    { form: 'IPv4-translated ::ffff:0:a.b.c.d', blocked: ['::ffff:0:7f00:1', '::ffff:0:10.0.0.1'], allowed: ['::ffff:0:808:808'] },
    { form: '6to4 2002::/16', blocked: ['2002:7f00:1::', '2002:7f00:1::1', '2002:a9fe:a9fe::', '2002:c0a8:101:1::1'], allowed: ['2002:808:808::1'] },
    { form: 'NAT64 64:ff9b::/96', blocked: ['64:ff9b::7f00:1', '64:ff9b::127.0.0.1', '64:ff9b::a00:1'], allowed: ['64:ff9b::808:808', '64:ff9b::8.8.8.8'] },
    { form: 'local-use NAT64 64:ff9b:1::/48', blocked: ['64:ff9b:1::808:808', '64:ff9b:1:ffff::7f00:1'], allowed: [] },
    {
      form: 'Teredo 2001::/32 (server, and client inverted)',
      // Client 127.0.0.1 (inverted 80ff:fffe); server 10.0.0.1 with a public client.
      blocked: ['2001:0:4136:e378:8000:63bf:80ff:fffe', '2001:0:a00:1:8000:63bf:f7f7:f7f7'],
      allowed: ['2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
    },
    { form: 'IPv6', blocked: ['fe80::1', 'fd00::1', 'ff02::1', '2001:db8::1', '100::1'], allowed: ['2606:4700:4700::1111', '2a00:1450:4001:80b::200e'] },
  ];

  for (const { form, blocked, allowed } of forms) {
    it(`checks ${form} by the IPv4 address it carries`, () => {
      for (const address of blocked) expect(isPublicAddress(address), address).toBe(false);
      for (const address of allowed) expect(isPublicAddress(address), address).toBe(true);
    });
  }

  it('takes no name or malformed address for an address', () => {
    for (const address of ['localhost', '0x7f.1', '127.1', '2130706433', '', '::ffff:127.0.0.256']) expect(isPublicAddress(address), address).toBe(false);
  });

  it('refuses a document URL at any of these forms before connecting', async () => {
    for (const host of ['[::7f00:1]', '[2002:7f00:1::]', '[64:ff9b::7f00:1]', '[::ffff:127.0.0.1]', '[2001:0:4136:e378:8000:63bf:80ff:fffe]']) {
      await expect(fetchClientMetadataDocument(`https://${host}/metadata.json`), host).rejects.toThrow('not a public address');
    }
  });
});

describe('the authorization endpoint before any fetch', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  /** A harness whose document fetches are counted and fail as a closed port does. */
  async function counting(env: Record<string, string>): Promise<{ fetched: string[] }> {
    harness = await startHarness({ listen: true, env });
    const fetched: string[] = [];
    const oauth = new OAuthService(harness.services.db.kysely, harness.clock, async (url) => {
      fetched.push(url);
      throw new Error('connect ECONNREFUSED 198.51.100.7:22');
    });
    Object.assign(harness.services, { oauth });
    return { fetched };
  }

  const documentClient = (n: number) => ({ clientId: `https://client${n}.example/metadata.json`, redirectUri: 'http://127.0.0.1:8976/callback' });

  it('limits each address’s requests before fetching anything, and never says why a fetch failed', async () => {
    const { fetched } = await counting({ AUTHORIZE_PER_MINUTE: '3' });
    const base = harness!.settings.publicUrl;
    const answers: Response[] = [];
    for (let n = 0; n < 5; n++) answers.push(await fetch(authorizationUrl(base, documentClient(n), pkce().challenge)));
    expect(answers.map((answer) => answer.status)).toEqual([400, 400, 400, 429, 429]);
    expect(fetched).toEqual([0, 1, 2].map((n) => documentClient(n).clientId));
    const refused = await answers[0]!.text();
    expect(refused).toContain('The client metadata document could not be loaded. (invalid_client)');
    expect(refused).not.toMatch(/ECONNREFUSED|198\.51|:22/);
    expect(Number(answers[3]!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await answers[3]!.text()).toContain('At most 3 authorization requests a minute from one address');

    // The sign-in page that names the waiting application fetches nothing either.
    const next = authorizationUrl(base, documentClient(9), pkce().challenge);
    const signIn = await fetch(`${base}/app/sign-in?next=${encodeURIComponent(next.pathname + next.search)}`);
    expect(signIn.status).toBe(200);
    expect(fetched).toHaveLength(3);
  });

  it('answers every failure of a real fetch with the same words', async () => {
    harness = await startHarness({ listen: true });
    const base = harness.settings.publicUrl;
    for (const clientId of ['https://127.0.0.1/metadata.json', 'https://[::7f00:1]/metadata.json', 'https://[2002:7f00:1::]:8443/metadata.json']) {
      const answer = await fetch(authorizationUrl(base, { clientId, redirectUri: 'http://127.0.0.1:8976/callback' }, pkce().challenge));
      expect(answer.status).toBe(400);
      const text = await answer.text();
      expect(text).toContain('The client metadata document could not be loaded.');
      expect(text).not.toContain('public address');
    }
  });

  it('counts each fetched document as a new client under the registration limit', async () => {
    const { fetched } = await counting({ AUTHORIZE_PER_MINUTE: '1000' });
    const base = harness!.settings.publicUrl;
    for (let n = 0; n < registrationsPerHour - 1; n++) {
      const registered = await fetch(`${base}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [`http://127.0.0.1:${4000 + n}/cb`] }),
      });
      expect(registered.status).toBe(201);
    }
    expect((await fetch(authorizationUrl(base, documentClient(0), pkce().challenge))).status).toBe(400);
    expect(fetched).toHaveLength(1);
    const over = await fetch(authorizationUrl(base, documentClient(1), pkce().challenge));
    expect(over.status).toBe(429);
    expect(await over.text()).toContain(`At most ${registrationsPerHour} new applications an hour from one address`);
    expect(fetched).toHaveLength(1);
    const register = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:3999/cb'] }),
    });
    expect(register.status).toBe(429);
  });
});
