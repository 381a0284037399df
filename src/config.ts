import { availableParallelism } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { z } from 'zod';

export interface HtmlPoolSettings {
  /** Worker threads (at least two are started: see `largeTaskChars`). */
  threads: number;
  /** Characters (current body + the change's text) that may wait for a thread; more are refused (429). */
  maxQueuedChars: number;
  /** Changes smaller than this (characters of current body + the longest body they produce: `changeSize`) run inline. */
  inlineBelow: number;
  /** Pooled tasks one account may have waiting or running; more are refused (429). */
  perAccount: number;
  /** Milliseconds a task may run before it is stopped (422). */
  timeoutMs: number;
  /**
   * The old generation a thread's heap may reach (MB, default 256); a task that needs more is
   * stopped (422). Under this bound V8 also collects sooner; the densest legitimate bodies fit well
   * within the default (docs/decisions/0001-worker-pool-for-large-html.md).
   */
  heapMb?: number;
}

export interface HousekeepingSettings {
  /** Time between scheduled passes; 0 schedules none (run `anchorage housekeeping` instead). */
  intervalMs: number;
  /** Activity-log records older than this many days are deleted. */
  activityRetentionDays: number;
}

const optionalUrl = z.url().optional();

/**
 * PostgreSQL connections a node opens at most (`DATABASE_POOL_SIZE`). With more on a small machine,
 * PostgreSQL's busy backends took the event loop's core often enough to stall it.
 */
export const defaultPoolSize = 6;

