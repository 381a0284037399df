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

/** New OAuth clients per client address and hour (re-registering known metadata does not count). */
export const registrationsPerHour = 100;

/** A window of `points` per `duration` seconds; the key prefix keeps limits apart in one Redis. */
export interface WindowOptions {
  points: number;
  duration: number;
  keyPrefix: string;
}

/**
 * A fixed-window limit per key. In memory for one node; in Redis, with an in-memory insurance
 * limiter for when Redis is unreachable, across nodes.
 */
export class WindowLimiter {
  private readonly limiter: RateLimiterAbstract;

  constructor(
    private readonly options: WindowOptions,
    redis?: Redis,
  ) {
    this.limiter = redis
      ? new RateLimiterRedis({ ...options, storeClient: redis, insuranceLimiter: new RateLimiterMemory(options) })
      : new RateLimiterMemory(options);
  }

  async consume(key: string): Promise<LimitState> {
    try {
      return this.state(await this.limiter.consume(key), true);
    } catch (result) {
      if (result instanceof RateLimiterRes) return this.state(result, false);
      throw result;
    }
  }

  private state(result: RateLimiterRes, allowed: boolean): LimitState {
    const retryAfter = Math.max(1, Math.ceil(result.msBeforeNext / 1000));
    return {
      allowed,
      limit: this.options.points,
      remaining: Math.max(0, result.remainingPoints),
      resetAt: Math.ceil((Date.now() + result.msBeforeNext) / 1000),
      retryAfter,
    };
  }
}

/** The request limit: 60 per minute per credential (API key or MCP grant). */
export class RequestLimiter extends WindowLimiter {
  constructor(redis?: Redis) {
    super({ points: requestsPerMinute, duration: 60, keyPrefix: 'anchorage:rpm' }, redis);
  }
}

/**
 * Slows down guessing: after 5 failed sign-ins for one e-mail from one address within 15
 * minutes, further attempts wait out a one-minute block that is shared across nodes when Redis is set.
 */
export class SignInThrottle {
  private readonly limiter: RateLimiterAbstract;

  constructor(redis?: Redis) {
    const options = { points: 5, duration: 15 * 60, blockDuration: 60, keyPrefix: 'anchorage:signin' };
    this.limiter = redis
      ? new RateLimiterRedis({ ...options, storeClient: redis, insuranceLimiter: new RateLimiterMemory(options) })
      : new RateLimiterMemory(options);
  }

  private key = (email: string, ip: string) => `${email.trim().toLowerCase()}|${ip}`;

  /** Seconds the caller must wait before another attempt, 0 when it may try now. */
  async waitSeconds(email: string, ip: string): Promise<number> {
    const state = await this.limiter.get(this.key(email, ip));
    return state && state.consumedPoints >= 5 ? Math.ceil(state.msBeforeNext / 1000) : 0;
  }

  async failed(email: string, ip: string): Promise<void> {
    // Past 5 points the limiter blocks the key for blockDuration; the rejection is expected.
    await this.limiter.consume(this.key(email, ip)).catch(() => undefined);
  }

  async succeeded(email: string, ip: string): Promise<void> {
    await this.limiter.delete(this.key(email, ip));
  }
}
