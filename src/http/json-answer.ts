import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { holdsTextPlaceholder, isSharedText, isTextPieces, jsonWithTexts, type LargeText, textParts, textPlaceholder } from '../core/text-parts.js';

/** Answers this long (characters) are sent in parts. */
const largeAnswer = 1_000_000;
/** Characters encoded per turn of the event loop. */
const partChars = 256 * 1024;

/** The large body an answer's placeholder stands for, set by `preSerialization`. */
const largeBodies = new WeakMap<FastifyReply, LargeText>();

/**
 * A large answer (an article with a body of megabytes) is encoded and written in parts, each in a
 * turn of the event loop of its own: measured and encoded at once, it would hold the loop. It
 * goes out with chunked transfer encoding instead of a Content-Length.
 *
 * An article's large body is not even serialised with the rest: escaping it as one JSON string,
 * and then cutting the answer into parts (the first cut copies the whole answer into one flat
 * string), would each hold the loop. The rest is serialised with a placeholder for it, and the
 * body is escaped a part at a time in between (`jsonWithTexts`); a body that is a `SharedText`
 * (a large PUT's, answered as sent) is escaped from its bytes, and a `TextPieces` (a large body
 * read from PostgreSQL) a piece at a time.
 */
export function largeAnswersInParts(app: FastifyInstance): void {
  // Every answer runs both hooks: they take Fastify's callback rather than returning a promise.
  app.addHook('preSerialization', (_request, reply, payload, done) => {
    const data = (payload as { data?: { body?: unknown } } | null)?.data;
    const body = data?.body;
    if (!isSharedText(body) && !isTextPieces(body) && (typeof body !== 'string' || body.length < largeAnswer)) return done(null, payload);
    largeBodies.set(reply, body);
    done(null, { ...(payload as object), data: { ...data, body: textPlaceholder } });
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (typeof payload !== 'string') return done(null, payload);
    const body = largeBodies.get(reply);
    if (body !== undefined && holdsTextPlaceholder(payload)) return done(null, Readable.from(encoded(jsonWithTexts(payload, [body]))));
    done(null, payload.length >= largeAnswer ? Readable.from(parts(payload)) : payload);
  });
}

async function* parts(text: string): AsyncGenerator<Buffer> {
  for (const part of textParts(text, partChars)) {
    await nextTurn();
    yield Buffer.from(part, 'utf8');
  }
}

async function* encoded(texts: AsyncIterable<string>): AsyncGenerator<Buffer> {
  for await (const text of texts) yield Buffer.from(text, 'utf8');
}
