// The child process a serving node starts for a step of a staff member's UI import
// (services/import-uploads.ts): it checks a received file, or applies a stored upload, as
// `anchorage import` would beside the service, writes the outcome into the upload's row, and exits.
// Its one argument is the step (`ImportUploadJob`, JSON); its settings come from its environment.
import pino from 'pino';
import { loadSettings } from '../config.js';
import { clockFrom } from '../core/time.js';
import { connect } from '../db/connect.js';
import { ImportService } from '../services/import.js';
import { ImportUploadSteps } from '../services/import-upload-steps.js';
import { type ImportUploadJob, stepExit } from '../services/import-uploads.js';
import { cliLockWaitMs, cliPageCacheKib } from './connection.js';

const job = JSON.parse(process.argv[2] ?? '{}') as ImportUploadJob;
const settings = loadSettings();
const logger = pino({ level: settings.logLevel }, pino.destination({ dest: 1, sync: true })).child({ importUpload: job.upload, step: job.step });
const db = connect(settings.databaseUrl, settings.dataDir, {
  lockWaitMs: cliLockWaitMs,
  pageCacheKib: cliPageCacheKib,
  poolSize: settings.databasePoolSize,
  listenUrl: settings.databaseListenUrl,
  warn: (message, error) => logger.warn({ err: error }, message),
});
// The node's clock, so that the rows written here carry the times the node would give them.
const clock = clockFrom(new Date(job.now));
const steps = new ImportUploadSteps(db.kysely, clock, new ImportService(db.kysely, clock, db.dialect, db.writeTurns), (error) => logger.error({ err: error }, 'import upload failed'));

// The exit code tells the node how the step ended (`stepExit`); the outcome itself is in the row.
try {
  if (job.step === 'check' && job.file !== undefined) {
    const { file } = job;
    const found = await steps.stamped(job.upload, () => steps.check(job.upload, file));
    process.exitCode = found === 'planned' ? stepExit.done : found === 'refused' ? stepExit.refused : 1;
  } else if (job.step === 'apply') process.exitCode = (await steps.stamped(job.upload, () => steps.apply(job.upload))) ? stepExit.done : 1;
  else throw new Error(`Not a step of an import upload: ${process.argv[2] ?? ''}`);
} catch (error) {
  // The step could not write its outcome: the node marks the upload failed when it sees the exit code.
  logger.error({ err: error }, 'import upload failed');
  process.exitCode = 1;
} finally {
  await db.kysely.destroy();
}
