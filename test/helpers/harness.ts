import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { loadSettings, type Settings } from '../../src/config.js';
import type { Clock } from '../../src/core/time.js';
import { connect } from '../../src/db/connect.js';
import { buildApp } from '../../src/app.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import type { Services } from '../../src/services/index.js';

/** PostgreSQL when TEST_DATABASE_URL is set (CI runs the suite both ways), else SQLite. */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL;
export const testRedisUrl = process.env.TEST_REDIS_URL;
export const dialectName = testDatabaseUrl ? 'postgres' : 'sqlite';

/** A clock a test can set and move. */
export class TestClock implements Clock {
  constructor(public current = new Date('2026-11-15T12:00:00Z')) {}
  now(): Date {
    return new Date(this.current.getTime());
  }
  set(iso: string): void {
    this.current = new Date(iso);
  }
}

export interface Harness {
  app: FastifyInstance;
  runtime: Runtime;
  services: Services;
  settings: Settings;
  clock: TestClock;
  /** Stops the listener as a stopping node does (`close` then closes the runtime). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/** A schema of its own per harness, so test files run in parallel on one PostgreSQL database. */
export async function isolatedPostgresUrl(base: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}

export interface HarnessOptions {
  clock?: TestClock;
  env?: Record<string, string>;
  redis?: boolean;
  /** Listen on 127.0.0.1 at a free port, with PUBLIC_URL set to that address (for real HTTP clients). */
  listen?: boolean;
  /** Receives the listener's log lines (JSON, level info and up) instead of silence. */
  log?: (line: string) => void;
  /**
   * A second node of this harness's deployment: its PostgreSQL database (left for that harness to
   * drop) and its PUBLIC_URL, as nodes behind one load balancer share them. PostgreSQL only.
   */
  nodeOf?: Harness;
}

/** A port that was free a moment ago: PUBLIC_URL must be known before the app is built. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A whole service on a fresh database, served in-process (use `app.inject` or `listen`). */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'anchorage-test-'));
  if (options.nodeOf && !options.nodeOf.settings.databaseUrl) throw new Error('Nodes share a database on PostgreSQL only.');
  const postgres = testDatabaseUrl && !options.nodeOf ? await isolatedPostgresUrl(testDatabaseUrl) : undefined;
  const port = options.listen ? await freePort() : undefined;
  const settings = loadSettings({
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    // A test that blocks the loop on purpose (or a busy CI machine) is not overload; shedding tests set it.
    OVERLOAD_EVENT_LOOP_DELAY_MS: '0',
    // A test file signs in through /oauth/authorize more often a minute than a person does; the limit's own test sets it.
    AUTHORIZE_PER_MINUTE: '100000',
    PUBLIC_URL: port ? `http://127.0.0.1:${port}` : 'http://localhost:3999',
    ...(postgres ? { DATABASE_URL: postgres.url } : {}),
    ...(options.nodeOf ? { DATABASE_URL: options.nodeOf.settings.databaseUrl!, PUBLIC_URL: options.nodeOf.settings.publicUrl } : {}),
    // Test files share one Redis, and their databases number keys and accounts from 1 alike.
    ...(options.redis && testRedisUrl ? { REDIS_URL: testRedisUrl, REDIS_KEY_PREFIX: `test-${randomBytes(6).toString('hex')}:` } : {}),
    ...options.env,
  });
  const clock = options.clock ?? new TestClock();
  const runtime = await openRuntime(settings, { clock, logger: pino({ level: 'silent' }) });
  const { app, stop } = await buildApp({ settings, services: runtime.services, logger: options.log
      ? { level: 'info', stream: { write: options.log } }
      : process.env.TEST_LOG
        ? { level: 'error' }
        : false });
  await app.ready();
  if (port) await app.listen({ port, host: '127.0.0.1' });
  return {
    app,
    runtime,
    services: runtime.services,
    settings,
    clock,
    stop,
    async close() {
      await stop();
      await runtime.close();
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A harness started before the tests of the enclosing block (or file) and closed after them, as
 * every test file needs one: read it inside a test or a later hook.
 */
export function useHarness(options: HarnessOptions = {}): Harness {
  const harness = {} as Harness;
  beforeAll(async () => {
    Object.assign(harness, await startHarness(options));
  });
  afterAll(async () => {
    await harness.close?.();
  });
  return harness;
}

/** Runs `statement` on a connection of its own, as the CLI, another node or an outside script would. */
export async function runElsewhere(h: Harness, statement: string): Promise<void> {
  const other = connect(h.settings.databaseUrl, h.settings.dataDir);
  try {
    await sql.raw(statement).execute(other.kysely);
  } finally {
    await other.kysely.destroy();
  }
}

let emailCounter = 0;

/** A user with an account and an API key; `staff` makes it an admin key. */
export async function createCustomer(
  services: Services,
  options: { staff?: boolean; readOnly?: boolean; email?: string } = {},
): Promise<{ userId: number; accountId: number; key: string; keyId: number; email: string }> {
  const email = options.email ?? `user${++emailCounter}-${randomBytes(3).toString('hex')}@example.test`;
  const { user_id, account_id } = await services.users.create({ email, password: 'correct horse battery', staff: options.staff });
  const created = await services.keys.create(user_id, { name: 'test', readOnly: options.readOnly });
  return { userId: user_id, accountId: account_id, key: created.key, keyId: created.id, email };
}
