import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Settings } from '../config.js';
import { operations } from '../operations/index.js';
import type { Services } from '../services/index.js';
import { activityPlugin } from './activity.js';
import './context.js';
import { clientErrorHandler, errorsPlugin, frameworkErrors } from './errors.js';
import { healthRoutes } from './health.js';
import { mediaRoutes } from './media.js';
import { openApiPlugin, openApiRoutes } from './openapi.js';
import { restRoutes } from './rest.js';
import { webPlugin } from '../web/plugin.js';
import { agentInterfacePlugin } from '../mcp/plugin.js';

export interface AppOptions {
  settings: Settings;
  services: Services;
  /** Pino logger options; false silences the log (tests). */
  logger?: boolean | object;
}

const jsonBodyLimit = 5 * 1024 * 1024;

/** The Fastify app: REST API, OpenAPI and docs, health; one plugin per concern. */
export async function buildApp(options: AppOptions): Promise<{ app: FastifyInstance; stop: () => Promise<void> }> {
  const { settings, services } = options;
  let stopping = false;
  const app = Fastify({
    logger: options.logger ?? {
      level: settings.logLevel,
      redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'],
    },
    bodyLimit: jsonBodyLimit,
    trustProxy: settings.trustProxy,
    return503OnClosing: true,
    frameworkErrors,
    clientErrorHandler,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Only JSON (and, where a route declares it, multipart) is accepted: text/plain is a 415.
  app.removeContentTypeParser('text/plain');

  await app.register(errorsPlugin);
  await app.register(cookie);
  await app.register(activityPlugin, { services });
  await app.register(openApiPlugin, { settings });
  await app.register(restRoutes, { prefix: '/api/v1', services, operations });
  await app.register(openApiRoutes);
  await app.register(healthRoutes, { services, isStopping: () => stopping });
  await app.register(mediaRoutes, { services });
  await app.register(webPlugin, { services, settings });
  await app.register(agentInterfacePlugin, { services, settings });

  const stop = async () => {
    stopping = true;
    await app.close();
    await services.activity.flush();
  };
  return { app, stop };
}
