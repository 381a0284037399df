import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError, errorCatalogue, type ErrorCode, validationFailed } from '../core/errors.js';
import { runOperation } from '../operations/run.js';
import { errorSchema } from '../operations/schemas.js';
import type { Operation, OperationResult } from '../operations/types.js';
import type { Actor } from '../services/actor.js';
import type { Services } from '../services/index.js';
import { fieldsOf } from '../http/errors.js';
import { sharedTextsOf } from '../http/json-body.js';
import { jsonBodyLimit, multipartBodyLimit, rateLimited, refusedUnauthenticated, setLimitHeaders } from '../http/limits.js';
import { authenticateApiKey } from './auth.js';
import { noneMatchFails } from './conditional.js';

const errorDescriptions: Record<number, string> = {
  400: 'Malformed request: not valid HTTP/1.1, or a body that is not valid JSON or multipart (`invalid_json`).',
  401: 'Missing or invalid credentials (`unauthenticated`).',
  403: 'Caller not permitted (`forbidden`, `insufficient_scope`).',
  404: 'Website or article not found, including not on the caller’s account (`not_found`).',
  409: 'Conflict on edit: a replacement did not match as required (`replacement_failed`).',
  412: 'The `If-Match` ETag is stale (`precondition_failed`).',
  413: 'Request body too large (`payload_too_large`).',
  415: 'Unsupported content type (`unsupported_media_type`).',
  422: 'Request rejected as invalid (see `error`).',
  429: 'Too many requests; a limit was exceeded (`rate_limited`, `edit_limit_exceeded`).',
  500: 'Unexpected server error (`internal_error`).',
  503: 'The node is overloaded or shutting down, or its database is busy with another process’s write; retry after `Retry-After` seconds, possibly on another node (`service_unavailable`).',
  507: 'The server’s storage is full; nothing was saved. Retry once space has been freed (`insufficient_storage`).',
};

/** Errors any request can get: a malformed request, an unexpected failure, an overloaded node. */
const anyRequestErrors = (Object.keys(errorCatalogue) as ErrorCode[]).filter(
  (code) => code === 'invalid_json' || errorCatalogue[code] >= 500,
);

/** The OpenAPI error responses for these codes and those of any request: one entry per status. */
export function errorResponses(codes: readonly ErrorCode[]): Record<number, z.ZodType> {
  const responses: Record<number, z.ZodType> = {};
  for (const code of new Set([...anyRequestErrors, ...codes])) {
    const status = errorCatalogue[code];
    responses[status] = errorSchema.describe(errorDescriptions[status] ?? code);
  }
  return responses;
}

/** The OpenAPI responses of an operation: 200 (and 304 where it sends an ETag on GET) and its errors. */
function responsesOf(operation: Operation): Record<number, z.ZodType> {
  const responses: Record<number, z.ZodType> = { 200: operation.output };
  if (operation.rest.etag && operation.rest.method === 'GET') {
    responses[304] = z.null().describe('Not modified: `If-None-Match` names the current ETag. No body.');
  }
  return { ...responses, ...errorResponses(['unauthenticated', ...operation.errors]) };
}

const pick = (shape: z.ZodRawShape, keys: string[]) => Object.fromEntries(keys.map((k) => [k, shape[k]!]));

/** RFC 9110 `If-Match`: `*` or a list of entity tags, each in double quotes (`"a45-v3"`, `W/"…"`). */
const ifMatchSyntax = /^\s*(?:\*|(?:W\/)?"[^"\s]*"(?:\s*,\s*(?:W\/)?"[^"\s]*")*)\s*$/;

const writeHeaders = z.looseObject({
  'if-match': z
    .string()
    .regex(ifMatchSyntax, { error: 'The If-Match header is malformed: send the ETag exactly as GET returns it, in its double quotes (such as "a45-v3"), or *. Nothing was saved.' })
    .optional()
    .describe('The ETag from GET, in its double quotes; a stale one is 412 precondition_failed, one without quotes 422 validation_failed.'),
  'idempotency-key': z
    .string()
    .max(255)
    // Node's HTTP parser refuses them in any header; a request made in process (inject) is not
    // parsed, and PostgreSQL's text cannot hold U+0000 (it answered 500).
    .regex(/^[^\u0000-\u001f\u007f]*$/, { error: 'The Idempotency-Key header must not hold control characters. Nothing was saved.' })
    .optional()
    .describe('A retry with the same key and request within 24 h replays the first response.'),
});

