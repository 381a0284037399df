import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const saneRequestId = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The request id: a sane incoming X-Request-Id (from a load balancer or the client, so one id
 * follows the call across systems), else a fresh UUID. It is the `reqId` of the log lines and
 * the `request_id` of the activity record.
 */
export function requestIdOf(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && saneRequestId.test(incoming) ? incoming : randomUUID();
}

/** Fastify options: our id rule instead of Fastify's (which would take any incoming header as is). */
export const requestIdOptions = { requestIdHeader: false, genReqId: requestIdOf } as const;

/** Every response carries X-Request-Id. */
export const requestIdPlugin = fp(async (app: FastifyInstance) => {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
});
