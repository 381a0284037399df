import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { createCustomer, freePort, testDatabaseUrl } from '../helpers/harness.js';

/** The service as operators run it: the built entry point (npm run build), in its own process. */
const main = join(import.meta.dirname, '../../dist/main.js');

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: { stringValue?: string } }[];
}

/** An OTLP/HTTP collector in the test process: keeps every span POSTed to /v1/traces (JSON). */
async function startCollector() {
  const spans: OtlpSpan[] = [];
  const resources: unknown[] = [];
  const server = createServer(async (request: IncomingMessage, response) => {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    if (request.url === '/v1/traces') {
      const payload = JSON.parse(body) as { resourceSpans: { resource: unknown; scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const resourceSpan of payload.resourceSpans) {
        resources.push(resourceSpan.resource);
        for (const scope of resourceSpan.scopeSpans) spans.push(...scope.spans);
      }
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { spans, resources, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

const attribute = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue;

describe('the served process: tracing, METRICS_PORT, and shutdown with a deadline', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'anchorage-lifecycle-'));
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let databaseUrl: string | undefined;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let server: ChildProcess;
  let output = '';
  let base: string;
  let metricsBase: string;
  const shutdownTimeoutMs = 1_500;

  beforeAll(async () => {
    if (testDatabaseUrl) {
      const admin = new pg.Client({ connectionString: testDatabaseUrl });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
      await admin.end();
      const url = new URL(testDatabaseUrl);
      url.searchParams.set('options', `-c search_path=${schema}`);
      databaseUrl = url.toString();
    }
    collector = await startCollector();
    const port = await freePort();
    const metricsPort = await freePort();
    base = `http://127.0.0.1:${port}`;
    metricsBase = `http://127.0.0.1:${metricsPort}`;
    server = spawn(process.execPath, [main], {
      env: {
        ...process.env,
        NODE_ENV: 'test',
        DATA_DIR: dataDir,
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_URL: base,
        DEMO_DATA: 'off',
        LOG_LEVEL: 'info',
        METRICS_PORT: String(metricsPort),
        SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    });
    server.stdout!.on('data', (chunk) => (output += String(chunk)));
    server.stderr!.on('data', (chunk) => (output += String(chunk)));
    for (let i = 0; i < 300; i++) {
      if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the server did not become ready:\n${output}`);
  }, 60_000);

  afterAll(async () => {
    if (server.exitCode === null) server.kill('SIGKILL');
    collector?.close();
    if (databaseUrl) {
      const admin = new pg.Client({ connectionString: testDatabaseUrl });
      await admin.connect();
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The same database, opened beside the server, as an operator's script would. */
  async function withRuntime<T>(work: (runtime: Awaited<ReturnType<typeof openRuntime>>) => Promise<T>): Promise<T> {
    const settings = loadSettings({ NODE_ENV: 'test', DATA_DIR: dataDir, DEMO_DATA: 'off', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
    const runtime = await openRuntime(settings, { logger: pino({ level: 'silent' }) });
    try {
      return await work(runtime);
    } finally {
      await runtime.close();
    }
  }

  it('traces requests to OTLP, serves /metrics on its own port, and stops at the deadline with the log flushed', async () => {
    const customer = await withRuntime((runtime) => createCustomer(runtime.services));
    const requestId = `trace-${randomBytes(4).toString('hex')}`;
    const sites = await fetch(`${base}/api/v1/sites`, { headers: { authorization: `Bearer ${customer.key}`, 'x-request-id': requestId } });
    expect(sites.status).toBe(200);
    expect(sites.headers.get('x-request-id')).toBe(requestId);
    const refused = await fetch(`${base}/api/v1/sites`);
    expect(refused.status).toBe(401);
    const refusedId = refused.headers.get('x-request-id')!;
    // Tokens in paths (share and unsubscribe links) reach neither the log nor the traces.
    const shareToken = `rs_${randomBytes(20).toString('hex')}`;
    const unsubscribeToken = randomBytes(24).toString('hex');
    expect((await fetch(`${base}/share/${shareToken}?month=2026-01`)).status).toBe(404);
    expect((await fetch(`${base}/share/${shareToken}/report.pdf`)).status).toBe(404);
    expect((await fetch(`${base}/unsubscribe/${unsubscribeToken}`)).status).toBe(404);

    // /metrics: open on METRICS_PORT, absent from the public listener.
    const scraped = await fetch(`${metricsBase}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('anchorage_http_requests_total{operation="listSites",method="GET",status="200"} 1');
    expect((await fetch(`${base}/metrics`)).status).toBe(404);

    // A client that sent half a request and went quiet: only the deadline ends its connection.
    const held = connect(Number(new URL(base).port), '127.0.0.1');
    await new Promise<void>((resolve) => held.on('connect', resolve));
    held.write('GET /api/v1/sites HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const heldClosed = new Promise<void>((resolve) => held.on('close', () => resolve()));
    held.on('error', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));

    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    const started = Date.now();
    server.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Stopping: no new work is taken meanwhile.
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    expect(await exited).toBe(0);
    const elapsed = Date.now() - started;
    await heldClosed;
    expect(elapsed).toBeGreaterThanOrEqual(shutdownTimeoutMs - 100);
    expect(elapsed).toBeLessThan(shutdownTimeoutMs + 4_000);
    expect(output).toContain('shutdown deadline passed');

    // The completed requests' records were in the queue: they reached the database before the exit.
    const records = await withRuntime((runtime) =>
      runtime.services.db.kysely.selectFrom('activity_log').select(['request_id', 'operation', 'status']).execute(),
    );
    expect(records).toContainEqual({ request_id: requestId, operation: 'listSites', status: 200 });
    expect(records).toContainEqual({ request_id: refusedId, operation: 'listSites', status: 401 });
    // The log lines carry the same id.
    expect(output).toContain(`"reqId":"${requestId}"`);

    // The spans were flushed on the way out: the request, its operation and its queries, in one trace.
    const request = collector.spans.find((span) => attribute(span, 'anchorage.request_id') === requestId);
    expect(request).toBeDefined();
    const trace = collector.spans.filter((span) => span.traceId === request!.traceId);
    const byId = new Map(trace.map((span) => [span.spanId, span]));
    const descendsFrom = (span: OtlpSpan, ancestor: OtlpSpan): boolean => {
      for (let at = byId.get(span.parentSpanId ?? ''); at; at = byId.get(at.parentSpanId ?? '')) if (at === ancestor) return true;
      return false;
    };
    const operation = trace.find((span) => span.name === 'operation listSites');
    expect(operation).toBeDefined();
    expect(descendsFrom(operation!, request!)).toBe(true);
    const queries = trace.filter((span) => span.name.startsWith('db ') && descendsFrom(span, operation!));
    expect(queries.length).toBeGreaterThanOrEqual(1);
    expect(attribute(queries[0]!, 'db.system.name')).toBe(testDatabaseUrl ? 'postgresql' : 'sqlite');
    expect(attribute(queries[0]!, 'db.query.text')).toMatch(/select/i);
    expect(JSON.stringify(collector.resources)).toContain('"anchorage"');
    for (const token of [shareToken, unsubscribeToken]) {
      expect(output).not.toContain(token);
      expect(JSON.stringify(collector.spans)).not.toContain(token);
    }
    expect(collector.spans.some((span) => attribute(span, 'url.path') === '/share/[token]/report.pdf')).toBe(true);
    expect(collector.spans.some((span) => attribute(span, 'url.path') === '/unsubscribe/[token]')).toBe(true);
    // Probes are not traced.
    expect(collector.spans.some((span) => attribute(span, 'url.path') === '/readyz' || attribute(span, 'http.route') === '/readyz')).toBe(false);
  }, 60_000);
});