const conditionalGetHeaders = z.looseObject({
  'if-none-match': z
    .string()
    .optional()
    .describe('An ETag from an earlier GET (or a list, or `*`): when it still names the article, the answer is 304 with no body.'),
});

/** Where each input field travels over REST: path id, query string or JSON body. */
export function restShape(operation: Operation) {
  const keys = Object.keys(operation.input.shape).filter((k) => k !== operation.rest.pathId);
  const queryKeys = operation.rest.method === 'GET' ? keys : (operation.rest.queryFields ?? []);
  const bodyKeys = keys.filter((k) => !queryKeys.includes(k));
  return { queryKeys, bodyKeys };
}

/** Authenticates, then applies the per-key request limit with its headers. */
export async function authenticateAndLimit(request: FastifyRequest, reply: FastifyReply, services: Services) {
  let actor: Actor;
  try {
    actor = await authenticateApiKey(request, services);
  } catch (error) {
    if (error instanceof AppError && error.code === 'unauthenticated') throw await refusedUnauthenticated(services, request.ip, error);
    throw error;
  }
  request.actor = actor;
  const state = await services.requestLimiter.consume(`key:${actor.credential.kind === 'api_key' ? actor.credential.id : 0}`);
  setLimitHeaders(reply, state);
  if (!state.allowed) throw rateLimited(state);
}

const mediaType = (request: FastifyRequest) => (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/** Bodies are JSON (or multipart where declared): anything else is a 415, before it is parsed. */
function checkContentType(request: FastifyRequest, allowMultipart: boolean): void {
  const hasBody = Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
  if (!hasBody) return;
  const type = mediaType(request);
  if (type === 'application/json' || (allowMultipart && type === 'multipart/form-data')) {
    const length = Number(request.headers['content-length'] ?? 0);
    if (type === 'application/json' && length > jsonBodyLimit) {
      throw new AppError('payload_too_large', `JSON bodies may be at most ${jsonBodyLimit} bytes.`);
    }
    return;
  }
  throw new AppError('unsupported_media_type', allowMultipart ? 'Send application/json or multipart/form-data.' : 'Send the request body as application/json.');
}

/**
 * Each query parameter once, under its own name. The query-string parser turns a repeated
 * parameter into an array and keeps `status[]` as a key of its own: both are a 422 naming the
 * key, never merged or ignored (a parameter the operation does not take at all is refused by the
 * route's strict query schema).
 */
function checkQueryShape(query: Record<string, unknown>, keys: readonly string[]): void {
  const fields: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(query)) {
    const base = name.includes('[') ? name.slice(0, name.indexOf('[')) : undefined;
    if (base !== undefined && keys.includes(base)) fields[name] = [`Arrays are not accepted: give ${base} once, as ${base}=value.`];
    else if (keys.includes(name) && Array.isArray(value)) fields[name] = ['Give this parameter once.'];
  }
  if (Object.keys(fields).length > 0) throw validationFailed(fields);
}

/** The fields and the one file of a multipart request, validated against the declared fields. */
async function readMultipart(request: FastifyRequest, fields: z.ZodObject): Promise<{ values: Record<string, unknown>; upload?: Buffer }> {
  const values: Record<string, string> = {};
  let upload: Buffer | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'image' || upload !== undefined) {
          await part.toBuffer();
          throw validationFailed({ [part.fieldname]: ['Send one file, in the field image.'] });
        }
        upload = await part.toBuffer();
      } else {
        if (Object.hasOwn(values, part.fieldname)) throw validationFailed({ [part.fieldname]: ['Send this field once.'] });
        values[part.fieldname] = String(part.value);
      }
    }
  } catch (error) {
    // Limits (FST_*) and our own refusals keep their meaning; the parser's errors mean a malformed body.
    if (error instanceof AppError || String((error as { code?: unknown }).code ?? '').startsWith('FST_')) throw error;
    throw new AppError('invalid_json', 'The request body is not valid multipart/form-data.');
  }
  const parsed = fields.omit({ image: true }).strict().safeParse(values);
  if (!parsed.success) throw validationFailed(fieldsOf(parsed.error.issues));
  return { values: parsed.data, upload };
}

