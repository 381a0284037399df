import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, type ErrorBody, type FieldIssue, type FieldWords, issueFields, notFound, validationFailed } from '../core/errors.js';
import { storageFailureOf } from '../db/failures.js';
import { DatabaseUnavailable } from '../db/unavailable.js';

const requestWords: FieldWords = { whole: '(request)', notTaken: 'This request does not take this field.' };

/** A REST request's zod issues as the `fields` of validation_failed. */
export const fieldsOf = (issues: readonly FieldIssue[]) => issueFields(issues, requestWords);

/** Maps anything thrown while serving a request to one error of the catalogue. */
export function toAppError(error: unknown, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  const storage = storageFailureOf(error);
  if (storage) return storage.error;
  if (error instanceof DatabaseUnavailable) return error.toAppError();
  const fastifyError = error as FastifyError;
  if (hasZodFastifySchemaValidationErrors(fastifyError)) {
    // A path id that is not an integer names no resource.
    if (fastifyError.validationContext === 'params') return notFound(request.url.includes('/sites/') ? 'site' : 'article');
    const issues = fastifyError.validation.map((v) => ({
      path: v.instancePath.split('/').filter(Boolean),
      message: v.message ?? 'This value is not accepted.',
      code: v.keyword,
      keys: (v.params as { keys?: string[] }).keys,
    }));
    return validationFailed(fieldsOf(issues));
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return tooLarge(request);
    // Too many files or fields is not a size problem: the form breaks the one-image rule.
    case 'FST_FILES_LIMIT':
      return validationFailed({ image: ['Send one file, in the field image.'] });
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return validationFailed({ '(request)': ['Too many form fields.'] });
    case 'FST_PROTO_VIOLATION':
    case 'FST_MP_PREMATURE_CLOSE':
      return new AppError('invalid_json', 'The request body is not valid multipart/form-data.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? new AppError('unsupported_media_type', 'Send the request body as application/json.')
        : new AppError('invalid_json', 'The request body does not match its Content-Length.');
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return new AppError('invalid_json', 'The request body is not valid JSON.');
  }
  // A plugin's own client error (static files: a path outside the folder, a failed precondition) keeps its meaning.
  const status = fastifyError.statusCode ?? (error as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) return clientErrorOf(status, fastifyError.code);
  return new AppError('internal_error', 'Something went wrong on our side; the request id is in the logs.');
}

/** A body over the route's limit, with the limit stated (the multipart limit is also the file limit). */
function tooLarge(request: FastifyRequest): AppError {
  const limit = request.routeOptions.bodyLimit;
  if (limit === undefined) return new AppError('payload_too_large', 'The request body is too large.');
  const kind = /^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '') ? 'Multipart' : 'Request';
  return new AppError('payload_too_large', `${kind} bodies may be at most ${limit} bytes (${+(limit / 1048576).toFixed(1)} MiB).`);
}

/** The catalogue's error for an HTTP client error raised by a plugin rather than by our code. */
function clientErrorOf(status: number, code: string | undefined): AppError {
  if (status === 404 || code === 'FST_STATIC_FORBIDDEN_PATH') return new AppError('not_found', 'Nothing is served at this path.');
  if (status === 403) return new AppError('forbidden', 'This request is not allowed.');
  if (status === 412) return new AppError('precondition_failed', 'The If-Match or If-Unmodified-Since condition does not hold.');
  if (status === 413) return new AppError('payload_too_large', 'The request body is too large.');
  if (status === 415) return new AppError('unsupported_media_type', 'The request body has an unsupported content type.');
  return validationFailed({ '(request)': ['The request cannot be served as sent.'] });
}

/** Each connection's latest answer, so that an error in its request's body can tell whether it was answered. */
const latestAnswer = new WeakMap<Socket, ServerResponse>();

/** Keeps `latestAnswer` for `clientErrorHandler`: call once on each listener's server. */
export function trackAnswers(server: Server): void {
  server.on('request', (request: IncomingMessage, response: ServerResponse) => latestAnswer.set(request.socket, response));
}

/**
 * Fastify's `clientErrorHandler`: a request Node cannot parse (bad bytes, conflicting framing,
 * headers over the size limit) gets an Error body of the catalogue, as Fastify's default would
 * otherwise write its own (`statusCode`, framework wording). Nothing is written when the bytes
 * that failed were the body of a request already answered (a route that answers without reading
 * it): a second answer would be read as the answer to the client's next request.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const answer = latestAnswer.get(socket);
  if (answer !== undefined && answer.headersSent && !answer.req.complete) {
    socket.destroy(error);
    return;
  }
  const appError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('payload_too_large', 'The request headers are too large.')
      : new AppError('invalid_json', 'The request is not valid HTTP/1.1.');
  const body = JSON.stringify(appError.toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * Fastify's `frameworkErrors`: a URL that cannot be decoded, or a path parameter longer than the
 * router takes, names nothing we serve (a 404 of the catalogue, not the framework's own body).
 */
export function frameworkErrors(_error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(request, reply, new AppError('not_found', 'Nothing is served at this path.'));
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  request.errorCode = error.code;
  if (error.retryAfter !== undefined) reply.header('retry-after', error.retryAfter);
  const body: ErrorBody = error.toBody();
  return reply.code(error.status).type('application/json; charset=utf-8').send(body);
}

/**
 * An answer sent in parts (`largeAnswersInParts`) to a client already gone: the connection closed
 * the stream before it was read. Nothing failed on our side (a write was already saved and logged).
 */
const leftBeforeTheAnswer = (error: unknown, reply: FastifyReply): boolean =>
  reply.raw.destroyed && (error as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE';

/** A full disk or a held write lock, logged with the database's own code: the operator acts on it. */
export function logStorageFailure(error: unknown, request: FastifyRequest): void {
  const storage = storageFailureOf(error);
  if (storage) request.log.error({ err: error, cause: storage.cause }, `write refused by the database (${storage.cause})`);
}

/** One error handler for the whole app: every error leaves as an Error body, never a stack or SQL. */
export const errorsPlugin = fp(async (app: FastifyInstance) => {
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error, request);
    if (leftBeforeTheAnswer(error, reply)) request.log.info('the client left before the answer was sent');
    else if (error instanceof DatabaseUnavailable) request.log.warn({ err: error.cause }, 'database connection failed');
    else if (appError.code === 'internal_error') request.log.error({ err: error }, 'unhandled error');
    else logStorageFailure(error, request);
    return sendError(request, reply, appError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, new AppError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`)),
  );
});
