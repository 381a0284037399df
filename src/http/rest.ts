import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorCatalogue, type ErrorCode } from '../core/errors.js';
import { runOperation } from '../operations/run.js';
import { errorSchema } from '../operations/schemas.js';
import type { Operation } from '../operations/types.js';
import type { Services } from '../services/index.js';
import { authenticateApiKey } from './auth.js';
import { limitExceeded, setLimitHeaders } from './limits.js';

const errorDescriptions: Record<number, string> = {
  400: 'Malformed JSON (`invalid_json`).',
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
};

/** The OpenAPI responses of an operation: 200 and one entry per status of its errors. */
function responsesOf(operation: Operation): Record<number, z.ZodType> {
  const codes = new Set<ErrorCode>(['unauthenticated', 'internal_error', ...operation.errors]);
  const responses: Record<number, z.ZodType> = { 200: operation.output };
  for (const code of codes) {
    const status = errorCatalogue[code];
    responses[status] = errorSchema.describe(errorDescriptions[status] ?? code);
  }
  return responses;
}

const pick = (shape: z.ZodRawShape, keys: string[]) => Object.fromEntries(keys.map((k) => [k, shape[k]!]));

/** Where each input field travels over REST: path id, query string or JSON body. */
export function restShape(operation: Operation) {
  const keys = Object.keys(operation.input.shape).filter((k) => k !== operation.rest.pathId);
  const queryKeys = operation.rest.method === 'GET' ? keys : (operation.rest.queryFields ?? []);
  const bodyKeys = keys.filter((k) => !queryKeys.includes(k));
  return { queryKeys, bodyKeys };
}

/** Authenticates, then applies the per-key request limit with its headers. */
export async function authenticateAndLimit(request: FastifyRequest, reply: FastifyReply, services: Services) {
  const actor = await authenticateApiKey(request, services);
  request.actor = actor;
  const state = await services.requestLimiter.consume(`key:${actor.credential.kind === 'api_key' ? actor.credential.id : 0}`);
  setLimitHeaders(reply, state);
  if (!state.allowed) throw limitExceeded(reply, state, 'rate_limited');
}

/** One REST route per operation, generated from its declaration. */
export async function restRoutes(app: FastifyInstance, options: { services: Services; operations: readonly Operation[] }) {
  const { services } = options;
  for (const operation of options.operations) {
    const shape = operation.input.shape;
    const { queryKeys, bodyKeys } = restShape(operation);
    const pathId = operation.rest.pathId;
    app.withTypeProvider<ZodTypeProvider>().route({
      method: operation.rest.method,
      url: operation.rest.path.replace(/\{(\w+)\}/g, ':$1'),
      schema: {
        operationId: operation.name,
        summary: operation.summary,
        description: operation.description,
        tags: [operation.scope === 'write' ? 'Article writes' : 'Reporting'],
        security: [{ bearerKey: [] }, { headerKey: [] }],
        ...(pathId ? { params: z.object({ id: shape[pathId]! }) } : {}),
        ...(queryKeys.length > 0 ? { querystring: z.object(pick(shape, queryKeys)) } : {}),
        ...(bodyKeys.length > 0 ? { body: z.object(pick(shape, bodyKeys)) } : {}),
        response: responsesOf(operation),
      },
      onRequest: (request, reply) => authenticateAndLimit(request, reply, services),
      handler: async (request, reply) => {
        const input: Record<string, unknown> = {
          ...(request.query as object),
          ...(request.body as object),
          ...(pathId ? { [pathId]: (request.params as { id: number }).id } : {}),
        };
        const result = await runOperation(operation, input, {
          actor: request.actor!,
          services,
          preconditions: {
            ifMatch: request.headers['if-match'],
            idempotencyKey: request.headers['idempotency-key'] as string | undefined,
          },
        });
        if (result.etag) reply.header('etag', result.etag);
        return result.body;
      },
    });
  }
}
