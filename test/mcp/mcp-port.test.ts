import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMcpApp } from '../../src/app.js';
import { loadSettings } from '../../src/config.js';
import { servingBanner } from '../../src/main.js';
import { seedSite, type SeededSite } from '../helpers/fixtures.js';
import { createCustomer, freePort, type Harness, startHarness } from '../helpers/harness.js';
import { authorizationUrl, authorizeInBrowser, connectWithOAuth, manualGrant, pkce, postForm, rawMcp, registerClient } from '../helpers/oauth-client.js';

/**
 * MCP_PORT: the MCP endpoint on a listener of its own, reached by the official client at that
 * address out of the box; sign-in and tokens stay with the authorization server at PUBLIC_URL.
 */

let harness: Harness;
let stopMcp: () => Promise<void>;
let base: string;
let mcpBase: string;
let customer: Awaited<ReturnType<typeof createCustomer>>;
let site: SeededSite;

beforeAll(async () => {
  const mcpPort = await freePort();
  harness = await startHarness({ listen: true, env: { MCP_PORT: String(mcpPort) } });
  base = harness.settings.publicUrl;
  mcpBase = `http://127.0.0.1:${mcpPort}`;
  const mcp = await buildMcpApp({ settings: harness.settings, services: harness.services, logger: false });
  await mcp.app.listen({ port: mcpPort, host: '127.0.0.1' });
  stopMcp = mcp.stop;
  customer = await createCustomer(harness.services);
  site = await seedSite(harness.services, customer.email, {
    name: 'Port site',
    articles: [{ status: 'published', title: 'On the port', body: '<p>Served twice.</p>' }],
  });
});

afterAll(async () => {
  await stopMcp();
  await harness.close();
});

