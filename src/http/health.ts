import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Services } from '../services/index.js';

/** Liveness (the process answers) and readiness (the database answers, and we are not stopping). */
export async function healthRoutes(app: FastifyInstance, options: { services: Services; isStopping: () => boolean }) {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    if (options.isStopping()) return reply.code(503).send({ status: 'stopping' });
    try {
      await sql`select 1`.execute(options.services.db.kysely);
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'database unavailable' });
    }
  });
}
