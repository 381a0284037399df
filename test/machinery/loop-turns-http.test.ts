import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';

// Requests take turns of the event loop by operation (src/http/turns.ts): a flood of one
// operation delays another by one request of each waiting lane, not by the whole flood. What a
// request does after its turn (on PostgreSQL, its queries wait for the pool's connections) is not
// ordered by the turns, so these cases note when each request's turn came: the order in which the
// service's hooks after the turn saw them.

const block = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('turns of the event loop, over HTTP', () => {
  const harness = useHarness();
  let app: FastifyInstance;
  let stop: () => Promise<void>;
  let authorization: string;
  let stats: string;
  const turnsCame: string[] = [];
  beforeAll(async () => {
    const customer = await createCustomer(harness.services);
    authorization = `Bearer ${customer.key}`;
    stats = `/api/v1/sites/${(await seedSite(harness.services, customer.email)).siteId}/stats`;
    ({ app, stop } = await buildApp({ settings: harness.settings, services: harness.services, logger: false }));
    app.addHook('onRequest', (request, _reply, done) => {
      turnsCame.push(request.headers['x-name'] as string);
      done();
    });
  });
  afterAll(async () => {
    await stop?.();
  });

  /** Sends every request while the loop's turn is spent, so all queue; their statuses, and the order their turns came in. */
  const turnOrder = async (requests: { name: string; url: string }[]) => {
    turnsCame.length = 0;
    harness.services.loopTurns.take();
    block(10);
    const answers = requests.map(({ name, url }) => app.inject({ method: 'GET', url, headers: { authorization, 'x-name': name } }));
    const statuses = (await Promise.all(answers)).map((answer) => answer.statusCode);
    return { statuses, order: [...turnsCame] };
  };

  it('gives a request of one operation its turn before most of a flood of another sent before it', async () => {
    const flood = Array.from({ length: 10 }, (_, i) => ({ name: `sites ${i}`, url: '/api/v1/sites' }));
    const { statuses, order } = await turnOrder([...flood, { name: 'stats', url: stats }]);
    expect(statuses).toEqual(Array(11).fill(200));
    // First come, first served, it would be the eleventh.
    expect(order.indexOf('stats')).toBe(1);
  });

  it('names a lane by the route, never by what the request sent: requests that match no route share one', async () => {
    const take = vi.spyOn(harness.services.loopTurns, 'take');
    try {
      const unknown = Array.from({ length: 10 }, (_, i) => ({ name: `unknown ${i}`, url: `/no/such/path/${i}?q=${i}` }));
      const { statuses } = await turnOrder([...unknown, { name: 'site', url: stats.replace('/stats', '/articles?page=2') }]);
      expect(statuses).toEqual([...Array(10).fill(404), 200]);
      const lanes = take.mock.calls.map(([lane]) => lane);
      expect(new Set(lanes)).toEqual(new Set([undefined, '', 'GET /api/v1/sites/:id/articles']));
    } finally {
      take.mockRestore();
    }
  });
});
