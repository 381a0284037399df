import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestLimiter } from '../../src/services/limits.js';
import { createCustomer, testRedisUrl, useHarness } from '../helpers/harness.js';
import { apiGet, seedSite } from '../helpers/fixtures.js';

// The in-memory limiter (one node). The Redis limiter is tested directly below: key ids of
// separate test databases would share Redis counters, so the HTTP path stays on memory here.
const h = useHarness();

const header = (res: { headers: Record<string, unknown> }, name: string): string => {
  const value = res.headers[name];
  expect(value, name).toBeDefined();
  return String(value);
};

describe('request rate limit over HTTP', () => {
  it('allows 60 requests a minute per key, then answers 429 rate_limited; other keys are unaffected', async () => {
    const a = await createCustomer(h.services);
    const b = await createCustomer(h.services);
    const { siteId } = await seedSite(h.services, a.email, { name: 'limited' });
    const urls = ['/api/v1/sites', `/api/v1/sites/${siteId}/articles`, `/api/v1/sites/${siteId}/stats`];

    let previousRemaining = 60;
    for (let i = 0; i < 60; i++) {
      // Every endpoint draws on the same allowance.
      const res = await apiGet(h.app, urls[i % urls.length]!, a.key);
      const after = Date.now() / 1000;
      expect(res.status, `request ${i + 1}`).toBe(200);
      expect(header(res, 'x-ratelimit-limit')).toBe('60');
      const remaining = Number(header(res, 'x-ratelimit-remaining'));
      expect(remaining, `request ${i + 1}`).toBe(59 - i);
      expect(remaining).toBeLessThan(previousRemaining);
      previousRemaining = remaining;
      const reset = header(res, 'x-ratelimit-reset');
      expect(reset).toMatch(/^\d+$/);
      // Unix seconds in the future, at most one window away.
      expect(Number(reset)).toBeGreaterThan(after);
      expect(Number(reset)).toBeLessThanOrEqual(Math.ceil(after) + 60);
      expect(header(res, 'ratelimit-policy')).toBe('"default";q=60;w=60');
      const rateLimit = header(res, 'ratelimit');
      const match = /^"default";r=(\d+);t=(\d+)$/.exec(rateLimit);
      expect(match, rateLimit).not.toBeNull();
      expect(Number(match![1])).toBe(59 - i);
      expect(Number(match![2])).toBeGreaterThanOrEqual(0);
      expect(Number(match![2])).toBeLessThanOrEqual(60);
    }

    const refused = await apiGet(h.app, '/api/v1/sites', a.key);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'rate_limited', message: expect.any(String), limit: 60 });
    const retryAfter = header(refused, 'retry-after');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    expect(header(refused, 'x-ratelimit-limit')).toBe('60');
    expect(header(refused, 'x-ratelimit-remaining')).toBe('0');
    expect(header(refused, 'ratelimit')).toMatch(/^"default";r=0;t=\d+$/);

    // Still refused on another endpoint, with the X-API-Key form too.
    const again = await apiGet(h.app, `/api/v1/sites/${siteId}/articles`, undefined, { 'x-api-key': a.key });
    expect(again.status).toBe(429);
    expect(again.body.error).toBe('rate_limited');

    // Another key of another account is unaffected.
    const other = await apiGet(h.app, '/api/v1/sites', b.key);
    expect(other.status).toBe(200);
    expect(header(other, 'x-ratelimit-remaining')).toBe('59');

    // So is a second key of the same user: the limit is per key.
    const second = await h.services.keys.create(a.userId, { name: 'second' });
    const secondRes = await apiGet(h.app, '/api/v1/sites', second.key);
    expect(secondRes.status).toBe(200);
    expect(header(secondRes, 'x-ratelimit-remaining')).toBe('59');

    // The refusals are in the activity log as rate_limited.
    await h.services.activity.flush();
    const logged = await h.services.db.kysely
      .selectFrom('activity_log')
      .select(['status', 'error'])
      .where('api_key_id', '=', a.keyId)
      .where('status', '=', 429)
      .execute();
    expect(logged).toEqual([
      { status: 429, error: 'rate_limited' },
      { status: 429, error: 'rate_limited' },
    ]);
  });

  it('does not count or limit requests without a valid key', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await apiGet(h.app, '/api/v1/sites');
      expect(res.status).toBe(401);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });

  it('does not limit the OpenAPI document', async () => {
    const res = await apiGet(h.app, '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });
});

describe.runIf(testRedisUrl)('request rate limit across nodes (Redis)', () => {
  let nodeA: Redis;
  let nodeB: Redis;

  beforeAll(async () => {
    nodeA = new Redis(testRedisUrl!, { maxRetriesPerRequest: 1 });
    nodeB = new Redis(testRedisUrl!, { maxRetriesPerRequest: 1 });
    // Both connections must be up: otherwise the insurance (memory) limiter would answer.
    expect(await nodeA.ping()).toBe('PONG');
    expect(await nodeB.ping()).toBe('PONG');
  });

  afterAll(async () => {
    await nodeA?.quit();
    await nodeB?.quit();
  });

  it('shares one allowance per credential between two limiter instances', async () => {
    const limiterA = new RequestLimiter(nodeA);
    const limiterB = new RequestLimiter(nodeB);
    const credential = `key:test-${randomBytes(8).toString('hex')}`;
    for (let i = 0; i < 60; i++) {
      const state = await (i % 2 === 0 ? limiterA : limiterB).consume(credential);
      expect(state.allowed, `consumption ${i + 1}`).toBe(true);
      expect(state.limit).toBe(60);
      expect(state.remaining, `consumption ${i + 1}`).toBe(59 - i);
    }
    const refusedA = await limiterA.consume(credential);
    const refusedB = await limiterB.consume(credential);
    for (const refused of [refusedA, refusedB]) {
      expect(refused.allowed).toBe(false);
      expect(refused.remaining).toBe(0);
      expect(refused.retryAfter).toBeGreaterThanOrEqual(1);
      expect(refused.retryAfter).toBeLessThanOrEqual(60);
      expect(refused.resetAt).toBeGreaterThan(Math.floor(Date.now() / 1000));
    }
    // Another credential on the same nodes starts afresh.
    const fresh = await limiterB.consume(`key:test-${randomBytes(8).toString('hex')}`);
    expect(fresh).toMatchObject({ allowed: true, remaining: 59 });
  });

  it('keeps the window in Redis, not in either process', async () => {
    const credential = `key:test-${randomBytes(8).toString('hex')}`;
    for (let i = 0; i < 60; i++) await new RequestLimiter(nodeA).consume(credential);
    // A brand-new limiter (a restarted node) still sees the used-up window.
    expect((await new RequestLimiter(nodeB).consume(credential)).allowed).toBe(false);
  });
});
