import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { textParts } from '../core/text-parts.js';

/** Answers this long (characters) are sent in parts. */
const largeAnswer = 1_000_000;
/** Characters encoded per turn of the event loop. */
const partChars = 256 * 1024;

/**
 * A large answer (an article with a 5 MB body) is encoded and written in parts, each in a turn of
 * the event loop of its own: measured and encoded at once, a 5 MB answer held the loop for
 * 40–80 ms. It goes out with chunked transfer encoding instead of a Content-Length.
 */
export function largeAnswersInParts(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, _reply, payload) => (typeof payload === 'string' && payload.length >= largeAnswer ? Readable.from(parts(payload)) : payload));
}

async function* parts(text: string): AsyncGenerator<Buffer> {
  for (const part of textParts(text, partChars)) {
    await nextTurn();
    yield Buffer.from(part, 'utf8');
  }
}
