import { pathToFileURL } from 'node:url';
import closeWithGrace from 'close-with-grace';
import { loadSettings, type Settings } from './config.js';
import { buildApp, buildMcpApp } from './app.js';
import { closeListener } from './http/base.js';
import { buildMetricsApp } from './http/metrics.js';
import { startTracing } from './http/tracing.js';
import { openRuntime } from './runtime.js';
import { oauthUrlsOf } from './services/oauth/index.js';
import { firstStaffCommand } from './services/users.js';

/** The addresses `serve` prints once it listens: MCP twice with MCP_PORT, each as assistants reach it. */
export function servingBanner(settings: Settings): string {
  const mcp = settings.mcpPort === undefined ? [] : [`  MCP:  ${oauthUrlsOf(settings, 'mcp').resource} (MCP_PORT ${settings.mcpPort})`];
  return [
    'Anchorage is serving',
    `  API:  ${settings.publicUrl}/api/v1`,
    `  Docs: ${settings.publicUrl}/docs`,
    `  MCP:  ${oauthUrlsOf(settings, 'main').resource}`,
    ...mcp,
    `  UI:   ${settings.publicUrl}/app`,
    '',
  ].join('\n');
}

/** After the shutdown deadline: time to flush the activity log and close the database before a forced exit. */
const flushGraceMs = 5_000;

/** Serves API, MCP and UI until SIGINT/SIGTERM, then stops gracefully. */
export async function serve(settings: Settings): Promise<void> {
  const stopTracing = await startTracing(settings);
  const runtime = await openRuntime(settings, { scheduleHousekeeping: true });
  const { services, logger } = runtime;
  if (settings.loadDemoData && (await services.demo.isDatabaseEmpty())) {
    const demo = await services.demo.load();
    // Printed for the person who just ran `npm start`; never logged as structured data.
    process.stdout.write(
      [
        '',
        'Demo data loaded.',
        `  UI sign-in: ${settings.publicUrl}/app  e-mail ${demo.email}  password ${demo.password}`,
        `  API key:    ${demo.apiKey}`,
        `  Try:        curl -H "Authorization: Bearer ${demo.apiKey}" ${settings.publicUrl}/api/v1/sites`,
        '',
      ].join('\n'),
    );
  }
  if (!(await services.users.any())) {
    // A fresh database (production loads no demo data): nobody can sign in until an operator makes the first staff user.
    logger.warn({ command: firstStaffCommand }, 'no users yet: create the first staff user with anchorage user create --staff');
    process.stdout.write(['', 'No users yet: nobody can sign in. Create the first staff user:', `  ${firstStaffCommand}`, ''].join('\n'));
  }
  const { app, stop, warm } = await buildApp({ settings, services });
  await warm();
  await app.listen({ port: settings.port, host: settings.host });
  // MCP_PORT: the MCP endpoint alone on a second listener, to expose it at its own address.
  const mcpApp = settings.mcpPort === undefined ? undefined : await buildMcpApp({ settings, services });
  await mcpApp?.warm();
  await mcpApp?.app.listen({ port: settings.mcpPort, host: settings.host });
  // METRICS_PORT: /metrics alone on its own listener, on a private address (METRICS_HOST).
  const metricsApp = settings.metrics.port === undefined ? undefined : await buildMetricsApp({ settings, services });
  await metricsApp?.listen({ port: settings.metrics.port, host: settings.metrics.host });

  // SIGINT/SIGTERM (or an uncaught error): readiness turns to "stopping", requests in flight get
  // SHUTDOWN_TIMEOUT_MS to finish, then the connections left are cut; the activity log is flushed.
  const servers = [app.server, mcpApp?.app.server, metricsApp?.server];
  closeWithGrace({ delay: settings.shutdownTimeoutMs + flushGraceMs, logger }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'stopping after an uncaught error');
    logger.info({ signal }, 'stopping: finishing requests, flushing the activity log');
    const deadline = setTimeout(() => {
      logger.warn({ timeoutMs: settings.shutdownTimeoutMs }, 'shutdown deadline passed: cutting the connections left');
      for (const server of servers) server?.closeAllConnections();
    }, settings.shutdownTimeoutMs);
    await Promise.all([mcpApp?.stop(), stop(), metricsApp && closeListener(metricsApp)]);
    clearTimeout(deadline);
    await runtime.close();
    await stopTracing?.();
  });
  // Printed once SIGTERM stops the node gracefully: whoever waits for this line may stop it at once.
  process.stdout.write(servingBanner(settings));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  serve(loadSettings()).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
