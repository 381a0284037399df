import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Services } from '../services/index.js';
import { answersUnderPressure, overloadRetryAfter } from './pressure.js';

/**
 * Liveness (the process answers, even overloaded) and readiness (the database answers, and we
 * are neither stopping nor overloaded). Needs the pressure plugin registered first.
 */
export async function healthRoutes(app: FastifyInstance, options: { services: Services; isStopping: () => boolean }) {
  app.get('/healthz', { schema: { hide: true }, config: answersUnderPressure }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true }, config: answersUnderPressure }, async (_request, reply) => {
    if (options.isStopping()) return reply.code(503).send({ status: 'stopping' });
    if (app.isOverloaded()) return reply.code(503).header('retry-after', overloadRetryAfter).send({ status: 'overloaded' });
    try {
      await sql`select 1`.execute(options.services.db.kysely);
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'database unavailable' });
    }
  });
}
