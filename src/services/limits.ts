import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';

export interface LimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the current window ends. */
  resetAt: number;
  /** Seconds until the window ends (for Retry-After). */
  retryAfter: number;
}

export const requestsPerMinute = 60;
const windowSeconds = 60;

/**
 * The request limit: 60 per minute per credential, in fixed windows. In memory for one node;
 * in Redis, with an in-memory insurance limiter for when Redis is unreachable, across nodes.
 */
export class RequestLimiter {
  private readonly limiter: RateLimiterAbstract;

  constructor(redis?: Redis) {
    const options = { points: requestsPerMinute, duration: windowSeconds, keyPrefix: 'anchorage:rpm' };
    this.limiter = redis
      ? new RateLimiterRedis({
          ...options,
          storeClient: redis,
          insuranceLimiter: new RateLimiterMemory(options),
        })
      : new RateLimiterMemory(options);
  }

  async consume(credential: string): Promise<LimitState> {
    try {
      return this.state(await this.limiter.consume(credential), true);
    } catch (result) {
      if (result instanceof RateLimiterRes) return this.state(result, false);
      throw result;
    }
  }

  private state(result: RateLimiterRes, allowed: boolean): LimitState {
    const retryAfter = Math.max(1, Math.ceil(result.msBeforeNext / 1000));
    return {
      allowed,
      limit: requestsPerMinute,
      remaining: Math.max(0, result.remainingPoints),
      resetAt: Math.ceil((Date.now() + result.msBeforeNext) / 1000),
      retryAfter,
    };
  }
}
