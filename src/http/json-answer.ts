import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { textParts } from '../core/text-parts.js';

/** Answers this long (characters) are sent in parts. */
const largeAnswer = 1_000_000;
/** Characters encoded per turn of the event loop. */
const partChars = 256 * 1024;

/**
 * Stands for a large article body while the rest of the answer is serialised: a NUL and a
 * per-process random id, which no stored text can be expected to hold.
 */
const placeholder = `\u0000${randomUUID()}`;
const placeholderJson = JSON.stringify(placeholder);

/** The large body an answer's placeholder stands for, set by `preSerialization`. */
const largeBodies = new WeakMap<FastifyReply, string>();

/**
 * A large answer (an article with a 5 MB body) is encoded and written in parts, each in a turn of
 * the event loop of its own: measured and encoded at once, a 5 MB answer held the loop for
 * 40–80 ms. It goes out with chunked transfer encoding instead of a Content-Length.
 *
 * An article's large body is not even serialised with the rest: escaping it as one JSON string
 * took 16–50 ms, and cutting the answer into parts another 16–34 ms (the first cut copies the
 * whole answer into one flat string). The rest is serialised with a placeholder for it, and the
 * body is escaped a part at a time in between; JSON escapes each character on its own, so the
 * parts join to exactly the text of the whole.
 */
export function largeAnswersInParts(app: FastifyInstance): void {
  app.addHook('preSerialization', async (_request, reply, payload) => {
    const data = (payload as { data?: { body?: unknown } } | null)?.data;
    if (typeof data?.body !== 'string' || data.body.length < largeAnswer) return payload;
    largeBodies.set(reply, data.body);
    return { ...(payload as object), data: { ...data, body: placeholder } };
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (typeof payload !== 'string') return payload;
    const body = largeBodies.get(reply);
    const at = body === undefined ? -1 : payload.indexOf(placeholderJson);
    if (body !== undefined && at >= 0) return Readable.from(withBody(payload.slice(0, at), body, payload.slice(at + placeholderJson.length)));
    return payload.length >= largeAnswer ? Readable.from(parts(payload)) : payload;
  });
}

async function* parts(text: string): AsyncGenerator<Buffer> {
  for (const part of textParts(text, partChars)) {
    await nextTurn();
    yield Buffer.from(part, 'utf8');
  }
}

/** `before`, `body` as a JSON string escaped a part per turn, then `after`. */
async function* withBody(before: string, body: string, after: string): AsyncGenerator<Buffer> {
  yield Buffer.from(`${before}"`, 'utf8');
  for (const part of textParts(body, partChars)) {
    await nextTurn();
    yield Buffer.from(JSON.stringify(part).slice(1, -1), 'utf8');
  }
  yield Buffer.from(`"${after}`, 'utf8');
}
