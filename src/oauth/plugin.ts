import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { Settings } from '../config.js';
import { allowedHeaders, exposedHeaders } from '../http/cors.js';
import type { Services } from '../services/index.js';
import type { Listener } from '../services/oauth/index.js';
import { oauthEndpoints } from './endpoints.js';
import { wellKnownRoutes } from './metadata.js';

/** Metadata and the non-browser OAuth endpoints are public documents: any origin may read them. */
const openCors = { origin: '*', methods: ['GET', 'POST'], allowedHeaders, exposedHeaders, maxAge: 86_400 };

/**
 * OAuth on a listener: the metadata under /.well-known and, on the main listener, our
 * authorization server's endpoints under /oauth. The MCP_PORT listener serves its resource's
 * metadata alone. The authorization server's browser page, /oauth/authorize with the sign-in and
 * consent, is the UI's (src/web/authorize.ts); src/app.ts registers it.
 */
export async function oauthPlugin(app: FastifyInstance, options: { services: Services; settings: Settings; listener: Listener }) {
  // Not part of the API: keep these routes out of the REST API's OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  await app.register(
    async (scope) => {
      await scope.register(cors, openCors);
      await scope.register(wellKnownRoutes, { settings: options.settings, listener: options.listener });
    },
    { prefix: '/.well-known' },
  );
  if (options.listener === 'mcp') return;
  await app.register(
    async (scope) => {
      // The authorization endpoint is a browser page, not for cross-origin scripts.
      await scope.register(cors, {
        delegator: (request, callback) =>
          callback(null, request.url.startsWith('/oauth/authorize') ? { origin: false } : openCors),
      });
      await scope.register(oauthEndpoints, { services: options.services, settings: options.settings });
    },
    { prefix: '/oauth' },
  );
}
