import { join } from 'node:path';
import type { Redis } from 'ioredis';
import pino from 'pino';
import type { Settings } from './config.js';
import { type Clock, systemClock } from './core/time.js';
import { connect } from './db/connect.js';
import { migrate } from './db/migrate.js';
import { SearchIndexCatchUp } from './db/search-index.js';
import { sizeHeap } from './platform/heap.js';
import { LoopTurns, loopTurnBudgetMs } from './platform/loop-turns.js';
import { threadModule } from './platform/threads.js';
import { createServices, type Services } from './services/index.js';
import { ReportMailJob } from './services/report-mail.js';
import { loadMonthlyReport } from './web/report-data.js';

/** How often a node looks for monthly report e-mails due. */
const reportMailIntervalMs = 3_600_000;

export interface Runtime {
  settings: Settings;
  services: Services;
  logger: pino.Logger;
  /** SQLite: the search index catching up with written articles in the off-loop thread. */
  searchIndex?: SearchIndexCatchUp;
  close(): Promise<void>;
}

/**
 * Resolves once the connection is ready or has failed once (limits then use memory until it
 * recovers), so that no start-up check is still pending when a short command closes it.
 */
function firstOutcome(redis: Redis): Promise<void> {
  return new Promise((resolve) => {
    const settle = () => {
      redis.off('ready', settle);
      redis.off('error', settle);
      resolve();
    };
    redis.once('ready', settle);
    redis.once('error', settle);
  });
}

/** The name of a node's Redis connection (CLIENT SETNAME): `anchorage`, and the key prefix if any. */
export const redisConnectionName = (keyPrefix: string): string => (keyPrefix ? `anchorage-${keyPrefix}` : 'anchorage');

/**
 * The environment of a child process that works on this node's database (a UI import's check or
 * apply): this process's, with its settings given explicitly, as they may not come from it.
 */
function childEnv(settings: Settings): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: settings.dataDir, LOG_LEVEL: settings.logLevel, DATABASE_POOL_SIZE: String(settings.databasePoolSize) };
  for (const [name, value] of [
    ['DATABASE_URL', settings.databaseUrl],
    ['DATABASE_LISTEN_URL', settings.databaseListenUrl],
  ] as const) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Opens the database (migrated), Redis when configured, and the services over them. */
export async function openRuntime(
  settings: Settings,
  options: { clock?: Clock; logger?: pino.Logger; scheduleHousekeeping?: boolean; lockWaitMs?: number; pageCacheKib?: number } = {},
): Promise<Runtime> {
  sizeHeap(settings.heapGrowingPercent);
  const logger = options.logger ?? pino({ level: settings.logLevel });
  const db = connect(settings.databaseUrl, settings.dataDir, {
    traced: settings.tracing,
    checkpointInBackground: true,
    poolSize: settings.databasePoolSize,
    lockWaitMs: options.lockWaitMs,
    pageCacheKib: options.pageCacheKib,
    listenUrl: settings.databaseListenUrl,
    warn: (message, error) => logger.warn({ err: error }, message),
  });
  await migrate(db);
  const searchIndex = db.offLoop && new SearchIndexCatchUp(db.offLoop, (message, error) => logger.warn({ err: error }, message));
  // The client is loaded only when configured: a process without Redis need not carry it.
  const redis = settings.redisUrl
    ? new (await import('ioredis')).Redis(settings.redisUrl, {
        keyPrefix: settings.redisKeyPrefix,
        // Named, so that an operator (or a test) can tell this node's connections apart in CLIENT LIST.
        connectionName: redisConnectionName(settings.redisKeyPrefix),
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        lazyConnect: false,
      })
    : undefined;
  // Closing ends a connection whose (re)connection check may still be pending: that is no outage.
  let closing = false;
  redis?.on('error', (error) => {
    if (!closing) logger.warn({ err: error }, 'redis unavailable; limits fall back to memory');
  });
  if (redis) await firstOutcome(redis);
  const services = createServices({
    db,
    loopTurns: new LoopTurns(loopTurnBudgetMs),
    media: { store: settings.mediaStore, dir: join(settings.dataDir, 'media') },
    activitySpillDir: join(settings.dataDir, 'activity-spill'),
    publicUrl: settings.publicUrl,
    maxImageBytes: settings.maxImageBytes,
    clock: options.clock ?? systemClock,
    redis,
    abuse: settings.abuse,
    htmlPool: settings.htmlPool,
    housekeeping: settings.housekeeping,
    importChildren: { module: threadModule(import.meta.url, 'cli/import-upload'), env: childEnv(settings), receivedDir: join(settings.dataDir, 'import-uploads') },
    onBackgroundError: (error) => logger.error({ err: error }, 'background write failed'),
    mail: settings.reportMail.smtpUrl ? { smtpUrl: settings.reportMail.smtpUrl, from: settings.reportMail.from } : undefined,
  });
  if (options.scheduleHousekeeping) {
    services.housekeeping.schedule(
      (deleted) => logger.info({ deleted }, 'housekeeping'),
      (error) => logger.error({ err: error }, 'housekeeping failed'),
    );
  }
  // A serving node sends the monthly report e-mails when SMTP is set (docs/operations.md, E-mail).
  const { smtpUrl, from } = settings.reportMail;
  const reportMail =
    options.scheduleHousekeeping && smtpUrl
      ? new ReportMailJob(
          db,
          services.clock,
          { smtpUrl, from, publicUrl: settings.publicUrl },
          (actor, site, month) => loadMonthlyReport(services, actor, site, month),
          (accountId, report) => services.htmlPool.renderReportPdf(accountId, report),
        )
      : undefined;
  reportMail?.schedule(
    reportMailIntervalMs,
    (sent) => logger.info({ sent }, 'monthly reports sent'),
    (error) => logger.error({ err: error }, 'monthly reports failed'),
  );
  return {
    settings,
    services,
    logger,
    searchIndex,
    async close() {
      await services.housekeeping.stop();
      await reportMail?.stop();
      services.mailer?.close();
      await services.importUploads.settled();
      await services.activity.flush();
      await services.htmlPool.close();
      await services.keys.flushUses();
      await searchIndex?.close();
      closing = true;
      redis?.disconnect();
      await db.kysely.destroy();
    },
  };
}
