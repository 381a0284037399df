import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import { AppError } from '../core/errors.js';
import { randomBase62, sha256 } from '../core/secrets.js';
import { type Clock, toTimestamp } from '../core/time.js';
import type { DialectName } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import { type ChildExit, runChild } from '../platform/child-process.js';
import type { Actor } from './actor.js';
import type { ActivityLog } from './activity.js';
import type { ImportProblem, ImportProgress, Tally } from './import.js';
import { requireStaff, staffEntry } from './staff-actions.js';

/** An upload's token: `iu_` and 40 base62 characters (238 random bits); only its hash is stored. */
const tokenPattern = /^iu_[0-9A-Za-z]{40}$/;

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

/** The plan of an upload still being checked. */
export const noPlanYet = JSON.stringify({ problems: [], more_problems: 0, sites: [] } satisfies UploadPlan);

/** What an apply did, or why it (or the check) wrote nothing. */
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
 * A step of an upload, run in a child process (`cli/import-upload.ts`): the check of the file the
 * node received (`file`), or the apply of the upload's stored bytes. `now` is the node's clock.
 */
export interface ImportUploadJob {
  step: 'check' | 'apply';
  upload: number;
  file?: string;
  now: string;
}

/**
 * How a step's process exits: `done` once it wrote the step's outcome (a plan, what the import
 * did, or why the file no longer passes); `refused` when the check found problems (as `anchorage
 * import --dry-run` exits 1); anything else when it failed on our side.
 */
export const stepExit = { done: 0, refused: 3 } as const;

/** An uploaded file, streamed to the node's disk until its check has read it. */
export interface ReceivedFile {
  path: string;
  size: number;
  /** Set once an upload owns it (and deletes it); else whoever received it deletes it. */
  taken: boolean;
}

/** Where and how the node starts the child process of a step. */
export interface ImportChildSettings {
  /** The child's module (`threadModule` of `cli/import-upload`). */
  module: URL;
  /** Its environment: the node's settings, given explicitly. */
  env: NodeJS.ProcessEnv;
  /** Where received files wait for their check (in the node's data directory). */
  receivedDir: string;
}

/** A check that failed on our side. */
export const checkFailed = 'The check of the file failed on our side; nothing was imported. The service log has the cause: upload the file again.';

/** An import that failed on our side and wrote nothing (PostgreSQL's one transaction, or undone). */
export const importFailed = 'The import failed on our side; nothing was imported. The service log has the cause.';

/** While a step's process runs, it stamps its upload's `updated_at` this often (ms). */
export const stepHeartbeatMs = 10_000;

/**
 * An upload checking or applying whose stamp is older than this lost its process along with the
 * node that would have seen it exit (a restart, a crash of the machine): reading it marks it failed.
 */
const stepLostAfterMs = 60_000;

/** The outcome of a step whose process died before it wrote one. */
function diedOutcome(step: ImportUploadJob['step'], dialect: DialectName): UploadOutcome {
  if (step === 'check') return { error: checkFailed };
  return {
    error:
      dialect === 'postgres'
        ? importFailed
        : 'The import failed on our side and stopped part-way: the rows it had written stay. The service log has the cause; upload the file again and apply it (an import matches what is already there).',
  };
}

/**
 * Staff import a file from the UI in two steps: the upload, checked and planned as `anchorage
 * import --dry-run` does (every problem, the plan), then its apply, which imports the same bytes.
 * Each step runs in a child process, as `anchorage import` would beside the service: the serving
 * node never parses the file nor touches its bytes, so its event loop stays free. The file waits
 * in the database between the two (`import_upload_files`, which only the children read and
 * write), under an unguessable token that only the session that uploaded it can use; the child
 * writes the plan, the apply's progress and its outcome into the upload's row, for the page that
 * polls it (whichever node answers). Each step is in the staff member's activity log.
 */
