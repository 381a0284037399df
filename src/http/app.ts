import cookie from '@fastify/cookie';
import { operations } from '../operations/index.js';
import { buildBaseApp, type AppOptions, type BuiltApp } from './base.js';
import { mediaRoutes } from './media.js';
import { openApiPlugin, openApiRoutes } from './openapi.js';
import { restRoutes } from './rest.js';
import { webPlugin } from '../web/plugin.js';
import { agentInterfacePlugin } from '../mcp/plugin.js';

/** The main listener: REST API, OpenAPI and docs, media, UI and the agent interface; one plugin per concern. */
export async function buildApp(options: AppOptions): Promise<BuiltApp> {
  const { settings, services } = options;
  const { app, stop: close, warm } = await buildBaseApp(options);
  await app.register(cookie);
  await app.register(openApiPlugin, { settings });
  await app.register(restRoutes, { prefix: '/api/v1', services, operations });
  await app.register(openApiRoutes);
  await app.register(mediaRoutes, { services });
  await app.register(webPlugin, { services, settings });
  await app.register(agentInterfacePlugin, { services, settings });

  const stop = async () => {
    await close();
    await services.activity.flush();
  };
  return { app, stop, warm };
}
