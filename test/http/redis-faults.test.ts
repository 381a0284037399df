import { setTimeout } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisConnectionName } from '../../src/runtime.js';
import { RequestLimiter, requestsPerMinute } from '../../src/services/limits.js';
import { apiGet } from '../helpers/fixtures.js';
import { createCustomer, type Harness, startHarness, testRedisUrl } from '../helpers/harness.js';

// A node whose Redis connections are killed (a Redis restart, a failover, a proxy's idle
// timeout) keeps each key's request limit. Only this node's connection is killed: it is named
// after its key prefix, of its own in this file.

let h: Harness;
let admin: Redis;

/** The ids of this node's Redis connections. */
async function nodesConnections(): Promise<string[]> {
  const name = redisConnectionName(h.settings.redisKeyPrefix);
  const list = String(await admin.call('client', 'list', 'type', 'normal'));
  return list
    .split('\n')
    .filter((line) => line.includes(` name=${name} `))
    .map((line) => /\bid=(\d+)/.exec(line)![1]!);
}

/** Kills this node's Redis connection once it has one again; returns how many it killed. */
async function killNodesConnections(): Promise<number> {
  let ids = await nodesConnections();
  for (let tries = 0; ids.length === 0 && tries < 100; tries++) {
    await setTimeout(20);
    ids = await nodesConnections();
  }
  for (const id of ids) await admin.call('client', 'kill', 'id', id);
  return ids.length;
}

describe.skipIf(!testRedisUrl)('Redis connections killed while a key is used', () => {
  beforeAll(async () => {
    h = await startHarness({ redis: true });
    admin = new Redis(testRedisUrl!);
  });

  afterAll(async () => {
    await admin?.quit();
    await h?.close();
  });

  it(`one key gets at most ${requestsPerMinute} answers a minute, and every answer is 200 or 429`, async () => {
    const customer = await createCustomer(h.services);
    let killed = 0;
    const statuses: number[] = [];
    // Each round: the connection killed, then requests while the node reconnects and after.
    for (let round = 0; round < 30; round++) {
      killed += await killNodesConnections();
      for (let i = 0; i < 3; i++) statuses.push((await apiGet(h.app, '/api/v1/sites', customer.key)).status);
    }
    expect(killed).toBeGreaterThanOrEqual(30);
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(statuses.filter((status) => status === 200).length).toBe(requestsPerMinute);
  });
});

describe.skipIf(!testRedisUrl)('the request limiter without Redis for a while', () => {
  const clients: Redis[] = [];
  afterAll(() => Promise.all(clients.map((client) => client.quit().catch(() => undefined))));

  /** A node's client, as the runtime opens it, on a key prefix of this test's own. */
  const nodeClient = async (keyPrefix: string) => {
    const client = new Redis(testRedisUrl!, { keyPrefix, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    clients.push(client);
    await once(client, 'ready');
    return client;
  };
  const disconnect = async (client: Redis) => {
    client.disconnect();
    await once(client, 'end');
  };

  it('counts on from what Redis last answered, and adds what it allowed meanwhile to Redis', async () => {
    const keyPrefix = `test-${randomBytes(6).toString('hex')}:`;
    const redis = await nodeClient(keyPrefix);
    const limiter = new RequestLimiter(redis);
    for (let i = 0; i < 20; i++) expect((await limiter.consume('key:1')).allowed).toBe(true);

    await disconnect(redis);
    for (let i = 0; i < 10; i++) expect(await limiter.consume('key:1')).toMatchObject({ allowed: true, remaining: 39 - i });

    await redis.connect();
    expect(await limiter.consume('key:1')).toMatchObject({ allowed: true, remaining: 29 });
    // Another node, which only knows Redis, sees all 31.
    expect(await new RequestLimiter(await nodeClient(keyPrefix)).consume('key:1')).toMatchObject({ allowed: true, remaining: 28 });

    await disconnect(redis);
    for (let i = 0; i < 29; i++) expect((await limiter.consume('key:1')).allowed).toBe(true);
    expect(await limiter.consume('key:1')).toMatchObject({ allowed: false, remaining: 0 });
  });
});
