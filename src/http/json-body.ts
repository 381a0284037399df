import type { Readable } from 'node:stream';
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import { holdsAtMost, maxBodyValues } from '../core/body-values.js';
import { AppError } from '../core/errors.js';
import { parseForm } from '../core/form.js';
import { withThousands } from '../core/values.js';
import { isSharedText, type SharedText } from '../core/text-parts.js';
import type { HtmlPool } from '../services/html-pool.js';

/**
 * Request bodies this large (bytes) are parsed by a thread of the HTML pool: parsing dense JSON of
 * this size and more holds the event loop too long.
 */
const largeJson = 256 * 1024;

const tooManyValues = () =>
  new AppError('payload_too_large', `The request body holds more than ${withThousands(maxBodyValues)} values (JSON values or form fields). Nothing was saved.`);

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Fields of the JSON body whose large strings the handler takes as `SharedText`s
     * (`sharedTextsOf`), never made strings on the event loop. Validation sees each such field as
     * the empty string: only fields that take any string may be named.
     */
    sharedTextFields?: readonly string[];
  }
}

/** The `SharedText`s taken out of each request's body, by field. */
const requestTexts = new WeakMap<FastifyRequest, Record<string, SharedText>>();

/** The fields of `request`'s body that came as `SharedText`s (see `sharedTextFields`). */
export const sharedTextsOf = (request: FastifyRequest): Record<string, SharedText> => requestTexts.get(request) ?? {};

/** Takes the `SharedText`s out of a parsed body into `requestTexts`, leaving empty strings to validate. */
function takeSharedTexts(request: FastifyRequest, value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  const body = value as Record<string, unknown>;
  const texts: Record<string, SharedText> = {};
  for (const [field, text] of Object.entries(body)) {
    if (!isSharedText(text)) continue;
    texts[field] = text;
    body[field] = '';
  }
  if (Object.keys(texts).length > 0) requestTexts.set(request, texts);
}

type Done = (error: Error | null, value?: unknown) => void;

/** `done` with `value`, or with `tooManyValues` past `maxBodyValues`. */
const boundedDone = (done: Done) => (error: Error | null, value?: unknown) =>
  error ? done(error) : holdsAtMost(value, maxBodyValues) ? done(null, value) : done(tooManyValues());

/**
 * JSON request bodies, parsed as Fastify's own parser does (prototype and constructor poisoning
 * refused, the same errors), holding at most `maxBodyValues` values. A large one is parsed off the
 * event loop, by a thread of the HTML pool: while a body of megabytes is decoded and parsed,
 * every other request would wait. The large strings of the route's `sharedTextFields`
 * come from that thread as `SharedText`s.
 */
export function jsonBodyParser(app: FastifyInstance, pool: HtmlPool): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (request, payload, done) => {
    readBody(request, payload, (error, body) => {
      if (error || !body) done(error);
      else if (body.size < largeJson) parse(request, joined(body).toString('utf8'), boundedDone(done));
      else {
        pool.parseBody(body.parts, 'json', request.routeOptions.config.sharedTextFields).then(
          (outcome) => {
            if (!outcome.ok) done(outcome.tooManyValues ? tooManyValues() : new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
            else {
              takeSharedTexts(request, outcome.value);
              done(null, outcome.value);
            }
          },
          (failure: Error) => done(failure, undefined),
        );
      }
    });
  });
}

/** Form bodies this large (bytes) are parsed by a thread of the HTML pool. */
const largeForm = 64 * 1024;

/**
 * Form bodies (`application/x-www-form-urlencoded`: the UI, the OAuth endpoints), parsed as
 * @fastify/formbody parsed them (`parseForm`), holding at most `maxBodyValues` fields, registered
 * in the context of the routes that take them. A large one is parsed by a thread of the HTML
 * pool: a form of megabytes would hold the event loop, and the OAuth token endpoint takes forms
 * from anyone.
 */
export function formBodyParser(app: FastifyInstance, pool: HtmlPool): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', (request, payload, done) => {
    readBody(request, payload, (error, body) => {
      if (error || !body) done(error);
      else if (body.size < largeForm) boundedDone(done)(null, parseForm(joined(body).toString('utf8')));
      else {
        pool.parseBody(body.parts, 'form').then(
          (outcome) => (outcome.ok ? done(null, Object.assign(Object.create(null) as object, outcome.value)) : done(tooManyValues(), undefined)),
          (failure: Error) => done(failure, undefined),
        );
      }
    });
  });
}

/** A request body as it arrived: the chunks read from the socket, `size` bytes in all. */
interface ReceivedBody {
  parts: Buffer[];
  size: number;
}

const joined = ({ parts, size }: ReceivedBody): Buffer => (parts.length === 1 ? parts[0]! : Buffer.concat(parts, size));

/**
 * The body's chunks, with Fastify's checks and errors (its `bodyLimit`, a Content-Length that the
 * body does not match). A large body goes to a pool thread in the chunks it arrived in, each a
 * buffer of its own (transferred, not copied), and the thread joins them: the event loop never
 * copies it. Joined here (Fastify's way, at the end), or copied chunk by chunk into a buffer of
 * its length as it arrived, a large body held the loop, most of it faulting in the fresh
 * memory.
 */
function readBody(request: FastifyRequest, payload: Readable, done: (error: Error | null, body?: ReceivedBody) => void): void {
  const limit = request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY;
  const declared = Number(request.headers['content-length']);
  if (declared > limit) {
    done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    return;
  }
  const parts: Buffer[] = [];
  let received = 0;
  const finish = (error: Error | null, body?: ReceivedBody) => {
    payload.off('data', onData);
    payload.off('end', onEnd);
    payload.off('error', onError);
    done(error, body);
  };
  const onData = (chunk: Buffer) => {
    // Past the limit, reading stops; any other mismatch with Content-Length is found at the end.
    if (received + chunk.length > limit) {
      finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    parts.push(chunk);
    received += chunk.length;
  };
  const onEnd = () => {
    if (!Number.isNaN(declared) && received !== declared) finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    else finish(null, { parts, size: received });
  };
  const onError = (error: Error & { statusCode?: number }) => {
    if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400;
    finish(error);
  };
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
  payload.resume();
}
