import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Kysely } from 'kysely';
import { type Clock, toTimestamp } from '../core/time.js';
import type { Database } from '../db/schema.js';
import { ImportError, type ImportProgress, importPlanJson, type ImportService } from './import.js';
import { checkFailed, importFailed, stepHeartbeatMs, type UploadOutcome } from './import-uploads.js';

/** An apply's progress reaches the database at most this often (ms). */
const progressWriteMs = 500;

/** Bytes of the stored file the reader takes at a time. */
const pieceBytes = 1 << 20;

function* inPieces(file: Buffer): Generator<Buffer> {
  for (let at = 0; at < file.length; at += pieceBytes) yield file.subarray(at, at + pieceBytes);
}

/**
 * The steps of a staff member's UI import (`ImportUploadsService`), as the child process the
 * serving node starts runs them: the check of a received file, then the apply of the stored
 * bytes, each written into the upload's row. `importer` is the one `anchorage import` uses.
 */
export class ImportUploadSteps {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly importer: ImportService,
    private readonly onError: (error: unknown) => void,
  ) {}

  /**
   * Runs a step of upload `id`, stamping the upload's `updated_at` while it runs: a reader tells
   * a step under way from one whose process is gone by the stamp (`ImportUploadsService.get`).
   */
  async stamped<T>(id: number, step: () => Promise<T>): Promise<T> {
    const stamp = setInterval(() => {
      this.db
        .updateTable('import_uploads')
        .set({ updated_at: toTimestamp(this.clock.now()) })
        .where('id', '=', id)
        .where('state', 'in', ['checking', 'applying'])
        .execute()
        .catch(this.onError);
    }, stepHeartbeatMs);
    try {
      return await step();
    } finally {
      clearInterval(stamp);
    }
  }

  /** Checks and plans the received `file`, and stores it (`import_upload_files`) for the apply when it has no problem; what the check found. */
  async check(id: number, file: string): Promise<'planned' | 'refused' | 'failed'> {
    let state: 'planned' | 'refused' | 'failed';
    let plan: string | undefined;
    let outcome: UploadOutcome | null = null;
    let bytes: Buffer | undefined;
    try {
      const planned = await this.importer.dryRun(() => createReadStream(file, { highWaterMark: pieceBytes }));
      plan = importPlanJson(planned);
      state = planned.problems.length > 0 ? 'refused' : 'planned';
      if (state === 'planned') bytes = await readFile(file);
    } catch (error) {
      this.onError(error);
      state = 'failed';
      outcome = { error: checkFailed };
    }
    await this.db.transaction().execute(async (trx) => {
      const checked = await trx
        .updateTable('import_uploads')
        .set({ state, ...(plan === undefined ? {} : { plan }), outcome: outcome === null ? null : JSON.stringify(outcome), updated_at: toTimestamp(this.clock.now()) })
        .where('id', '=', id)
        .where('state', '=', 'checking')
        .executeTakeFirst();
      if (bytes && Number(checked.numUpdatedRows) === 1) await trx.insertInto('import_upload_files').values({ upload_id: id, bytes }).execute();
    });
    return state;
  }

  /**
   * Imports the stored bytes, writing the progress as it goes, then the outcome; the bytes are
   * dropped either way. Whether it did not fail on our side.
   */
  async apply(id: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('import_uploads')
      .innerJoin('import_upload_files', 'import_upload_files.upload_id', 'import_uploads.id')
      .select(['import_upload_files.bytes', 'import_uploads.user_id'])
      .where('import_uploads.id', '=', id)
      .where('import_uploads.state', '=', 'applying')
      .executeTakeFirst();
    if (!row) return true;
    const bytes = Buffer.from(row.bytes);
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
    let ourSide = false;
    try {
      // The staff member's action: the records name them, on the UI's channel, as their other steps.
      const actor = { userId: row.user_id, channel: 'api' as const, method: 'POST', path: '/app/staff/imports/:token/apply' };
      const sites = await this.importer.importFrom(() => inPieces(bytes), onProgress, actor);
      state = 'applied';
      outcome = { sites: sites.map((site) => ({ id: site.id, site: site.site, articles: site.articles, backlinks: site.backlinks })) };
    } catch (error) {
      state = 'failed';
      if (error instanceof ImportError) {
        outcome = { error: 'The file no longer passes the checks (the data changed since the dry run); nothing was imported.', problems: error.problems, more_problems: error.more };
      } else {
        this.onError(error);
        ourSide = true;
        outcome = { error: importFailed };
      }
    }
    await written;
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('import_uploads')
        .set({ state, progress: latest === null ? null : JSON.stringify(latest), outcome: JSON.stringify(outcome), updated_at: toTimestamp(this.clock.now()) })
        .where('id', '=', id)
        .execute();
      await trx.deleteFrom('import_upload_files').where('upload_id', '=', id).execute();
    });
    return !ourSide;
  }
}
