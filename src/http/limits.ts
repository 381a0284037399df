import type { FastifyReply } from 'fastify';
import { AppError } from '../core/errors.js';
import type { Services } from '../services/index.js';
import type { LimitState } from '../services/limits.js';

/** The classic X-RateLimit-* headers and the IETF RateLimit fields for one limit. */
export function setLimitHeaders(reply: FastifyReply, state: LimitState, policy = 'default', window = 60): void {
  // resetAt is rounded up, so round now up too: t never exceeds the window (w).
  const reset = Math.max(0, state.resetAt - Math.ceil(Date.now() / 1000));
  if (policy === 'default') {
    reply.header('x-ratelimit-limit', state.limit);
    reply.header('x-ratelimit-remaining', state.remaining);
    reply.header('x-ratelimit-reset', state.resetAt);
  }
  const policies = [reply.getHeader('ratelimit-policy'), `"${policy}";q=${state.limit};w=${window}`].filter(Boolean);
  const values = [reply.getHeader('ratelimit'), `"${policy}";r=${state.remaining};t=${reset}`].filter(Boolean);
  reply.header('ratelimit-policy', policies.join(', '));
  reply.header('ratelimit', values.join(', '));
}

/** The 429 of an exhausted request limit; Retry-After is set from it by the error handler. */
export const rateLimited = (state: LimitState): AppError =>
  new AppError(
    'rate_limited',
    `At most ${state.limit} requests per minute; retry in ${state.retryAfter} s.`,
    { limit: state.limit },
    state.retryAfter,
  );

/**
 * Counts a request without a valid key or token against its client address. Over the limit the
 * answer is a 429 instead of the 401, so guessing keys or tokens is slowed down across nodes.
 */
export async function refusedUnauthenticated(services: Services, clientIp: string, unauthenticated: AppError): Promise<AppError> {
  const state = await services.unauthenticatedLimiter.consume(clientIp);
  if (state.allowed) return unauthenticated;
  return new AppError(
    'rate_limited',
    `At most ${state.limit} requests per minute without a valid key or token from one address; retry in ${state.retryAfter} s.`,
    { limit: state.limit },
    state.retryAfter,
  );
}

/** The largest JSON body REST and MCP take (413 payload_too_large above it). */
export const jsonBodyLimit = 5 * 1024 * 1024;

/** The largest multipart body: a REST image upload, a staff member's import file in the UI. */
export const multipartBodyLimit = 12 * 1024 * 1024;