describe('the MCP endpoint on its own port', () => {
  it('is the address assistants are shown, at PUBLIC_URL’s host name', () => {
    expect(harness.settings.mcpPublicUrl).toBe(`${mcpBase}/mcp`);
  });

  it('connects the official client end to end: discovery on the port, sign-in at PUBLIC_URL, tools on the port', async () => {
    const { client, provider } = await connectWithOAuth(base, customer.email, { mode: 'auto' }, { mcpUrl: new URL('/mcp', mcpBase) });
    expect(provider.lastAuthorizationUrl!.origin).toBe(base);
    expect(provider.lastAuthorizationUrl!.searchParams.get('resource')).toBe(`${mcpBase}/mcp`);
    const result = await client.callTool({ name: 'list_articles', arguments: { site_id: site.siteId } });
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.structuredContent)).toContain('On the port');
    await client.close();
  });

  it('connects a 2025-era client the same way', async () => {
    const { client } = await connectWithOAuth(base, customer.email, { mode: 'legacy' }, { mcpUrl: new URL('/mcp', mcpBase) });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('list_sites');
    await client.close();
  });

  it('advertises its own resource and metadata address; the main listener keeps PUBLIC_URL/mcp', async () => {
    const own = await fetch(`${mcpBase}/.well-known/oauth-protected-resource/mcp`);
    expect(await own.json()).toMatchObject({ resource: `${mcpBase}/mcp`, authorization_servers: [base] });
    const main = await fetch(`${base}/.well-known/oauth-protected-resource/mcp`);
    expect(await main.json()).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [base] });
    const challenge = (await rawMcp(mcpBase, undefined)).headers.get('www-authenticate');
    expect(challenge).toBe(`Bearer resource_metadata="${mcpBase}/.well-known/oauth-protected-resource/mcp", scope="articles:read articles:write"`);
    expect((await fetch(`${mcpBase}/oauth/authorize`)).status).toBe(404);
    expect((await fetch(`${mcpBase}/.well-known/oauth-authorization-server`)).status).toBe(404);
    expect(await (await fetch(`${mcpBase}/healthz`)).json()).toEqual({ status: 'ok' });
  });

  it('takes each token at the address it was issued for only', async () => {
    const forMain = await manualGrant(base, customer.email);
    const mainToken = forMain.tokens.access_token as string;
    expect((await rawMcp(base, mainToken)).status).toBe(200);
    const refused = await rawMcp(mcpBase, mainToken);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const client = await registerClient(base);
    const { verifier, challenge } = pkce();
    const url = authorizationUrl(base, client, challenge, { resource: `${mcpBase}/mcp/` });
    const { callback } = await authorizeInBrowser(base, url, customer.email);
    const exchanged = await postForm(base, '/oauth/token', {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      code_verifier: verifier,
      redirect_uri: client.redirectUri,
      client_id: client.clientId,
      resource: `${mcpBase}/mcp`,
    });
    expect(exchanged.status).toBe(200);
    const portToken = exchanged.body.access_token as string;
    expect((await rawMcp(mcpBase, portToken)).status).toBe(200);
    expect((await rawMcp(base, portToken)).status).toBe(401);
  });

  it('binds a token asked for without a resource to both addresses; naming one narrows it to that one', async () => {
    const client = await registerClient(base);
    const { verifier, challenge } = pkce();
    const url = authorizationUrl(base, client, challenge);
    url.searchParams.delete('resource');
    const { consent, callback } = await authorizeInBrowser(base, url, customer.email);
    expect(consent).not.toContain('name="resource"');
    const exchanged = await postForm(base, '/oauth/token', {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      code_verifier: verifier,
      redirect_uri: client.redirectUri,
      client_id: client.clientId,
    });
    expect(exchanged.status).toBe(200);
    const token = exchanged.body.access_token as string;
    expect((await rawMcp(base, token)).status).toBe(200);
    expect((await rawMcp(mcpBase, token)).status).toBe(200);

    const refresh = (refreshToken: string, resource?: string) =>
      postForm(base, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client.clientId, ...(resource ? { resource } : {}) });
    const both = await refresh(exchanged.body.refresh_token as string);
    expect(both.status).toBe(200);
    expect((await rawMcp(base, both.body.access_token as string)).status).toBe(200);
    expect((await rawMcp(mcpBase, both.body.access_token as string)).status).toBe(200);
    const portOnly = await refresh(both.body.refresh_token as string, `${mcpBase}/mcp`);
    expect(portOnly.status).toBe(200);
    expect((await rawMcp(mcpBase, portOnly.body.access_token as string)).status).toBe(200);
    expect((await rawMcp(base, portOnly.body.access_token as string)).status).toBe(401);
    expect(await refresh(portOnly.body.refresh_token as string, `${base}/mcp`)).toEqual({
      status: 400,
      body: { error: 'invalid_target', error_description: 'resource differs from the one the token was issued for.' },
    });
  });

  it('refuses a resource that is neither address, naming both', async () => {
    const client = await registerClient(base);
    const response = await fetch(authorizationUrl(base, client, pkce().challenge, { resource: 'https://elsewhere.example/mcp' }));
    expect(response.status).toBe(400);
    expect(await response.text()).toContain(`The resources here are ${mcpBase}/mcp and ${base}/mcp.`);
  });
});

describe('the start-up banner', () => {
  it('prints the MCP_PORT address beside the main one', () => {
    expect(servingBanner(harness.settings)).toBe(
      [
        'Anchorage is serving',
        `  API:  ${base}/api/v1`,
        `  Docs: ${base}/docs`,
        `  MCP:  ${base}/mcp`,
        `  MCP:  ${mcpBase}/mcp (MCP_PORT ${harness.settings.mcpPort})`,
        `  UI:   ${base}/app`,
        '',
      ].join('\n'),
    );
  });

  it('prints MCP_PUBLIC_URL for the port when set, and one MCP line without MCP_PORT', () => {
    const proxied = loadSettings({ PUBLIC_URL: 'https://anchorage.example', MCP_PORT: '4000', MCP_PUBLIC_URL: 'https://mcp.anchorage.example/mcp' });
    expect(servingBanner(proxied)).toContain('  MCP:  https://anchorage.example/mcp\n  MCP:  https://mcp.anchorage.example/mcp (MCP_PORT 4000)\n');
    const single = loadSettings({ PUBLIC_URL: 'https://anchorage.example' });
    expect(servingBanner(single).match(/MCP:/g)).toHaveLength(1);
    expect(servingBanner(single)).toContain('  MCP:  https://anchorage.example/mcp\n');
  });
});
