import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import type { DialectName } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import type { WriteTurns } from '../db/write-turns.js';
import { batchSize, CommittedInBatches, type ImportSteps, WholeImport } from './import-batches.js';
import { checkImportFile, type ImportSource, type SiteHeader } from './import-check.js';
import { importArticle, importBacklink, ImportError, type ImportArticle, type ImportBacklink, type ImportProblem, siteColumns } from './import-format.js';
import { type ImportList, importEvents } from './import-reader.js';
import { type BatchContext, type BatchSite, emptyTally, type Tally, upsertArticles, upsertBacklinks } from './import-rows.js';
import { ImportScratch } from './import-scratch.js';

export { ImportError, importFileSchema, type ImportInput, type ImportProblem } from './import-format.js';
export type { ImportSource } from './import-check.js';
export type { Tally } from './import-rows.js';

/** A file to import, read from its start each time it is called: the import reads it twice (check, then write). */
export type ReopenableSource = () => ImportSource;

/** Problems an import names at most; the rest are counted. */
export const problemCap = 100;

/**
 * Article text a batch holds at most (bodies may be 5 MB each): on SQLite, storing a batch (its
 * articles and their revisions) holds the write lock that the service's writes wait for.
 */
const batchChars = 2_000_000;

/** Ids in the order they were given, kept as runs of consecutive ids: a million rows written in one import are a few runs. */
export class IdList {
  private readonly firsts: number[] = [];
  private readonly lengths: number[] = [];
  size = 0;

  add(id: number): void {
    const last = this.firsts.length - 1;
    if (last >= 0 && this.firsts[last]! + this.lengths[last]! === id) this.lengths[last]! += 1;
    else {
      this.firsts.push(id);
      this.lengths.push(1);
    }
    this.size += 1;
  }

  *[Symbol.iterator](): Generator<number> {
    for (const [run, first] of this.firsts.entries()) {
      for (let id = first; id < first + this.lengths[run]!; id++) yield id;
    }
  }
}

/** What an import does (a dry run: would do) with one site of the file and its rows. */
export interface ImportedSite {
  /** Null in a dry run for a site it would create. */
  id: number | null;
  site: keyof Tally;
  articles: Tally;
  backlinks: Tally;
  articleIds: IdList;
  backlinkIds: IdList;
}

export interface ImportResult {
  sites: { id: number; site: keyof Tally; articles: Tally; backlinks: Tally; article_ids: number[]; backlink_ids: number[] }[];
}

/** A dry run's answer: every problem (up to `problemCap`), how many more, and the plan (empty when there are problems). */
export interface ImportPlan {
  problems: ImportProblem[];
  more: number;
  sites: ImportedSite[];
}

/**
 * Whose action an import is, for its activity records: an operator's command (channel `cli`, no
 * user) unless a staff member applied it in the UI (their user, the UI's channel and request).
 */
export interface ImportActor {
  userId: number;
  channel: 'api';
  method: string;
  path: string;
}

/** Rows read so far by a running import. */
export interface ImportProgress {
  sites: number;
  articles: number;
  backlinks: number;
}

/**
 * PostgreSQL: an import that created this many rows or more has the tables analysed as it ends.
 * The planner's statistics would otherwise be those of before the import (autovacuum analyses
 * later, if at all), and the next import's key lookups in a large site would read all its rows
 * rather than their index.
 */
const analyzeAfterRows = 10_000;

const tallyJson = (tally: Tally) => JSON.stringify(tally);

/** `JSON.stringify` of the import result (each site's id, what was done, and its rows' ids in file order), in pieces of a few thousand ids. */
export function* importResultJson(sites: readonly ImportedSite[]): Generator<string> {
  function* ids(list: IdList): Generator<string> {
    let piece: number[] = [];
    let first = true;
    for (const id of list) {
      piece.push(id);
      if (piece.length === 8192) {
        yield `${first ? '' : ','}${piece.join(',')}`;
        first = false;
        piece = [];
      }
    }
    if (piece.length > 0) yield `${first ? '' : ','}${piece.join(',')}`;
  }
  yield '{"sites":[';
  for (const [index, site] of sites.entries()) {
    yield `${index === 0 ? '' : ','}{"id":${site.id},"site":"${site.site}","articles":${tallyJson(site.articles)},"backlinks":${tallyJson(site.backlinks)},"article_ids":[`;
    yield* ids(site.articleIds);
    yield '],"backlink_ids":[';
    yield* ids(site.backlinkIds);
    yield ']}';
  }
  yield ']}';
}

