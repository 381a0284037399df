import { pathToFileURL } from 'node:url';
import { loadSettings, type Settings } from './config.js';
import { buildApp } from './http/app.js';
import { buildMcpApp } from './mcp/plugin.js';
import { openRuntime } from './runtime.js';

/** Serves API, MCP and UI until SIGINT/SIGTERM, then stops gracefully. */
export async function serve(settings: Settings): Promise<void> {
  const runtime = await openRuntime(settings);
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
  const { app, stop } = await buildApp({ settings, services });
  await app.listen({ port: settings.port, host: settings.host });
  // MCP_PORT: the MCP endpoint alone on a second listener, to expose it at its own address.
  const mcpApp = settings.mcpPort === undefined ? undefined : await buildMcpApp({ settings, services });
  await mcpApp?.app.listen({ port: settings.mcpPort, host: settings.host });
  process.stdout.write(
    `Anchorage is serving\n  API:  ${settings.publicUrl}/api/v1\n  Docs: ${settings.publicUrl}/docs\n  MCP:  ${settings.mcpPublicUrl}\n  UI:   ${settings.publicUrl}/app\n`,
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing requests, flushing the activity log');
    await mcpApp?.stop();
    await stop();
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  serve(loadSettings()).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