export class ImportUploadsService {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    private readonly clock: Clock,
    private readonly activity: ActivityLog,
    private readonly children: ImportChildSettings,
    private readonly onBackgroundError: (error: unknown) => void,
  ) {}

  /** Streams an uploaded file to the node's disk, off the event loop. */
  async receive(stream: Readable): Promise<ReceivedFile> {
    await mkdir(this.children.receivedDir, { recursive: true });
    const file: ReceivedFile = { path: join(this.children.receivedDir, `${randomUUID()}.json`), size: 0, taken: false };
    stream.on('data', (chunk: Buffer) => (file.size += chunk.length));
    try {
      await pipeline(stream, createWriteStream(file.path, { flags: 'wx' }));
    } catch (error) {
      await this.discard(file);
      throw error;
    }
    return file;
  }

  /** Deletes a received file no upload took. */
  async discard(file: ReceivedFile): Promise<void> {
    if (!file.taken) await rm(file.path, { force: true });
  }

  /** Keeps `file` as an upload of this session, starts its check in a child process, and returns its token. */
  async upload(actor: Actor, sessionId: string, file: ReceivedFile): Promise<string> {
    requireStaff(actor);
    const token = `iu_${randomBase62(40)}`;
    const now = toTimestamp(this.clock.now());
    const { id } = await this.db
      .insertInto('import_uploads')
      .values({
        token_hash: sha256(token),
        user_id: actor.userId,
        session_hash: sha256(sessionId),
        size: file.size,
        plan: noPlanYet,
        state: 'checking',
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    file.taken = true;
    this.start({ step: 'check', upload: id, file: file.path, now }, async (exit) => {
      await rm(file.path, { force: true });
      this.activity.record(staffEntry(actor, 'checkImport', '/app/staff/imports', exit.code === stepExit.done ? 201 : exit.code === stepExit.refused ? 422 : 500));
    });
    return token;
  }

  /** The upload of `token`, if this session made it. */
  async get(actor: Actor, sessionId: string, token: string): Promise<ImportUpload> {
    requireStaff(actor);
    const read = () => this.row(sessionId, token).select(['id', 'state', 'size', 'plan', 'progress', 'outcome', 'created_at', 'updated_at']).executeTakeFirst();
    let row = await read();
    if (!row) throw notFound();
    if ((row.state === 'checking' || row.state === 'applying') && Date.parse(row.updated_at) < this.clock.now().getTime() - stepLostAfterMs) {
      await this.markFailed(row.id, row.state === 'checking' ? 'check' : 'apply', row.updated_at);
      row = (await read()) ?? row;
    }
    const { id: _id, ...upload } = row;
    return {
      ...upload,
      plan: JSON.parse(row.plan) as UploadPlan,
      progress: row.progress === null ? null : (JSON.parse(row.progress) as ImportProgress),
      outcome: row.outcome === null ? null : (JSON.parse(row.outcome) as UploadOutcome),
    };
  }

  /**
   * Starts importing the upload of `token` in a child process, once: a second apply (a reload, a
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
    this.start({ step: 'apply', upload: row.id, now }, async () => undefined);
  }

  /** Resolves once every child process this node started has exited (a stopping node waits for them). */
  async settled(): Promise<void> {
    await Promise.all(this.running);
  }

  private row(sessionId: string, token: string) {
    return this.db
      .selectFrom('import_uploads')
      .where('token_hash', '=', tokenPattern.test(token) ? sha256(token) : '')
      .where('session_hash', '=', sha256(sessionId));
  }

  /**
   * Runs `job` in a child process; once it has exited, `after`. A child that died before it wrote
   * the step's outcome (killed, out of memory, a crash) leaves the upload failed, with its cause in
   * this node's log (the child's own log lines are there too).
   */
  private start(job: ImportUploadJob, after: (exit: ChildExit) => Promise<void>): void {
    const child = runChild(this.children.module, [JSON.stringify(job)], this.children.env);
    const run = child.exited
      .then(async (exit) => {
        if (exit.code !== stepExit.done && !(job.step === 'check' && exit.code === stepExit.refused)) await this.markDied(job, exit);
        await after(exit);
      })
      .catch(this.onBackgroundError);
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  private async markDied(job: ImportUploadJob, exit: ChildExit): Promise<void> {
    const marked = await this.markFailed(job.upload, job.step);
    const how = exit.signal ? `was ended by ${exit.signal}` : `exited with code ${exit.code}`;
    this.onBackgroundError(new Error(`The ${job.step} of import upload ${job.upload} failed: its process ${how}${marked ? '; the upload is marked failed' : ''}.`));
  }

  /**
   * Marks the upload failed if its `step` is still under way (and, with `stamped`, not stamped
   * since: a live process's stamp wins); whether it did.
   */
  private async markFailed(id: number, step: ImportUploadJob['step'], stamped?: string): Promise<boolean> {
    let update = this.db
      .updateTable('import_uploads')
      .set({ state: 'failed', outcome: JSON.stringify(diedOutcome(step, this.dialect)), updated_at: toTimestamp(this.clock.now()) })
      .where('id', '=', id)
      .where('state', '=', step === 'check' ? 'checking' : 'applying');
    if (stamped !== undefined) update = update.where('updated_at', '=', stamped);
    return Number((await update.executeTakeFirst()).numUpdatedRows) === 1;
  }
}

const notFound = () => new AppError('not_found', 'No upload with this address in your session: upload the file again.');
