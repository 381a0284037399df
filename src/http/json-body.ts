import { errorCodes, type FastifyInstance } from 'fastify';
import type { HtmlPool } from '../services/html-pool.js';

/** Request bodies this large (bytes) are parsed by a thread of the HTML pool. */
const largeJson = 1_000_000;

/**
 * JSON request bodies, parsed as Fastify's own parser does (prototype and constructor poisoning
 * refused, the same errors). A large one is parsed off the event loop, by a thread of the HTML
 * pool: decoding and parsing a 5 MB body took 30–45 ms, during which every other request waited.
 */
export function jsonBodyParser(app: FastifyInstance, pool: HtmlPool): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length < largeJson) {
      parse(request, bytes.toString('utf8'), done);
      return;
    }
    pool.parseJson(bytes).then(
      (outcome) => (outcome.ok ? done(null, outcome.value) : done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined)),
      (error: Error) => done(error, undefined),
    );
  });
}
