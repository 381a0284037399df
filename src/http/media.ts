import type { FastifyInstance } from 'fastify';
import { AppError } from '../core/errors.js';
import type { Services } from '../services/index.js';

/** Uploaded images under the service's own URL. Names are content hashes, so they never change. */
export async function mediaRoutes(app: FastifyInstance, options: { services: Services }) {
  app.get<{ Params: { name: string } }>('/media/:name', { schema: { hide: true } }, async (request, reply) => {
    const found = await options.services.media.get(request.params.name);
    if (!found) throw new AppError('not_found', 'No such image.');
    return reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .type(found.contentType)
      .send(found.bytes);
  });
}
