import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Settings } from '../config.js';
import { AppError } from '../core/errors.js';
import { tools } from '../operations/index.js';
import type { ActivityEntry } from '../services/activity.js';
import type { Services } from '../services/index.js';
import { sendError } from './errors.js';

const secondsBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type RequestLabel = 'operation' | 'method' | 'status';

/** Tool names as labels: a name no tool has (any text a client sends) counts under one label, so series stay bounded. */
const toolNames = new Set(tools.map((tool) => tool.name));
const unknownTool = '(unknown)';

/** Refusals for a limit: requests per minute (per credential, or per address without one), the daily edit allowance. */
const limitErrors = new Set(['rate_limited', 'edit_limit_exceeded']);

/**
 * The service's metrics, in one registry per set of services (every listener over them shares
 * it). HTTP requests are counted by the `metricsPlugin` hook; API and MCP calls as the activity
 * log records them; queue, pool and process figures when scraped.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<RequestLabel>;
  private readonly requestSeconds: Histogram<RequestLabel>;
  private readonly toolCalls: Counter<'tool' | 'status'>;
  private readonly toolSeconds: Histogram<'tool' | 'status'>;
  private readonly refusals: Counter<'error' | 'channel'>;
  /**
   * The request series of each label set, found once: prom-client hashes a label object on every
   * call otherwise. Bounded as the labels are (operation or route pattern, method, status).
   */
  private readonly requestSeries = new Map<string, { count: Counter.Internal; seconds: Histogram.Internal<RequestLabel> }>();

  constructor(services: Services) {
    const registers = [this.registry];
    // Event-loop delay, heap and resident memory, CPU, handles (prefixed nodejs_ and process_).
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'anchorage_http_requests_total',
      help: 'HTTP requests by operation (or route), method and status.',
      labelNames: ['operation', 'method', 'status'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'anchorage_http_request_duration_seconds',
      help: 'HTTP request latency by operation (or route), method and status.',
      labelNames: ['operation', 'method', 'status'],
      buckets: secondsBuckets,
      registers,
    });
    this.toolCalls = new Counter({
      name: 'anchorage_mcp_tool_calls_total',
      help: 'MCP tool calls by tool and status (an error result carries its error status).',
      labelNames: ['tool', 'status'],
      registers,
    });
    this.toolSeconds = new Histogram({
      name: 'anchorage_mcp_tool_call_duration_seconds',
      help: 'MCP tool call latency by tool and status.',
      labelNames: ['tool', 'status'],
      buckets: secondsBuckets,
      registers,
    });
    this.refusals = new Counter({
      name: 'anchorage_limit_refusals_total',
      help: 'API and MCP calls refused for a limit: rate_limited (requests per minute) or edit_limit_exceeded (edits per day).',
      labelNames: ['error', 'channel'],
      registers,
    });
    const { activity, db } = services;
    new Gauge({
      name: 'anchorage_activity_queue_depth',
      help: 'Activity records waiting to be written.',
      registers,
      collect() {
        this.set(activity.queued);
      },
    });
    const flushSeconds = new Histogram({
      name: 'anchorage_activity_flush_duration_seconds',
      help: 'Time to write one batch of queued activity records.',
      buckets: secondsBuckets,
      registers,
    });
    const pool = db.pool;
    // SQLite has one connection and no pool to wait for: these series are PostgreSQL's.
    if (pool) {
      new Gauge({
        name: 'anchorage_db_pool_connections',
        help: 'PostgreSQL pool connections: in_use, idle, and total (open).',
        labelNames: ['state'],
        registers,
        collect() {
          this.set({ state: 'total' }, pool.totalCount);
          this.set({ state: 'idle' }, pool.idleCount);
          this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
        },
      });
      new Gauge({
        name: 'anchorage_db_pool_waiting',
        help: 'Queries waiting for a PostgreSQL pool connection.',
        registers,
        collect() {
          this.set(pool.waitingCount);
        },
      });
    }
    activity.observe({
      recorded: (entry) => this.recordCall(entry),
      flushed: (_rows, seconds) => flushSeconds.observe(seconds),
    });
  }

  /** An HTTP request as it ends: its operation name, else its route pattern (never the raw URL). */
  recordRequest(request: FastifyRequest, reply: FastifyReply): void {
    const operation = (request.routeOptions.schema?.operationId as string | undefined) ?? request.routeOptions.url ?? 'unmatched';
    const key = `${operation} ${request.method} ${reply.statusCode}`;
    let series = this.requestSeries.get(key);
    if (!series) {
      const labels = { operation, method: request.method, status: String(reply.statusCode) };
      series = { count: this.requests.labels(labels), seconds: this.requestSeconds.labels(labels) };
      this.requestSeries.set(key, series);
    }
    series.count.inc();
    series.seconds.observe(reply.elapsedTime / 1000);
  }

  private recordCall({ channel, request, outcome }: ActivityEntry): void {
    if (outcome.error !== null && limitErrors.has(outcome.error)) this.refusals.inc({ error: outcome.error, channel });
    if (channel !== 'mcp' || request.tool === null) return;
    const labels = { tool: toolNames.has(request.tool) ? request.tool : unknownTool, status: String(outcome.status) };
    this.toolCalls.inc(labels);
    this.toolSeconds.observe(labels, Math.max(0, Date.now() - request.startedAt) / 1000);
  }
}

const registries = new WeakMap<Services, Metrics>();

/** The metrics of these services, created on first use. */
export function metricsOf(services: Services): Metrics {
  let metrics = registries.get(services);
  if (!metrics) {
    metrics = new Metrics(services);
    registries.set(services, metrics);
  }
  return metrics;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** GET /metrics, behind the bearer token when one is set. */
function metricsRoute(app: FastifyInstance, services: Services, token: string | undefined): void {
  const expected = token === undefined ? undefined : digest(`Bearer ${token}`);
  app.get('/metrics', { schema: { hide: true }, config: { pressureHandler: () => undefined } }, async (request, reply) => {
    if (expected && !timingSafeEqual(digest(request.headers.authorization ?? ''), expected)) {
      reply.header('www-authenticate', 'Bearer');
      return sendError(request, reply, new AppError('unauthenticated', 'Send the metrics token (METRICS_TOKEN) as a Bearer token.'));
    }
    const { registry } = metricsOf(services);
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}

/**
 * Counts every request; serves /metrics on this listener only with METRICS_TOKEN set (never open
 * to customers; without a token it is a 404 here, and METRICS_PORT serves it on its own listener).
 */
export const metricsPlugin = fp(async (app: FastifyInstance, options: { services: Services; settings: Settings }) => {
  const metrics = metricsOf(options.services);
  app.addHook('onResponse', (request, reply, done) => {
    metrics.recordRequest(request, reply);
    done();
  });
  if (options.settings.metrics.token !== undefined) metricsRoute(app, options.services, options.settings.metrics.token);
});

/** The METRICS_PORT listener: /metrics alone (behind METRICS_TOKEN too, when set), for bind to a private address. */
export async function buildMetricsApp(options: { services: Services; settings: Settings }): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  metricsRoute(app, options.services, options.settings.metrics.token);
  app.setNotFoundHandler((request, reply) => sendError(request, reply, new AppError('not_found', 'Only /metrics is served here.')));
  return app;
}
