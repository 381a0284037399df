import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TooManyKeysError } from '../../src/services/keys.js';
import { createCustomer, type Harness, startHarness, testRedisUrl } from '../helpers/harness.js';
import { csrfOf, InjectBrowser, password } from '../web/browser.js';

let counter = 0;
/** A client address of its own per call (documentation range): limits shared through Redis outlive a test run. */
const address = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::${(counter += 1).toString(16)}`;

/** One sign-in attempt from `remoteAddress`, through the real page (CSRF cookie and token). */
async function signInFrom(h: Harness, remoteAddress: string, email: string, pass: string) {
  const page = await h.app.inject({ method: 'GET', url: '/app/sign-in', remoteAddress });
  const cookie = page.cookies.find((c) => c.name === 'anchorage_csrf')!.value;
  return h.app.inject({
    method: 'POST',
    url: '/app/sign-in',
    remoteAddress,
    headers: { cookie: `anchorage_csrf=${cookie}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: csrfOf(page.body), email, password: pass, next: '/app' }).toString(),
  });
}

describe('abuse limits (shared through Redis where TEST_REDIS_URL is set)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({
      redis: true,
      env: { SIGNIN_FAILURES_PER_EMAIL: '3', SIGNIN_FAILURES_PER_ADDRESS: '4', UNAUTHENTICATED_PER_MINUTE: '3', MAX_API_KEYS: '3' },
    });
  });
  afterAll(async () => {
    await h.close();
  });

  it('locks one e-mail after failures from many addresses (credential stuffing), with the real wait', async () => {
    const victim = await createCustomer(h.services);
    for (let i = 0; i < 3; i += 1) expect((await signInFrom(h, address(), victim.email, 'wrong password')).statusCode).toBe(401);
    const locked = await signInFrom(h, address(), victim.email.toUpperCase(), password);
    expect(locked.statusCode).toBe(429);
    const wait = Number(locked.headers['retry-after']);
    expect(wait).toBeGreaterThan(14 * 60);
    expect(wait).toBeLessThanOrEqual(15 * 60);
    expect(locked.body).toContain('Too many failed sign-ins for this e-mail address.');
    expect(locked.body).toContain(`try again in ${Math.ceil(wait / 60)} minutes`);
    // Another account is not affected.
    const other = await createCustomer(h.services);
    expect((await signInFrom(h, address(), other.email, password)).statusCode).toBe(303);
  });

  it('locks one address after failures for many e-mails (spraying); its own success does not reset the count', async () => {
    const from = address();
    const own = await createCustomer(h.services);
    const target = await createCustomer(h.services);
    for (let i = 0; i < 3; i += 1) {
      expect((await signInFrom(h, from, `nobody${i}-${randomBytes(3).toString('hex')}@example.test`, 'guess')).statusCode).toBe(401);
    }
    expect((await signInFrom(h, from, own.email, password)).statusCode).toBe(303);
    expect((await signInFrom(h, from, `nobody-${randomBytes(3).toString('hex')}@example.test`, 'guess')).statusCode).toBe(401);
    const locked = await signInFrom(h, from, target.email, password);
    expect(locked.statusCode).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(14 * 60);
    expect(locked.body).toContain('Too many failed sign-ins from your network.');
    // The same account signs in from elsewhere.
    expect((await signInFrom(h, address(), target.email, password)).statusCode).toBe(303);
  });

  it('locks one e-mail from one address for a minute after 5 failures', async () => {
    const limits = await startHarness({ redis: true });
    try {
      const victim = await createCustomer(limits.services);
      const from = address();
      for (let i = 0; i < 5; i += 1) expect((await signInFrom(limits, from, victim.email, 'wrong password')).statusCode).toBe(401);
      const locked = await signInFrom(limits, from, victim.email, password);
      expect(locked.statusCode).toBe(429);
      const wait = Number(locked.headers['retry-after']);
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(60);
      expect(locked.body).toContain(`try again in ${wait} seconds`);
      expect((await signInFrom(limits, address(), victim.email, password)).statusCode).toBe(303);
    } finally {
      await limits.close();
    }
  });

  it('limits REST requests without a valid key per address: 429 rate_limited with Retry-After and limit; a valid key still works', async () => {
    const customer = await createCustomer(h.services);
    const from = address();
    const bad = () => h.app.inject({ method: 'GET', url: '/api/v1/sites', remoteAddress: from, headers: { authorization: `Bearer ak_${'x'.repeat(40)}` } });
    for (let i = 0; i < 3; i += 1) expect((await bad()).statusCode).toBe(401);
    const limited = await bad();
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ error: 'rate_limited', limit: 3 });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const missing = await h.app.inject({ method: 'GET', url: '/api/v1/sites', remoteAddress: from });
    expect(missing.statusCode).toBe(429);
    const good = await h.app.inject({ method: 'GET', url: '/api/v1/sites', remoteAddress: from, headers: { 'x-api-key': customer.key } });
    expect(good.statusCode).toBe(200);
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/sites', remoteAddress: address() })).statusCode).toBe(401);
  });

  it.skipIf(!testRedisUrl)('keeps its counts in Redis under REDIS_KEY_PREFIX (test files share one Redis)', async () => {
    const from = address();
    await h.app.inject({ method: 'GET', url: '/api/v1/sites', remoteAddress: from });
    const redis = new Redis(testRedisUrl!);
    try {
      const prefix = h.settings.redisKeyPrefix;
      expect(prefix).toMatch(/^test-[0-9a-f]{12}:$/);
      expect(await redis.keys(`${prefix}anchorage:unauthenticated:*`)).not.toEqual([]);
      expect(await redis.keys(`anchorage:unauthenticated:${from}`)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });

  it('limits MCP requests without a valid token per address', async () => {
    const from = address();
    const call = (authorization?: string) =>
      h.app.inject({
        method: 'POST',
        url: '/mcp',
        remoteAddress: from,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
    for (let i = 0; i < 3; i += 1) expect((await call(i % 2 ? 'Bearer nope' : undefined)).statusCode).toBe(401);
    const limited = await call('Bearer nope');
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ error: 'rate_limited', limit: 3 });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('caps /mcp bodies like REST JSON: 413 payload_too_large in the catalogue shape', async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(5 * 1024 * 1024) } });
    const response = await h.app.inject({
      method: 'POST',
      url: '/mcp',
      remoteAddress: address(),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer nope' },
      payload: huge,
    });
    expect(response.statusCode).toBe(413);
    const body = response.json();
    expect(body).toMatchObject({ error: 'payload_too_large' });
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  });

  // Without the account's row lock, 21 of these 30 went in on PostgreSQL (its pool runs them side
  // by side); SQLite's one connection happened to run them one after another.
  it('keeps the key cap when keys are created at the same time', async () => {
    const customer = await createCustomer(h.services); // one key already
    const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => h.services.keys.create(customer.userId, { name: `key ${i}` })));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(2);
    for (const result of results) if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(TooManyKeysError);
    expect((await h.services.keys.list(customer.accountId)).filter((k) => !k.revoked_at)).toHaveLength(3);
  });

  it('keeps at most MAX_API_KEYS active keys per account: the service, the UI page', async () => {
    const customer = await createCustomer(h.services); // one key already
    await h.services.keys.create(customer.userId, { name: 'two' });
    const third = await h.services.keys.create(customer.userId, { name: 'three' });
    await expect(h.services.keys.create(customer.userId, { name: 'four' })).rejects.toBeInstanceOf(TooManyKeysError);
    // An address of its own: failed sign-ins from 127.0.0.1 in other files count in Redis too.
    const browser = new InjectBrowser(h.app, address());
    await browser.signIn(customer.email);
    const token = await browser.csrf('/app/connect');
    const refused = await browser.post('/app/connect/keys', { _csrf: token, name: 'four' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('at most 3 active API keys');
    expect((await h.services.keys.list(customer.accountId)).filter((k) => !k.revoked_at)).toHaveLength(3);
    await h.services.keys.revoke(third.id, customer.accountId);
    const created = await browser.post('/app/connect/keys', { _csrf: token, name: 'four' });
    expect(created.statusCode).toBe(303);
  });
});