function sendResult(request: FastifyRequest, reply: FastifyReply, result: OperationResult<unknown>) {
  if (result.etag) reply.header('etag', result.etag);
  if (result.allowance) setLimitHeaders(reply, result.allowance, 'edits', 86_400);
  const safe = request.method === 'GET' || request.method === 'HEAD';
  if (safe && result.etag && noneMatchFails(request.headers['if-none-match'], result.etag)) {
    return reply.code(304).send();
  }
  return result.body;
}

/**
 * One REST route per operation, generated from its declaration, in the order declared. An
 * operation that takes multipart/form-data gets a scope of its own with the multipart plugin:
 * its hooks (a listener on every response, a clean-up after it) would cost every other request.
 */
export async function restRoutes(app: FastifyInstance, options: { services: Services; operations: readonly Operation[] }) {
  for (const operation of options.operations) {
    if (!operation.rest.multipart) {
      operationRoute(app, operation, options.services);
      continue;
    }
    await app.register(async (scope) => {
      await scope.register(multipart, { limits: { fileSize: multipartBodyLimit, files: 1, fields: 10, parts: 12 } });
      operationRoute(scope, operation, options.services);
    });
  }
}

/** The REST route of `operation`. */
function operationRoute(app: FastifyInstance, operation: Operation, services: Services): void {
  const shape = operation.input.shape;
  const { queryKeys, bodyKeys } = restShape(operation);
  const pathId = operation.rest.pathId;
  const multipartFields = operation.rest.multipart;
  // Strict: a field or query parameter the operation does not take is a 422 naming it, never dropped silently.
  const jsonBody = z.strictObject(pick(shape, bodyKeys));
  const query = z.strictObject(pick(shape, queryKeys));
  const isWrite = operation.rest.method !== 'GET';
  app.withTypeProvider<ZodTypeProvider>().route({
    method: operation.rest.method,
    url: operation.rest.path.replace(/\{(\w+)\}/g, ':$1'),
    bodyLimit: multipartFields ? multipartBodyLimit : jsonBodyLimit,
    config: { sharedTextFields: operation.rest.sharedTextFields },
    schema: {
      operationId: operation.name,
      summary: operation.summary,
      description: operation.description,
      tags: [isWrite ? 'Article writes' : 'Reporting'],
      security: [{ bearerKey: [] }, { headerKey: [] }],
      ...(pathId ? { params: z.object({ id: shape[pathId]! }) } : {}),
      querystring: query,
      ...(isWrite ? { headers: writeHeaders } : operation.rest.etag ? { headers: conditionalGetHeaders } : {}),
      ...(operation.rest.etag ? { 'x-etag': true } : {}),
      // A body with two content types is validated in the handler and documented per type.
      ...(bodyKeys.length > 0 && !multipartFields ? { body: jsonBody } : {}),
      ...(multipartFields ? { 'x-body-content': { 'application/json': jsonBody, 'multipart/form-data': multipartFields } } : {}),
      response: responsesOf(operation),
    },
    onRequest: async (request, reply) => {
      await authenticateAndLimit(request, reply, services);
      checkQueryShape(request.query as Record<string, unknown>, queryKeys);
      if (isWrite) checkContentType(request, multipartFields !== undefined);
    },
    handler: async (request, reply) => {
      let body = request.body as Record<string, unknown> | undefined;
      let upload: Buffer | undefined;
      if (multipartFields && request.isMultipart()) {
        ({ values: body, upload } = await readMultipart(request, multipartFields));
      } else if (multipartFields) {
        const parsed = jsonBody.safeParse(body ?? {});
        if (!parsed.success) throw validationFailed(fieldsOf(parsed.error.issues));
        body = parsed.data;
      }
      // Assigned, not spread into a literal: see `withBody` (services/articles.ts).
      const input: Record<string, unknown> = Object.assign({}, request.query, body, sharedTextsOf(request));
      if (pathId) input[pathId] = (request.params as { id: number }).id;
      const result = await runOperation(operation, input, {
        actor: request.actor!,
        services,
        upload,
        preconditions: {
          ifMatch: request.headers['if-match'],
          idempotencyKey: request.headers['idempotency-key'] as string | undefined,
        },
      });
      return sendResult(request, reply, result);
    },
  });
}
