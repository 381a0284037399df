import cookie from '@fastify/cookie';
import { buildBaseApp, type AppOptions, type BuiltApp } from './http/base.js';
import { mediaRoutes } from './http/media.js';
import { agentInterfacePlugin } from './mcp/plugin.js';
import { operations } from './operations/index.js';
import { openApiPlugin, openApiRoutes } from './rest/openapi.js';
import { restRoutes } from './rest/rest.js';
import { authorizeRoutes } from './web/authorize.js';
import { assetsDir, webPlugin } from './web/plugin.js';

/**
 * The composition root of the main listener: REST API, OpenAPI and docs, media, UI and the agent
 * interface, one plugin per concern. The transports do not assemble each other; this file does.
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
    await browser.register(authorizeRoutes, { services, settings });
  });

  const stop = async () => {
    await close();
    await services.activity.flush();
  };
  return { app, stop, warm };
}
