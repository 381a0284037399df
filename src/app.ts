import cookie from '@fastify/cookie';
import { buildBaseApp, type AppOptions, type BuiltApp } from './http/base.js';
import { mediaRoutes } from './http/media.js';
import { agentInterfacePlugin, mcpEndpoint } from './mcp/plugin.js';
import { oauthPlugin } from './oauth/plugin.js';
import { operations, tools } from './operations/index.js';
import { openApiPlugin, openApiRoutes } from './rest/openapi.js';
import { restRoutes } from './rest/rest.js';
import { authorizeRoutes } from './web/authorize.js';
import { assetsDir, webPlugin } from './web/plugin.js';

/**
 * The composition root of the main listener: REST API, OpenAPI and docs, media, UI, the agent
 * interface and OAuth, one plugin per concern. The transports do not assemble each other; this
 * file does, for the MCP_PORT listener too (buildMcpApp).
 */
export async function buildApp(options: AppOptions): Promise<BuiltApp> {
  const { settings, services } = options;
  const { app, stop: close, warm } = await buildBaseApp(options);
  await app.register(openApiPlugin, { settings });
  await app.register(restRoutes, { prefix: '/api/v1', services, operations });
  await app.register(openApiRoutes, { assetsDir });
  await app.register(mediaRoutes, { services });
  // Cookies only where a browser signs in (the UI, the OAuth consent page): API calls carry a key
  // and skip the cookie plugin's hooks.
  await app.register(async (browser) => {
    await browser.register(cookie);
    await browser.register(webPlugin, { services, settings });
    await browser.register(agentInterfacePlugin, { services, settings });
    await browser.register(oauthPlugin, { services, settings, listener: 'main' });
    await browser.register(authorizeRoutes, { services, settings });
  });

  const stop = async () => {
    await close();
    await services.activity.flush();
  };
  return { app, stop, warm };
}

/**
 * The MCP endpoint on its own listener (MCP_PORT), for exposing it at a separate address: the
 * same services and tools, its own resource metadata; sign-in stays at PUBLIC_URL.
 */
export async function buildMcpApp(options: AppOptions): Promise<BuiltApp> {
  const { settings, services } = options;
  const built = await buildBaseApp(options);
  await built.app.register(mcpEndpoint, { services, settings, tools, listener: 'mcp', prefix: '/mcp' });
  await built.app.register(oauthPlugin, { services, settings, listener: 'mcp' });
  return built;
}
