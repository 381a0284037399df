import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Services } from '../services/index.js';

/** Every request gets its RequestInfo; every /api/v1 request gets an activity record. */
export const activityPlugin = fp(async (app: FastifyInstance, options: { services: Services }) => {
  const { activity } = options.services;
  app.decorateRequest('actor', null);
  app.decorateRequest('errorCode', null);
  app.decorateRequest('info', null as never);

  app.addHook('onRequest', async (request) => {
    request.info = {
      id: request.id,
      operation: (request.routeOptions.schema?.operationId as string | undefined) ?? null,
      method: request.method,
      path: request.url.split('?')[0]!,
      tool: null,
      clientIp: request.ip,
      userAgent: request.headers['user-agent'] ?? null,
      startedAt: Date.now(),
    };
  });

  app.addHook('onResponse', async (request, reply) => {
    if (request.info.recorded || !request.info.path?.startsWith('/api/')) return;
    activity.record({
      actor: request.actor,
      channel: 'api',
      request: request.info,
      outcome: { status: reply.statusCode, error: request.errorCode },
    });
  });
});
