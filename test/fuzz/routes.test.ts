import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bodyArb,
  check,
  expectSound,
  fuzzParameters,
  fuzzTimeoutMs,
  headersArb,
  headersOf,
  pathFor,
  queryString,
  type Route,
  reportFindings,
  routesOf,
  send,
  startWorld,
  type World,
} from './hostile.js';

/**
 * Every route of the running app (read from Fastify's route tree, so a new route is fuzzed
 * without touching this file) with hostile paths, query strings, headers, cookies and bodies,
 * signed out and with a valid API key, session or MCP token: never a 5xx, never a hang, and the
 * API and MCP answer errors in the catalogue's shape.
 */
describe('fuzz: every route with hostile paths, queries, headers and cookies', () => {
  let world: World;
  let routes: Route[];

  beforeAll(async () => {
    world = await startWorld();
    routes = routesOf(world.app);
  });
  afterAll(async () => {
    await world?.harness.close();
  });

  it('finds every surface in the route tree', () => {
    const paths = routes.map((r) => `${r.method} ${r.path}`);
    for (const expected of [
      'GET /api/v1/sites',
      'PATCH /api/v1/articles/:id',
      'POST /api/v1/articles/:id/featured-image',
      'POST /app/sign-in',
      'POST /app/connections/:id/revoke',
      'POST /mcp',
      'POST /oauth/token',
      'GET /oauth/authorize',
      'GET /.well-known/oauth-authorization-server',
      'GET /media/:name',
    ]) {
      expect(paths).toContain(expected);
    }
  });

  it('answers every route, method and hostile request without a 5xx or a hang', async () => {
    const { app, credentials, ids } = world;
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
    const request = fc
      .constantFrom(...routes)
      .chain((route) =>
        fc.record({
          method: fc.oneof({ arbitrary: fc.constant(route.method), weight: 5 }, { arbitrary: fc.constantFrom(...methods), weight: 1 }),
          path: pathFor(route, ids),
          query: fc.option(queryString, { nil: undefined }),
          route: fc.constant(route),
          headers: headersArb,
          payload: bodyArb,
        }),
      );
    await fc.assert(
      fc.asyncProperty(request, async ({ method, route, path, query, headers, payload }) => {
        const sent = {
          method,
          url: query === undefined ? path : `${path}?${query}`,
          headers: await headersOf(headers, credentials),
          payload: method === 'GET' || method === 'HEAD' ? undefined : payload,
        };
        const response = await send(app, sent, { remoteAddress: '127.0.0.1' });
        if (/sign-(in|out|up)|revoke|keys/.test(path)) credentials.mayHaveSpent();
        check(`${method} ${route.path}`, () => expectSound(sent, response));
      }),
      fuzzParameters(500),
    );
    reportFindings();
  }, fuzzTimeoutMs);
});
