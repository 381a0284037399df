import type { FastifyReply } from 'fastify';
import { AppError } from '../core/errors.js';
import type { LimitState } from '../services/limits.js';

/** The classic X-RateLimit-* headers and the IETF RateLimit fields for one limit. */
export function setLimitHeaders(reply: FastifyReply, state: LimitState, policy = 'default', window = 60): void {
  const reset = Math.max(0, state.resetAt - Math.floor(Date.now() / 1000));
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

/** The 429 of an exhausted limit, with Retry-After. */
export function limitExceeded(reply: FastifyReply, state: LimitState, code: 'rate_limited' | 'edit_limit_exceeded'): AppError {
  reply.header('retry-after', state.retryAfter);
  const message =
    code === 'rate_limited'
      ? `At most ${state.limit} requests per minute per key; retry in ${state.retryAfter} s.`
      : `At most ${state.limit} article edits per UTC day per account; retry in ${state.retryAfter} s.`;
  return new AppError(code, message, { limit: state.limit });
}
