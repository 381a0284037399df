import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';

/** Request bodies this large (bytes) are decoded in parts and parsed in a turn of the event loop of their own. */
const largeJson = 1_000_000;
/** Bytes decoded per turn. */
const partBytes = 512 * 1024;

/**
 * JSON request bodies, parsed as Fastify's own parser does (prototype and constructor poisoning
 * refused, the same errors), but a large one in steps: decoding a 5 MB body at once cost 15–25 ms
 * and parsing it about 20, and together with the handler's first step they would hold the event
 * loop for all the other requests at once.
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
    void decodeInParts(bytes).then((text) => parse(request, text, done));
  });
}

/**
 * UTF-8 in parts of about `partBytes`, a turn each. A part never ends inside a character: it ends
 * before the continuation bytes (10xxxxxx) of the character it would split. (Buffer decoding keeps
 * an all-ASCII text in one byte per character; TextDecoder would double it.)
 */
async function decodeInParts(bytes: Buffer): Promise<string> {
  let text = '';
  for (let start = 0; start < bytes.length; ) {
    let end = Math.min(bytes.length, start + partBytes);
    // A character has at most three continuation bytes; more in a row are not UTF-8 anyway.
    for (let back = 0; back < 3 && end < bytes.length && (bytes[end]! & 0xc0) === 0x80; back++) end -= 1;
    await nextTurn();
    text += bytes.toString('utf8', start, end);
    start = end;
  }
  await nextTurn();
  return text;
}
