import type { FastifyRequest } from 'fastify';
import { AppError } from '../core/errors.js';
import type { Actor } from '../services/actor.js';
import type { Services } from '../services/index.js';

const unauthenticated = (message: string) => new AppError('unauthenticated', message);

/** The key a request carries, from `Authorization: Bearer` or `X-API-Key`; both must agree. */
export function presentedKey(request: FastifyRequest): string {
  const authorization = request.headers.authorization;
  const header = request.headers['x-api-key'];
  if (Array.isArray(header)) throw unauthenticated('Send one X-API-Key header.');
  let bearer: string | undefined;
  if (authorization !== undefined) {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
    if (!match) throw unauthenticated('The Authorization header must be "Bearer <API key>".');
    bearer = match[1];
  }
  if (bearer !== undefined && header !== undefined && bearer !== header.trim()) {
    throw unauthenticated('Authorization and X-API-Key carry different keys.');
  }
  const key = bearer ?? header?.trim();
  if (!key) throw unauthenticated('Send your API key as "Authorization: Bearer <key>" or "X-API-Key: <key>".');
  return key;
}

/** The actor of a request's API key; 401 for a missing, unknown or revoked key. */
export async function authenticateApiKey(request: FastifyRequest, services: Services): Promise<Actor> {
  const actor = await services.keys.authenticate(presentedKey(request), request.info);
  if (!actor) throw unauthenticated('The API key is unknown or revoked.');
  return actor;
}