/** `JSON.stringify` of a dry run's answer: `{"problems":[…],"more_problems":N,"sites":[{"id","site","articles","backlinks"}]}`. */
export const importPlanJson = (plan: ImportPlan): string =>
  JSON.stringify({
    problems: plan.problems,
    more_problems: plan.more,
    sites: plan.sites.map((s) => ({ id: s.id, site: s.site, articles: s.articles, backlinks: s.backlinks })),
  });

type StoredSite = Selectable<Database['sites']>;

/** One site of the file while its rows are written: the rows waiting for the next batch. */
class SiteRun implements ImportedSite {
  site: keyof Tally = 'created';
  readonly articles = emptyTally();
  readonly backlinks = emptyTally();
  readonly articleIds = new IdList();
  readonly backlinkIds = new IdList();
  waiting: { articles: ImportArticle[]; backlinks: ImportBacklink[] } = { articles: [], backlinks: [] };
  waitingChars = 0;

  constructor(
    readonly batch: BatchSite,
    readonly header: SiteHeader,
  ) {}

  get id(): number | null {
    return this.batch.id;
  }
}

/**
 * Writes (or, without `steps`, plans) a checked file: each site matched by its owner's account and
 * `website_url`, each row by its key, in batches of `batchSize`.
 */
class UpsertWriter {
  readonly sites: SiteRun[] = [];
  private site: SiteRun | undefined;
  private readonly read: ImportProgress = { sites: 0, articles: 0, backlinks: 0 };
  private readonly headers: Map<number, SiteHeader>;
  /** The batch being written: one at a time, while the file's next rows are read (`flush`). */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly steps: ImportSteps | undefined,
    headers: SiteHeader[],
    private readonly now: string,
    private readonly onProgress: ((progress: ImportProgress) => void) | undefined,
    private readonly actor?: ImportActor,
  ) {
    this.headers = new Map(headers.map((header) => [header.index, header]));
  }

  async writeAll(source: ImportSource): Promise<void> {
    for await (const events of importEvents(source)) {
      for (const event of events) {
        if (event.kind === 'siteStart') this.site = await this.startSite(this.headers.get(event.site)!);
        else if (event.kind === 'item') await this.item(event.list, event.value);
        else if (event.kind === 'siteEnd') await this.endSite();
      }
    }
    await this.writing;
  }

  /** `step` in the import's transaction when it writes; on the database when it only plans. */
  private step<T>(step: (db: Kysely<Database> | Transaction<Database>, trx: Transaction<Database> | undefined) => Promise<T>): Promise<T> {
    return this.steps ? this.steps.run((trx) => step(trx, trx)) : step(this.db, undefined);
  }

  private async startSite(header: SiteHeader): Promise<SiteRun> {
    const fields = header.fields;
    const accountId = header.accountId!;
    const websiteUrl = fields.website_url!;
    return this.step(async (db, trx) => {
      const stored = await db
        .selectFrom('sites')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('website_url', '=', websiteUrl)
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      if (!stored) {
        const run = new SiteRun({ id: null, accountId, existed: false }, header);
        if (trx) {
          const row = { account_id: accountId, website_url: websiteUrl, website_url_lc: websiteUrl.toLowerCase(), created_at: this.now };
          for (const column of siteColumns) Object.assign(row, { [column]: fields[column] ?? null });
          run.batch.id = (await trx.insertInto('sites').values(row).returning('id').executeTakeFirstOrThrow()).id;
          this.steps!.journal?.changed('sites', run.batch.id, null, run.batch.id);
        }
        return run;
      }
      const run = new SiteRun({ id: stored.id, accountId, existed: true }, header);
      const changes = this.siteChanges(fields, stored);
      run.site = Object.keys(changes).length > 0 ? 'updated' : 'unchanged';
      if (trx && run.site === 'updated') {
        this.steps!.journal?.changed('sites', stored.id, Object.fromEntries(Object.keys(changes).map((c) => [c, stored[c as keyof StoredSite]])), stored.id);
        await trx.updateTable('sites').set(changes).where('id', '=', stored.id).execute();
      }
      return run;
    });
  }

  private siteChanges(fields: SiteHeader['fields'], stored: StoredSite): Partial<Record<(typeof siteColumns)[number], string | null>> {
    const changes: Partial<Record<(typeof siteColumns)[number], string | null>> = {};
    for (const column of siteColumns) if (fields[column] !== undefined && fields[column] !== stored[column]) changes[column] = fields[column];
    return changes;
  }

  private async item(list: ImportList, value: unknown): Promise<void> {
    const site = this.site!;
    if (list === 'articles') {
      const article = importArticle.parse(value);
      site.waiting.articles.push(article);
      site.waitingChars += article.body.length;
      if (site.waiting.articles.length < batchSize && site.waitingChars < batchChars) return;
    } else {
      site.waiting.backlinks.push(importBacklink.parse(value));
      if (site.waiting.backlinks.length < batchSize) return;
    }
    await this.flush(site);
  }

  private async endSite(): Promise<void> {
    const site = this.site!;
    await this.flush(site);
    await this.writing;
    this.sites.push(site);
    this.read.sites += 1;
    this.site = undefined;
    this.onProgress?.({ ...this.read });
  }

  /**
   * Starts writing (or planning) the rows waiting once the batch before is written, and returns:
   * the file's next rows are read and checked while the database writes these (a failure of the
   * write is thrown by the next `flush`, or at the end of `writeAll`).
   */
  private async flush(site: SiteRun): Promise<void> {
    const { articles, backlinks } = site.waiting;
    site.waiting = { articles: [], backlinks: [] };
    site.waitingChars = 0;
    await this.writing;
    this.writing = this.write(site, articles, backlinks);
    // Handled when awaited; until then its failure is not one of the process.
    this.writing.catch(() => undefined);
  }

  private async write(site: SiteRun, articles: ImportArticle[], backlinks: ImportBacklink[]): Promise<void> {
    if (articles.length > 0) {
      const { ids } = await this.batch(site, (ctx) => upsertArticles(site.batch, articles, ctx), site.articles);
      for (const id of ids) if (id !== null) site.articleIds.add(id);
      this.read.articles += articles.length;
    }
    if (backlinks.length > 0) {
      const { ids } = await this.batch(site, (ctx) => upsertBacklinks(site.batch, backlinks, ctx), site.backlinks);
      for (const id of ids) if (id !== null) site.backlinkIds.add(id);
      this.read.backlinks += backlinks.length;
    }
    this.onProgress?.({ ...this.read });
  }

  private batch(site: SiteRun, upsert: (ctx: BatchContext) => Promise<{ ids: (number | null)[]; counted: boolean }>, tally: Tally) {
    return this.step(async (db, trx) => {
      const counts = this.steps?.counts;
      const outcome = await upsert({ db, write: trx && counts ? { trx, now: this.now, journal: this.steps!.journal, counts: counts.pending } : undefined, tally });
      // A site stored before: nodes that kept its counters read them again.
      if (counts && site.batch.existed && outcome.counted) counts.changedSite(site.batch.id!);
      return outcome;
    });
  }

  /** One activity record per account the import touched, as the last step. */
  async record(durationMs: number): Promise<void> {
    const accounts = [...new Set(this.sites.map((site) => site.batch.accountId))];
    if (accounts.length === 0 || !this.steps) return;
    await this.steps.run(async (trx) => {
      for (const accountId of accounts) {
        const by = this.actor ? { user_id: this.actor.userId, channel: this.actor.channel, method: this.actor.method, path: this.actor.path } : { channel: 'cli' as const };
        const row = { created_at: this.now, account_id: accountId, ...by, operation: 'import', status: 200, duration_ms: Math.round(durationMs) };
        const { id } = await trx.insertInto('activity_log').values(row).returning('id').executeTakeFirstOrThrow();
        this.steps!.journal?.changed('activity_log', id, null, this.sites.find((site) => site.batch.accountId === accountId)!.batch.id!);
      }
    });
  }
}