const settingsSchema = z.object({
  NODE_ENV: z.string().default('development'),
  HOST: z.string().default('0.0.0.0'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  MCP_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(defaultPoolSize),
  DATABASE_LISTEN_URL: z.string().regex(/^postgres(ql)?:\/\//, 'a postgres:// address').optional(),
  REDIS_URL: optionalUrl,
  REDIS_KEY_PREFIX: z.string().max(100).regex(/^[\w.:-]*$/, 'letters, digits, _ . : - only').default(''),
  PUBLIC_URL: optionalUrl,
  MCP_PUBLIC_URL: optionalUrl,
  MEDIA_STORE: z.enum(['fs', 'db']).default('fs'),
  MAX_IMAGE_BYTES: z.coerce.number().int().positive().default(10 * 1024 * 1024),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ALLOW_SIGNUP: z.enum(['true', 'false']).default('false'),
  DEMO_DATA: z.enum(['auto', 'off']).default('auto'),
  TRUST_PROXY: z.enum(['true', 'false']).default('false'),
  SIGNIN_FAILURES_PER_EMAIL: z.coerce.number().int().min(1).default(20),
  SIGNIN_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).default(50),
  UNAUTHENTICATED_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  AUTHORIZE_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  MAX_API_KEYS: z.coerce.number().int().min(1).default(100),
  HTML_WORKERS: z.coerce.number().int().min(1).default(availableParallelism()),
  HTML_QUEUE_BYTES: z.coerce.number().int().min(0).default(16 * 1024 * 1024),
  HTML_INLINE_BELOW: z.coerce.number().int().min(0).default(32 * 1024),
  HEAVY_EDITS_PER_ACCOUNT: z.coerce.number().int().min(1).default(2),
  HTML_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  HTML_HEAP_MB: z.coerce.number().int().min(64).default(256),
  SMTP_URL: z.string().optional(),
  REPORT_MAIL_FROM: z.string().min(3).default('Anchorage <reports@localhost>'),
  MCP_RESULT_MAX_CHARS: z.coerce.number().int().min(8_000).default(40_000),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().default('127.0.0.1'),
  METRICS_TOKEN: z.string().min(16).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  OVERLOAD_EVENT_LOOP_DELAY_MS: z.coerce.number().int().min(0).default(1_000),
  OVERLOAD_HEAP_USED_BYTES: z.coerce.number().int().min(0).default(Math.floor(getHeapStatistics().heap_size_limit * 0.9)),
  HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(1000).default(50),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  HOUSEKEEPING_INTERVAL_MS: z.coerce.number().int().min(0).default(3_600_000),
  ACTIVITY_RETENTION_DAYS: z.coerce.number().int().min(1).default(400),
});

export interface Settings {
  production: boolean;
  host: string;
  port: number;
  mcpPort: number | undefined;
  dataDir: string;
  databaseUrl: string | undefined;
  /** PostgreSQL: connections the node's pool opens at most. */
  databasePoolSize: number;
  /** PostgreSQL: where the connection listening for change notices goes, when not to DATABASE_URL (a pooler cannot LISTEN). */
  databaseListenUrl: string | undefined;
  redisUrl: string | undefined;
  /** Put before every Redis key, so deployments (or test runs) can share one Redis. */
  redisKeyPrefix: string;
  /** Public base address of the service, never derived from a request. */
  publicUrl: string;
  /**
   * Public address assistants connect to (the OAuth resource identifier): the MCP_PORT listener's
   * when that is set, else PUBLIC_URL's /mcp.
   */
  mcpPublicUrl: string;
  mediaStore: 'fs' | 'db';
  maxImageBytes: number;
  logLevel: string;
  allowSignup: boolean;
  loadDemoData: boolean;
  /** Behind a load balancer: take the client address from X-Forwarded-For. */
  trustProxy: boolean;
  /** Abuse limits (docs/operations.md, Limits). */
  abuse: AbuseLimits;
  /** Where the HTML work of writes runs (worker threads, bounds). */
  htmlPool: HtmlPoolSettings;
  /** Characters of JSON an MCP tool result may take, both copies of a success counted. */
  mcpResultMaxChars: number;
  /** /metrics: on its own listener (port) and/or on the main one behind a bearer token; else off. */
  metrics: { port: number | undefined; host: string; token: string | undefined };
  /** Traces go to OTEL_EXPORTER_OTLP_ENDPOINT; off without it. */
  tracing: boolean;
  /** Load shedding: above either threshold (0 = unchecked) new requests get 503. */
  overload: { maxEventLoopDelayMs: number; maxHeapUsedBytes: number };
  /** How far V8 lets a heap grow past what a collection left, in percent (0: V8's own choice). */
  heapGrowingPercent: number;
  /** How long a stopping node waits for requests in flight before cutting their connections. */
  shutdownTimeoutMs: number;
  /** Deleting what can never be used again (services/housekeeping.ts). */
  housekeeping: HousekeepingSettings;
  /** Monthly report e-mails: sent through SMTP_URL (smtp:// or smtps://); off without it. */
  reportMail: { smtpUrl: string | undefined; from: string };
}

export interface AbuseLimits {
  /** Failed sign-ins for one e-mail, from any address, within 15 minutes before a 15-minute lock. */
  signInFailuresPerEmail: number;
  /** Failed sign-ins from one address, for any e-mails, within 15 minutes before a 15-minute lock. */
  signInFailuresPerAddress: number;
  /** Requests without a valid key or token per client address and minute (REST and MCP). */
  unauthenticatedPerMinute: number;
  /** Requests to the OAuth authorization endpoint (which needs no sign-in) per client address and minute. */
  authorizePerMinute: number;
  /** Active (unrevoked) API keys per account. */
  maxActiveKeys: number;
}

const withoutTrailingSlash = (url: string): string => url.replace(/\/+$/, '');

/** The MCP endpoint on the main listener, or on the MCP_PORT one at PUBLIC_URL's host name. */
const defaultMcpUrl = (publicUrl: string, mcpPort: number | undefined): string =>
  mcpPort === undefined ? `${publicUrl}/mcp` : `http://${new URL(publicUrl).hostname}:${mcpPort}/mcp`;

/** Typed settings from the environment; throws with every invalid variable named. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const parsed = settingsSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  const publicUrl = withoutTrailingSlash(e.PUBLIC_URL ?? `http://localhost:${e.PORT}`);
  return {
    production: e.NODE_ENV === 'production',
    host: e.HOST,
    port: e.PORT,
    mcpPort: e.MCP_PORT,
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    databaseListenUrl: e.DATABASE_LISTEN_URL,
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    publicUrl,
    mcpPublicUrl: withoutTrailingSlash(e.MCP_PUBLIC_URL ?? defaultMcpUrl(publicUrl, e.MCP_PORT)),
    mediaStore: e.MEDIA_STORE,
    maxImageBytes: e.MAX_IMAGE_BYTES,
    logLevel: e.LOG_LEVEL,
    allowSignup: e.ALLOW_SIGNUP === 'true',
    loadDemoData: e.DEMO_DATA === 'auto' && e.NODE_ENV !== 'production',
    trustProxy: e.TRUST_PROXY === 'true',
    abuse: {
      signInFailuresPerEmail: e.SIGNIN_FAILURES_PER_EMAIL,
      signInFailuresPerAddress: e.SIGNIN_FAILURES_PER_ADDRESS,
      unauthenticatedPerMinute: e.UNAUTHENTICATED_PER_MINUTE,
      authorizePerMinute: e.AUTHORIZE_PER_MINUTE,
      maxActiveKeys: e.MAX_API_KEYS,
    },
    htmlPool: {
      threads: e.HTML_WORKERS,
      maxQueuedChars: e.HTML_QUEUE_BYTES,
      inlineBelow: e.HTML_INLINE_BELOW,
      perAccount: e.HEAVY_EDITS_PER_ACCOUNT,
      timeoutMs: e.HTML_TIMEOUT_MS,
      heapMb: e.HTML_HEAP_MB,
    },
    mcpResultMaxChars: e.MCP_RESULT_MAX_CHARS,
    metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST, token: e.METRICS_TOKEN },
    tracing: e.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined,
    overload: { maxEventLoopDelayMs: e.OVERLOAD_EVENT_LOOP_DELAY_MS, maxHeapUsedBytes: e.OVERLOAD_HEAP_USED_BYTES },
    heapGrowingPercent: e.HEAP_GROWING_PERCENT,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    housekeeping: { intervalMs: e.HOUSEKEEPING_INTERVAL_MS, activityRetentionDays: e.ACTIVITY_RETENTION_DAYS },
    reportMail: { smtpUrl: e.SMTP_URL, from: e.REPORT_MAIL_FROM },
  };
}
