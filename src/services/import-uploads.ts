import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { AppError } from '../core/errors.js';
import { randomBase62, sha256 } from '../core/secrets.js';
import { type Clock, toTimestamp } from '../core/time.js';
import type { Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import type { ActivityLog } from './activity.js';
import { ImportError, type ImportProblem, type ImportProgress, importPlanJson, type ImportService, type Tally } from './import.js';
import { requireStaff, staffEntry } from './staff-actions.js';

/** An upload's token: `iu_` and 40 base62 characters (238 random bits); only its hash is stored. */
const tokenPattern = /^iu_[0-9A-Za-z]{40}$/;

/** An apply's progress reaches the database at most this often (ms). */
const progressWriteMs = 500;

/** Bytes of the file the reader takes at a time, a turn of the event loop apart. */
const pieceBytes = 64 * 1024;

/**
 * The file in pieces with a turn of the event loop before each: given whole, the reader would
 * parse and check it in one go, and requests would wait for all of it.
 */
async function* inPieces(file: Buffer): AsyncGenerator<Buffer> {
  for (let at = 0; at < file.length; at += pieceBytes) {
    await nextTurn();
    yield file.subarray(at, at + pieceBytes);
  }
}

/** Uploads older than this (ms) are deleted by the next upload, unless an apply is running. */
const keepUploadsMs = 24 * 3_600_000;

/** One site of a dry run's plan, or of an apply's outcome, as `anchorage import` prints it. */
export interface PlannedSite {
  id: number | null;
  site: keyof Tally;
  articles: Tally;
  backlinks: Tally;
}

/** A dry run's answer, as `anchorage import --dry-run` prints it. */
export interface UploadPlan {
  problems: ImportProblem[];
  more_problems: number;
  sites: PlannedSite[];
}

/** What an apply did, or why it wrote nothing. */
export type UploadOutcome = { sites: PlannedSite[] } | { error: string; problems?: ImportProblem[]; more_problems?: number };

export interface ImportUpload {
  state: Database['import_uploads']['state'];
  size: number;
  plan: UploadPlan;
  /** Rows the apply has written so far. */
  progress: ImportProgress | null;
  outcome: UploadOutcome | null;
  created_at: string;
  updated_at: string;
}

/**
 * Staff import a file from the UI in two steps: the upload, checked and planned as `anchorage
 * import --dry-run` does (every problem, the plan), then its apply, which imports the same bytes.
 * The file waits in the database between the two, under an unguessable token that only the
 * session that uploaded it can use; the apply runs in the background and writes its progress
 * there, for the page that polls it (whichever node answers). Each step is in the staff member's
 * activity log.
 */
export class ImportUploadsService {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly importer: ImportService,
    private readonly activity: ActivityLog,
    private readonly onBackgroundError: (error: unknown) => void,
  ) {}

  /** Checks and plans `file`, keeps it for the apply (when it has no problem), and returns its token. */
  async upload(actor: Actor, sessionId: string, file: Buffer): Promise<string> {
    requireStaff(actor);
    const plan = await this.importer.dryRun(() => inPieces(file));
    const refused = plan.problems.length > 0;
    const token = `iu_${randomBase62(40)}`;
    const now = toTimestamp(this.clock.now());
    const entry = staffEntry(actor, 'checkImport', '/app/staff/imports', refused ? 422 : 201);
    await this.db.transaction().execute(async (trx) => {
      const stale = toTimestamp(new Date(this.clock.now().getTime() - keepUploadsMs));
      await trx.deleteFrom('import_uploads').where('created_at', '<', stale).where('state', '<>', 'applying').execute();
      await trx
        .insertInto('import_uploads')
        .values({
          token_hash: sha256(token),
          user_id: actor.userId,
          session_hash: sha256(sessionId),
          bytes: refused ? Buffer.alloc(0) : file,
          size: file.length,
          plan: importPlanJson(plan),
          state: refused ? 'refused' : 'planned',
          created_at: now,
          updated_at: now,
        })
        .execute();
      await this.activity.recordIn(trx, entry);
    });
    this.activity.committed(entry);
    return token;
  }

  /** The upload of `token`, if this session made it. */
  async get(actor: Actor, sessionId: string, token: string): Promise<ImportUpload> {
    requireStaff(actor);
    const row = await this.row(sessionId, token)
      .select(['state', 'size', 'plan', 'progress', 'outcome', 'created_at', 'updated_at'])
      .executeTakeFirst();
    if (!row) throw notFound();
    return {
      ...row,
      plan: JSON.parse(row.plan) as UploadPlan,
      progress: row.progress === null ? null : (JSON.parse(row.progress) as ImportProgress),
      outcome: row.outcome === null ? null : (JSON.parse(row.outcome) as UploadOutcome),
    };
  }

  /**
   * Starts importing the upload of `token` in the background, once: a second apply (a reload, a
   * double click) finds it applying or applied and starts nothing.
   */
  async apply(actor: Actor, sessionId: string, token: string): Promise<void> {
    requireStaff(actor);
    const row = await this.row(sessionId, token).select(['id', 'state']).executeTakeFirst();
    if (!row) throw notFound();
    if (row.state === 'refused') throw new AppError('validation_failed', 'This file has problems: fix them and upload it again.', { fields: { file: ['The file has problems; nothing can be imported from it.'] } });
    const now = toTimestamp(this.clock.now());
    const entry = staffEntry(actor, 'applyImport', '/app/staff/imports/:token/apply', 202);
    const started = await this.db.transaction().execute(async (trx) => {
      const taken = await trx.updateTable('import_uploads').set({ state: 'applying', updated_at: now }).where('id', '=', row.id).where('state', '=', 'planned').executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== 1) return false;
      await this.activity.recordIn(trx, entry);
      return true;
    });
    if (!started) return;
    this.activity.committed(entry);
    const { bytes } = await this.db.selectFrom('import_uploads').select('bytes').where('id', '=', row.id).executeTakeFirstOrThrow();
    const run = this.run(row.id, Buffer.from(bytes)).catch(this.onBackgroundError);
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  /** Resolves once every apply this process started has finished (a stopping node waits for them). */
  async settled(): Promise<void> {
    await Promise.all(this.running);
  }

  private row(sessionId: string, token: string) {
    return this.db
      .selectFrom('import_uploads')
      .where('token_hash', '=', tokenPattern.test(token) ? sha256(token) : '')
      .where('session_hash', '=', sha256(sessionId));
  }

  /** Imports the bytes, writing the progress as it goes, then the outcome; the file is dropped either way. */
  private async run(id: number, bytes: Buffer): Promise<void> {
    let written = Promise.resolve();
    let lastWrite = -Infinity;
    let latest: ImportProgress | null = null;
    const onProgress = (progress: ImportProgress) => {
      latest = progress;
      if (performance.now() - lastWrite < progressWriteMs) return;
      lastWrite = performance.now();
      const value = JSON.stringify(progress);
      written = written.then(() => this.db.updateTable('import_uploads').set({ progress: value }).where('id', '=', id).execute()).then(
        () => undefined,
        () => undefined,
      );
    };
    let state: 'applied' | 'failed';
    let outcome: UploadOutcome;
    try {
      const sites = await this.importer.importFrom(() => inPieces(bytes), onProgress);
      state = 'applied';
      outcome = { sites: sites.map((site) => ({ id: site.id, site: site.site, articles: site.articles, backlinks: site.backlinks })) };
    } catch (error) {
      state = 'failed';
      if (error instanceof ImportError) {
        outcome = { error: 'The file no longer passes the checks (the data changed since the dry run); nothing was imported.', problems: error.problems, more_problems: error.more };
      } else {
        this.onBackgroundError(error);
        outcome = { error: 'The import failed on our side; nothing was imported. The service log has the cause.' };
      }
    }
    await written;
    await this.db
      .updateTable('import_uploads')
      .set({ state, progress: latest === null ? null : JSON.stringify(latest), outcome: JSON.stringify(outcome), bytes: Buffer.alloc(0), updated_at: toTimestamp(this.clock.now()) })
      .where('id', '=', id)
      .execute();
  }
}

const notFound = () => new AppError('not_found', 'No upload with this address in your session: upload the file again.');
