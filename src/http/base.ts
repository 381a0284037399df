import Fastify, { type FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import type { Settings } from '../config.js';
import type { Services } from '../services/index.js';
import { activityPlugin } from './activity.js';
import './context.js';
import { clientErrorHandler, errorsPlugin, frameworkErrors, trackAnswers } from './errors.js';
import { healthRoutes } from './health.js';
import { largeAnswersInParts } from './json-answer.js';
import { jsonBodyParser } from './json-body.js';
import { jsonBodyLimit } from './limits.js';
import { metricsPlugin } from './metrics.js';
import { pressurePlugin } from './pressure.js';
import { requestIdOptions, requestIdPlugin } from './request-id.js';
import { responseSerializers } from './serializer.js';
import { withoutPathTokens } from './secret-paths.js';
import { tracingPlugin } from './tracing.js';
import { loopTurnsPlugin } from './turns.js';

export interface AppOptions {
  settings: Settings;
  services: Services;
  /** Pino logger options; false silences the log (tests). */
  logger?: boolean | object;
}

/**
 * A built listener and how to stop it: readiness turns to "stopping", then in-flight requests finish,
 * including those whose client left (within SHUTDOWN_TIMEOUT_MS; past it, their tasks on the HTML
 * pool are stopped and they answer 503).
 */
export interface BuiltApp {
  app: FastifyInstance;
  stop: () => Promise<void>;
  /** Makes the app ready and compiles its answers' serialisers (`compileAll`): run before it listens. */
  warm: () => Promise<void>;
}

/** How long a stopping listener waits, past its deadline, for the handlers whose pool tasks it stopped. */
const abandonedGraceMs = 1_000;

/** How often a stopping listener closes the connections that have gone idle since it began to stop. */
const idleCloseMs = 100;

/**
 * Closes `app` and its listener. Closing a listener closes the connections idle at that moment;
 * one answering a request then stays open once answered, idle, until its keep-alive timeout
 * (72 s), and the close with it: each is closed as soon as it is idle.
 */
export async function closeListener(app: FastifyInstance): Promise<void> {
  const closeIdle = setInterval(() => app.server.closeIdleConnections(), idleCloseMs);
  try {
    await app.close();
  } finally {
    clearInterval(closeIdle);
  }
}

/** Request headers that carry secrets; no listener logs them. */
const redactedHeaders = ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'];

/** Secret headers are redacted; a URL keeps everything but the tokens of share and unsubscribe links. */
const logCensor = (value: unknown, path: string[]): unknown =>
  path[path.length - 1] === 'url' && typeof value === 'string' ? withoutPathTokens(value) : '[Redacted]';

/**
 * What every listener shares (the main one and the MCP_PORT one): the logger and its redaction,
 * the body limit, proxy trust, the catalogue's error bodies, request info and activity, health.
 * Each app then registers its own routes on it.
 */
export async function buildBaseApp(options: AppOptions): Promise<BuiltApp> {
  const { settings, services } = options;
  let stopping = false;
  const app = Fastify({
    logger: options.logger ?? { level: settings.logLevel, redact: { paths: [...redactedHeaders, 'req.url'], censor: logCensor } },
    bodyLimit: jsonBodyLimit,
    trustProxy: settings.trustProxy,
    return503OnClosing: true,
    frameworkErrors,
    clientErrorHandler,
    ...requestIdOptions,
  });
  trackAnswers(app.server);
  app.setValidatorCompiler(validatorCompiler);
  const serializers = responseSerializers();
  app.setSerializerCompiler(serializers.compiler);
  // Only JSON (and, where a route declares it, multipart) is accepted: text/plain is a 415.
  app.removeContentTypeParser('text/plain');
  jsonBodyParser(app, services.htmlPool);
  largeAnswersInParts(app);

  // In this order: the request span wraps every hook; a shed request still has its id, is counted and logged.
  await app.register(tracingPlugin);
  await app.register(requestIdPlugin);
  await app.register(metricsPlugin, { services, settings });
  await app.register(errorsPlugin);
  await app.register(activityPlugin, { services });
  await app.register(pressurePlugin, { settings, turns: services.loopTurns });
  await app.register(loopTurnsPlugin, { turns: services.loopTurns });
  await app.register(healthRoutes, { services, isStopping: () => stopping });

  const stop = async () => {
    const deadline = Date.now() + settings.shutdownTimeoutMs;
    stopping = true;
    await closeListener(app);
    if (await app.handlersSettled(Math.max(0, deadline - Date.now()))) return;
    // Past the deadline: edits still on the HTML pool stop there and answer 503 (nothing saved),
    // so that their handlers end, and are logged, before the activity log's last flush.
    await services.htmlPool.close();
    await app.handlersSettled(abandonedGraceMs);
  };
  const warm = async () => {
    await app.ready();
    await serializers.compileAll();
  };
  return { app, stop, warm };
}
