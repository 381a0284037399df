import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Services } from '../services/index.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Resolves once every request taken has had its handler answer (true), or after `timeoutMs`
     * (false). Closing the server does not wait for a request whose client has left: its
     * connection is gone.
     */
    handlersSettled(timeoutMs: number): Promise<boolean>;
  }
}

/**
 * Every request gets its RequestInfo; every /api/v1 request gets an activity record. The hooks
 * take Fastify's callback rather than returning a promise: every request runs them, and each
 * promise was an allocation and a hop through the microtask queue.
 *
 * A request whose client leaves before the answer (an edit waiting its turn on the HTML pool) still
 * runs its handler, which may still change an article, but Fastify's `onResponse` never comes for
 * it: it is recorded when its handler answers (`onSend`), and a stopping node waits for the
 * handlers still running (`handlersSettled`) before it closes the HTML pool and the database.
 * Those still running at the deadline have their pool tasks stopped (503) and are waited for
 * again, briefly, so that they are recorded too.
 */
export const activityPlugin = fp(async (app: FastifyInstance, options: { services: Services }) => {
  const { activity } = options.services;
  app.decorateRequest('actor', null);
  app.decorateRequest('errorCode', null);
  app.decorateRequest('info', null as never);

  const record = (request: FastifyRequest, reply: FastifyReply) => {
    if (request.info.recorded || !request.info.path?.startsWith('/api/')) return;
    request.info.recorded = true;
    activity.record({
      actor: request.actor,
      channel: 'api',
      request: request.info,
      outcome: { status: reply.statusCode, error: request.errorCode },
    });
  };

  /** Requests whose handler runs and has not answered yet. */
  const running = new Set<FastifyRequest>();
  let settle: (() => void) | undefined;

  app.addHook('onRequest', (request, _reply, done) => {
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
    done();
  });

  // From here on the handler runs. A request whose client left before (while its body or an
  // onRequest hook was pending) never gets this far, nor any onSend: it must not be waited for.
  app.addHook('preHandler', (request, _reply, done) => {
    running.add(request);
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    running.delete(request);
    // The client has left: no onResponse will come.
    if (reply.raw.destroyed) record(request, reply);
    if (running.size === 0) settle?.();
    done(null, payload);
  });

  app.addHook('onResponse', (request, reply, done) => {
    record(request, reply);
    done();
  });

  app.decorate('handlersSettled', async (timeoutMs: number) => {
    if (running.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      settle = resolve;
      timer = setTimeout(resolve, timeoutMs);
    });
    clearTimeout(timer);
    settle = undefined;
    return running.size === 0;
  });
});
