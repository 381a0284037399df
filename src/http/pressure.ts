import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Settings } from '../config.js';
import { AppError } from '../core/errors.js';
import type { LoopTurns } from '../platform/loop-turns.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Above an OVERLOAD_* threshold (after start-up has settled): new requests are shed. */
    isOverloaded(): boolean;
  }
}

/** Seconds a load balancer or client should wait before retrying a shed request. */
export const overloadRetryAfter = 10;

/** How often the event-loop delay and heap are sampled (ms). */
const sampleIntervalMs = 500;

/**
 * Building the app blocks the event loop (schemas, routes, migrations): the samples taken while
 * it starts are not load, so shedding begins two samples after the app is ready.
 */
const settleMs = 2 * sampleIntervalMs;

/**
 * A probe (liveness, readiness with its own answer): let through under pressure, and never
 * queued for a turn of the event loop behind other requests (see turns.ts).
 */
export const answersUnderPressure = { pressureHandler: () => undefined, ownTurn: true };

/**
 * Load shedding: while the event-loop delay or the heap in use is above its threshold
 * (OVERLOAD_*), new requests get 503 service_unavailable with Retry-After, so a load balancer
 * moves the traffic; /readyz reports not ready, /healthz stays up.
 */
export const pressurePlugin = fp(async (app: FastifyInstance, options: { settings: Settings; turns: LoopTurns }) => {
  const { maxEventLoopDelayMs, maxHeapUsedBytes } = options.settings.overload;
  let settled = false;
  app.addHook('onReady', async () => {
    setTimeout(() => (settled = true), settleMs).unref();
  });
  await app.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    maxHeapUsedBytes,
    sampleInterval: sampleIntervalMs,
    // Requests waiting for a turn of the loop (turns.ts) are the loop's delay too: the queue
    // keeps each turn short, so the sampled delay alone no longer shows the overload.
    healthCheck: async () => maxEventLoopDelayMs === 0 || options.turns.waitedMs() <= maxEventLoopDelayMs,
    healthCheckInterval: sampleIntervalMs,
    // Thrown, so the error handler answers with the catalogue's body and the Retry-After.
    pressureHandler: async () => {
      if (!settled) return;
      throw new AppError('service_unavailable', 'This node is overloaded; retry shortly, possibly on another node.', {}, overloadRetryAfter);
    },
  });
  app.decorate('isOverloaded', () => settled && app.isUnderPressure());
});
