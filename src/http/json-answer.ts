import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';

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
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + partChars);
    // Each part is encoded on its own: a surrogate pair must not be split between two.
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end += 1;
    await nextTurn();
    yield Buffer.from(text.slice(start, end), 'utf8');
    start = end;
  }
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
