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
 * A fixed-window limit per key. In memory for one node; in Redis across nodes.
 *
 * Redis can fail for a moment (a restart, a failover, a killed connection). The node then counts
 * the key itself, from the count Redis last answered it (`seen`), and adds what it allowed
 * meanwhile (`unshared`) to Redis's count at its next answer from Redis. So one node never allows
 * more than the limit; with several, a key gets more only while a node is cut off from Redis: at
 * most what that node's last answer from Redis left of the window (docs/operations.md).
 */
export class WindowLimiter {
  private readonly shared: RateLimiterRedis | undefined;
  /** Alone: the limit. With Redis: each key's count as Redis last answered it, plus what this node allowed since without it. */
  private readonly seen: RateLimiterMemory;
  /** With Redis: requests this node allowed per key while Redis failed, not yet counted there. */
  private readonly unshared: RateLimiterMemory;

  constructor(
    private readonly options: WindowOptions,
    redis?: Redis,
  ) {
    this.shared = redis ? new RateLimiterRedis({ ...options, storeClient: redis }) : undefined;
    this.seen = new RateLimiterMemory(options);
    this.unshared = new RateLimiterMemory(options);
  }

  async consume(key: string): Promise<LimitState> {
    if (!this.shared) return this.consumeHere(key);
    // Taken before the call, so that two requests at once do not both add them.
    const unshared = (await this.unshared.get(key))?.consumedPoints ?? 0;
    if (unshared > 0) await this.unshared.delete(key);
    let result: RateLimiterRes;
    let allowed = true;
    try {
      result = await this.shared.consume(key, 1 + unshared);
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) return this.consumeWithoutRedis(key, unshared);
      result = refusal;
      allowed = false;
    }
    await this.seen.set(key, result.consumedPoints, Math.max(1, result.msBeforeNext) / 1000);
    return this.state(result, allowed);
  }

  /** Redis failed: this node's count decides, and what it allows is owed to Redis. */
  private async consumeWithoutRedis(key: string, unshared: number): Promise<LimitState> {
    const state = await this.consumeHere(key);
    const owed = unshared + (state.allowed ? 1 : 0);
    if (owed > 0) await this.unshared.penalty(key, owed);
    return state;
  }

  private async consumeHere(key: string): Promise<LimitState> {
    try {
      return this.state(await this.seen.consume(key), true);
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

/** One sign-in rule: `failures` within `window` seconds lock the key for `lock` seconds. */
interface SignInRule {
  name: 'pair' | 'email' | 'address';
  failures: number;
  window: number;
  lock: number;
}

/** Why sign-in must wait, and for how long (seconds). */
export interface SignInWait {
  rule: SignInRule['name'];
  seconds: number;
  /** The whole lock this rule imposes (seconds), as the documentation states it. */
  lock: number;
}

/**
 * Slows down guessing, shared across nodes when Redis is set. Three counts of failed sign-ins
 * within 15 minutes: one e-mail from one address (5, then a one-minute lock), one e-mail from
 * any addresses (credential stuffing; then a 15-minute lock), and one address for any e-mails
 * (spraying; then a 15-minute lock). A lock ends the count: after it, counting starts anew. A
 * success clears the e-mail's counts, never the address's (an attacker's own successful
 * sign-in must not reset a spray).
 */
export class SignInThrottle {
  private readonly rules: { rule: SignInRule; limiter: RateLimiterAbstract }[];

  constructor(limits: { perEmail: number; perAddress: number }, redis?: Redis) {
    const rules: SignInRule[] = [
      { name: 'pair', failures: 5, window: 15 * 60, lock: 60 },
      { name: 'email', failures: limits.perEmail, window: 15 * 60, lock: 15 * 60 },
      { name: 'address', failures: limits.perAddress, window: 15 * 60, lock: 15 * 60 },
    ];
    this.rules = rules.map((rule) => {
      const options = { points: rule.failures, duration: rule.window, keyPrefix: `anchorage:signin:${rule.name}` };
      const limiter = redis
        ? new RateLimiterRedis({ ...options, storeClient: redis, insuranceLimiter: new RateLimiterMemory(options) })
        : new RateLimiterMemory(options);
      return { rule, limiter };
    });
  }

  private key(rule: SignInRule, email: string, ip: string): string {
    const mail = email.trim().toLowerCase();
    return rule.name === 'pair' ? `${mail}|${ip}` : rule.name === 'email' ? mail : ip;
  }

  /** The longest lock the caller is under, or undefined when it may try now. */
  async wait(email: string, ip: string): Promise<SignInWait | undefined> {
    let longest: SignInWait | undefined;
    for (const { rule, limiter } of this.rules) {
      const state = await limiter.get(this.key(rule, email, ip));
      if (!state || state.consumedPoints <= rule.failures) continue;
      const seconds = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
      if (!longest || seconds > longest.seconds) longest = { rule: rule.name, seconds, lock: rule.lock };
    }
    return longest;
  }

  async failed(email: string, ip: string): Promise<void> {
    for (const { rule, limiter } of this.rules) {
      const key = this.key(rule, email, ip);
      const counted = await limiter.penalty(key, 1);
      // The last allowed failure starts the lock at once (block() marks the key as over its points).
      if (counted.consumedPoints >= rule.failures) await limiter.block(key, rule.lock);
    }
  }

  async succeeded(email: string, ip: string): Promise<void> {
    for (const { rule, limiter } of this.rules) {
      if (rule.name !== 'address') await limiter.delete(this.key(rule, email, ip));
    }
  }
}
