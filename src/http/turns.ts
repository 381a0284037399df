import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { LoopTurns } from '../platform/loop-turns.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A probe (liveness, readiness): answered at once, never queued behind other work. */
    ownTurn?: boolean;
  }
}

/**
 * Every request waits for its turn of the event loop (platform/loop-turns.ts) before its hooks
 * and handler run: when the loop is busy, requests go a few milliseconds of them per turn, with
 * timers and sockets served between turns. Each operation (method and route) is a lane of its own:
 * a flood of one operation delays another by one request of each, whoever sends it (the account is
 * not known yet: authentication runs after the turn). Probes skip the queue.
 */
export const loopTurnsPlugin = fp(async (app: FastifyInstance, { turns }: { turns: LoopTurns }) => {
  app.addHook('onRequest', (request, _reply, done) => {
    const { config, url, method } = request.routeOptions;
    // A route's own method and pattern, never what the request sent: lanes are as many as routes.
    const turn = config.ownTurn ? undefined : turns.take(url === undefined ? '' : `${String(method)} ${url}`);
    if (turn === undefined) done();
    else void turn.then(() => done());
  });
});
