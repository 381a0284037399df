import type { FastifyInstance } from 'fastify';

/** Request bodies this large (bytes) are decoded and parsed in separate turns of the event loop. */
const largeJson = 1_000_000;

/**
 * JSON request bodies, parsed as Fastify's own parser does (prototype and constructor poisoning
 * refused, the same errors), but a large one in steps: decoding a 5 MB body and parsing it cost
 * about 10 and 20 ms, and together with the handler's first step they would hold the event loop
 * for all the other requests at once.
 */
export function jsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length < largeJson) {
      parse(request, bytes.toString('utf8'), done);
      return;
    }
    setImmediate(() => {
      const text = bytes.toString('utf8');
      setImmediate(() => parse(request, text, done));
    });
  });
}