/** The content pipeline's way in: sites, articles and backlinks, matched by their keys and created or updated, all or nothing. */
export class ImportService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly dialect: DialectName,
    /** SQLite: the batches give way to other processes waiting for the write lock. */
    private readonly turns?: Pick<WriteTurns, 'giveWay'>,
  ) {}

  /** Imports an import file already in memory (tests, the demo data set). */
  async run(input: unknown): Promise<ImportResult> {
    const text = String(JSON.stringify(input));
    const sites = await this.importFrom(() => [text]);
    return {
      sites: sites.map((s) => ({ id: s.id!, site: s.site, articles: s.articles, backlinks: s.backlinks, article_ids: [...s.articleIds], backlink_ids: [...s.backlinkIds] })),
    };
  }

  /** Checks the whole file and plans it, writing nothing: what `importFrom` would do, or every problem. */
  async dryRun(open: ReopenableSource, onProgress?: (progress: ImportProgress) => void): Promise<ImportPlan> {
    return this.withScratch(async (scratch) => {
      const checked = await checkImportFile(open(), this.db, scratch, problemCap);
      if (checked.problems.length > 0) return { problems: checked.problems, more: checked.more, sites: [] };
      const writer = new UpsertWriter(this.db, undefined, checked.sites, toTimestamp(this.clock.now()), onProgress);
      await writer.writeAll(open());
      return { problems: [], more: 0, sites: writer.sites };
    });
  }

  /**
   * Imports a file: reads it whole once to find every problem (an `ImportError` with all of
   * them, up to `problemCap`, and nothing written), then again to write it in batches, each row
   * created, updated or left as it is. PostgreSQL writes it in one transaction; SQLite commits the
   * batches as they come (`CommittedInBatches`), so the service's writes never wait for the whole
   * import, and undoes them when a later one fails. Memory holds one batch, not the file. Its
   * activity records name `actor` (a staff member's UI import), else the operator's command.
   */
  async importFrom(open: ReopenableSource, onProgress?: (progress: ImportProgress) => void, actor?: ImportActor): Promise<ImportedSite[]> {
    return this.withScratch(async (scratch) => {
      const started = performance.now();
      const checked = await checkImportFile(open(), this.db, scratch, problemCap);
      if (checked.problems.length > 0) throw new ImportError(checked.problems, checked.more);
      const now = toTimestamp(this.clock.now());
      if (this.dialect === 'postgres') {
        const sites = await this.db.transaction().execute(async (trx) => {
          const whole = new WholeImport(trx);
          const writer = new UpsertWriter(this.db, whole, checked.sites, now, onProgress, actor);
          await writer.writeAll(open());
          await whole.counts.saveIn(trx);
          await writer.record(performance.now() - started);
          return writer.sites;
        });
        if (sites.reduce((rows, site) => rows + site.articles.created + site.backlinks.created, 0) >= analyzeAfterRows) await sql`analyze articles, revisions, backlinks`.execute(this.db);
        return sites;
      }
      const batches = new CommittedInBatches(this.db, this.dialect, scratch, this.turns);
      const writer = new UpsertWriter(this.db, batches, checked.sites, now, onProgress, actor);
      try {
        await writer.writeAll(open());
        await writer.record(performance.now() - started);
        await batches.commit();
      } catch (error) {
        await batches.undo().catch((undoError: unknown) => {
          throw new Error(
            `${String((error as Error).message)}; undoing what the import had stored failed too (${String((undoError as Error).message)}): restore the backup taken before it, or import the file again once the cause is fixed`,
            { cause: error },
          );
        });
        throw error;
      }
      return writer.sites;
    });
  }

  private async withScratch<T>(use: (scratch: ImportScratch) => Promise<T>): Promise<T> {
    const scratch = new ImportScratch();
    try {
      return await use(scratch);
    } finally {
      scratch.close();
    }
  }
}
