import { setTimeout as sleep } from 'node:timers/promises';
import type { ControlledTransaction, Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import { blankTitle, isBlankTitle } from '../core/article-rules.js';
import { holdsNul, nulRefused } from '../core/errors.js';
import { SANITIZER_VERSION, sanitizeTrusted } from '../core/html.js';
import { wordCount } from '../core/protected-anchors.js';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import type { DialectName } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import { protectedLinksColumn } from './articles.js';
import { counterTables, DayCountChanges } from './counters.js';
import { anchorTypes, articleStatuses, backlinkCategories, backlinkStatuses, singleLine } from '../core/values.js';
import { type ImportEvent, type ImportList, importEvents, NotJsonError } from './import-reader.js';

const timestamp = z.iso.datetime({ offset: false, precision: 0 });
// Refused with its path rather than failing on save.
const text = z.string().max(100_000).refine((value) => !holdsNul(value), nulRefused);
/** Links the UI and the API hand out: absolute http(s) only, as the API takes (no `javascript:`, `data:` …). */
const httpUrl = text.refine((value) => {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}, 'Must be an absolute http or https URL.');
/** A site's own address is shown and matched as written; only its scheme is checked. */
const httpAddress = text.refine((value) => /^https?:\/\//i.test(value), 'Must start with http:// or https://.');

const importArticle = z.strictObject({
  // Absent or null: an article without a title, as the content pipeline may send one.
  title: text
    .refine((v) => [...v].length <= 255, 'At most 255 characters.')
    .refine((v) => !isBlankTitle(v), blankTitle)
    .nullable()
    .optional(),
  url: httpUrl.nullable().optional(),
  status: z.enum(articleStatuses),
  published_at: timestamp.nullable().optional(),
  target_keyword: text.nullable().optional(),
  meta_description: text.refine((v) => [...v].length <= 500, 'At most 500 characters.').nullable().optional(),
  featured_image_url: httpUrl.nullable().optional(),
  body: z.string().max(5_000_000),
});

const importBacklink = z.strictObject({
  acquired_at: timestamp.nullable().optional(),
  source_domain: text.nullable().optional(),
  source_url: httpUrl.nullable().optional(),
  target_url: httpUrl.nullable().optional(),
  anchor_text: text.nullable().optional(),
  anchor_type: z.enum(anchorTypes).nullable().optional(),
  status: z.enum(backlinkStatuses).nullable().optional(),
  category: z.enum(backlinkCategories),
});

const importSite = z.strictObject({
  owner: z.email(),
  name: text.transform(singleLine).nullable().optional(),
  website_url: httpAddress.nullable().optional(),
  language: text.nullable().optional(),
  country: text.nullable().optional(),
  geographic_scope: text.nullable().optional(),
  industry: text.nullable().optional(),
  articles: z.array(importArticle).default([]),
  backlinks: z.array(importBacklink).default([]),
});

/** The file's shape. A streamed import checks it piece by piece: each member and row as it arrives, each object's missing and unknown members when it ends. */
export const importFileSchema = z.strictObject({ sites: z.array(importSite) });
export type ImportInput = z.input<typeof importFileSchema>;

export interface ImportResult {
  sites: { id: number; article_ids: number[]; backlink_ids: number[] }[];
}

/** A problem in an import file, at a JSON path such as `$.sites[0].articles[3].status`. */
export class ImportError extends Error {
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

const jsonPath = (segments: readonly PropertyKey[]): string =>
  segments.reduce<string>((path, s) => (typeof s === 'number' ? `${path}[${s}]` : `${path}.${String(s)}`), '$');

/** Rows a batch writes: under either database's limit on bound parameters. */
const batchSize = 400;
/**
 * Article text a batch holds at most (bodies may be 5 MB each): on SQLite, storing a batch (its
 * articles and their revisions) holds the write lock that the service's writes wait for.
 */
const batchChars = 2_000_000;

type Article = z.output<typeof importArticle>;
type Backlink = z.output<typeof importBacklink>;
type SiteFields = Omit<z.output<typeof importSite>, 'articles' | 'backlinks'>;
type JsonPath = (string | number)[];

const siteMembers: Record<string, z.ZodType> = importSite.shape;
const rootMembers: Record<string, z.ZodType> = importFileSchema.shape;
const lists = new Set(['articles', 'backlinks']);

/** `value` as `schema` gives it; otherwise an ImportError at the first problem, below `at`. */
function check<T extends z.ZodType>(schema: T, value: unknown, at: JsonPath): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new ImportError(jsonPath([...at, ...issue.path]), issue.message);
}

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

export interface ImportedSite {
  id: number;
  articleIds: IdList;
  backlinkIds: IdList;
}

/** Rows written so far by a running import. */
export interface ImportProgress {
  sites: number;
  articles: number;
  backlinks: number;
}

/** `JSON.stringify` of the import result (`{"sites":[{"id":…,"article_ids":[…],"backlink_ids":[…]}]}`), in pieces of a few thousand ids. */
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
    yield `${index === 0 ? '' : ','}{"id":${site.id},"article_ids":[`;
    yield* ids(site.articleIds);
    yield '],"backlink_ids":[';
    yield* ids(site.backlinkIds);
    yield ']}';
  }
  yield ']}';
}

/** One site of the file while it is read: its members so far, and the rows waiting for the next batch. */
class SiteImport {
  /** The members as given (objects and arrays as `{}`/`[]`), for the site's final shape check. */
  readonly given: Record<string, unknown> = {};
  readonly fields: Partial<SiteFields> = {};
  accountId: number | undefined;
  id: number | undefined;
  /** A member arrived after the row was written: it is updated when the site ends. */
  changedAfterInsert = false;
  articles: Article[] = [];
  articleChars = 0;
  backlinks: Backlink[] = [];
  readonly articleIds = new IdList();
  readonly backlinkIds = new IdList();

  constructor(readonly index: number) {}
}

/** Runs a step of an import's writes in a transaction (`WholeImport`, `CommittedInBatches`). */
interface ImportSteps {
  run<T>(step: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
}

/** PostgreSQL: every step in the import's one transaction (its row locks hold up no other writer). */
class WholeImport implements ImportSteps {
  constructor(private readonly trx: Transaction<Database>) {}

  run<T>(step: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return step(this.trx);
  }
}

/**
 * How long (ms) an import's transaction holds SQLite's write lock before it commits its steps so
 * far, and how long it then leaves the lock free: longer than the service's pauses between its
 * tries for the lock (`lockRetryMaxMs` in db/sqlite-driver.ts), so a waiting write takes it then.
 */
const batchHoldMs = 100;
const batchPauseMs = 25;

/**
 * SQLite: one writer at a time for the whole file, so an import's steps go into a transaction
 * that commits once it has held the write lock `batchHoldMs`; the next begins `batchPauseMs`
 * later. The service's writes wait about one batch, never the whole import. What is committed is
 * undone (`undo`) when a later step fails: the import still writes all or nothing, though the
 * rows appear batch by batch while it runs.
 */
class CommittedInBatches implements ImportSteps {
  private open: { trx: ControlledTransaction<Database>; since: number } | undefined;
  /** Commits the open transaction when no step comes meanwhile (the file arrives slowly). */
  private idle: NodeJS.Timeout | undefined;
  /** That commit, once started: the next step (or `commit`) waits for it, and gets its failure. */
  private committing: Promise<void> = Promise.resolve();

  constructor(private readonly db: Kysely<Database>) {}

  async run<T>(step: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    clearTimeout(this.idle);
    await this.committing;
    this.open ??= { trx: await this.db.startTransaction().execute(), since: performance.now() };
    const result = await step(this.open.trx);
    const held = performance.now() - this.open.since;
    if (held >= batchHoldMs) {
      await this.commit();
      await sleep(batchPauseMs);
    } else {
      this.idle = setTimeout(() => {
        this.committing = this.commit();
        // Handled where it is awaited (the next step, `commit` or `undo`): not a process failure.
        this.committing.catch(() => undefined);
      }, batchHoldMs - held);
    }
    return result;
  }

  async commit(): Promise<void> {
    clearTimeout(this.idle);
    await this.committing;
    const open = this.open;
    this.open = undefined;
    await open?.trx.commit().execute();
  }

  /** Rolls back the open transaction and deletes what earlier ones stored for `siteIds` (sites the import created). */
  async undo(siteIds: readonly number[]): Promise<void> {
    clearTimeout(this.idle);
    await this.committing.catch(() => undefined);
    const open = this.open;
    this.open = undefined;
    await open?.trx.rollback().execute();
    for (let i = 0; i < siteIds.length; i += batchSize) {
      const ids = siteIds.slice(i, i + batchSize);
      await this.db.transaction().execute(async (trx) => {
        const articles = trx.selectFrom('articles').select('id').where('site_id', 'in', ids);
        await trx.deleteFrom('revisions').where('article_id', 'in', articles).execute();
        await trx.deleteFrom('articles').where('site_id', 'in', ids).execute();
        await trx.deleteFrom('backlinks').where('site_id', 'in', ids).execute();
        for (const table of counterTables) await trx.deleteFrom(table).where('site_id', 'in', ids).execute();
        await trx.deleteFrom('sites').where('id', 'in', ids).execute();
      });
    }
  }
}

/** Writes the events of one import file in batches, each a step of `steps`. */
class ImportWriter {
  readonly sites: ImportedSite[] = [];
  /** Every site row written, in the order written (`CommittedInBatches.undo`). */
  readonly created: number[] = [];
  private readonly root: Record<string, unknown> = {};
  private readonly owners = new Map<string, number>();
  private site: SiteImport | undefined;
  private readonly written: ImportProgress = { sites: 0, articles: 0, backlinks: 0 };

  constructor(
    private readonly steps: ImportSteps,
    private readonly clock: Clock,
    private readonly onProgress: ((progress: ImportProgress) => void) | undefined,
  ) {}

  /** Takes one event; a promise when it writes or reads the database (await it before the next). */
  take(event: ImportEvent): Promise<void> | undefined {
    switch (event.kind) {
      case 'value':
        check(event.path.length === 0 ? importFileSchema : importSite, event.value, event.path);
        return undefined;
      case 'field':
        return event.site === null ? this.rootMember(event.key, event.value) : this.siteMember(event.key, event.value);
      case 'siteStart':
        this.site = new SiteImport(event.site);
        return undefined;
      case 'item':
        return this.item(event.list, event.index, event.value);
      case 'siteEnd':
        return this.endSite();
      case 'end':
        check(importFileSchema, this.root, []);
        return undefined;
    }
  }

  private rootMember(key: string, value: unknown): undefined {
    if (Object.hasOwn(this.root, key)) throw new ImportError(jsonPath([key]), 'Given more than once.');
    if (Object.hasOwn(rootMembers, key)) check(rootMembers[key]!, value, [key]);
    this.root[key] = value;
    return undefined;
  }

  private siteMember(key: string, value: unknown): Promise<void> | undefined {
    const site = this.site!;
    const at = ['sites', site.index, key];
    if (Object.hasOwn(site.given, key)) throw new ImportError(jsonPath(at), 'Given more than once.');
    site.given[key] = value;
    if (!Object.hasOwn(siteMembers, key)) return undefined;
    const parsed = check(siteMembers[key]!, value, at);
    if (lists.has(key)) return undefined;
    Object.assign(site.fields, { [key]: parsed });
    if (site.id !== undefined) site.changedAfterInsert = true;
    return key === 'owner' ? this.findOwner(site) : undefined;
  }

  private async findOwner(site: SiteImport): Promise<void> {
    const owner = site.fields.owner!;
    const email = owner.toLowerCase();
    let accountId = this.owners.get(email);
    if (accountId === undefined) {
      const user = await this.steps.run((trx) => trx.selectFrom('users').select('account_id').where('email', '=', email).executeTakeFirst());
      if (!user) throw new ImportError(`$.sites[${site.index}].owner`, `no user with e-mail ${owner}`);
      accountId = user.account_id;
      this.owners.set(email, accountId);
    }
    site.accountId = accountId;
  }

  private item(list: ImportList, index: number, value: unknown): Promise<void> | undefined {
    const site = this.site!;
    const at = ['sites', site.index, list, index];
    if (list === 'articles') {
      const article = check(importArticle, value, at);
      site.articles.push(article);
      site.articleChars += article.body.length;
      if (site.articles.length < batchSize && site.articleChars < batchChars) return undefined;
    } else {
      site.backlinks.push(check(importBacklink, value, at));
      if (site.backlinks.length < batchSize) return undefined;
    }
    // Until the owner is known, rows wait (a file normally names the owner first).
    return site.accountId === undefined ? undefined : this.flush(site);
  }

  private async endSite(): Promise<void> {
    const site = this.site!;
    check(importSite, site.given, ['sites', site.index]);
    await this.flush(site);
    const id = site.id!;
    if (site.changedAfterInsert) {
      await this.steps.run((trx) => trx.updateTable('sites').set(this.siteColumns(site.fields)).where('id', '=', id).execute());
    }
    this.sites.push({ id, articleIds: site.articleIds, backlinkIds: site.backlinkIds });
    this.written.sites += 1;
    this.site = undefined;
    this.onProgress?.({ ...this.written });
  }

  private siteColumns(fields: Partial<SiteFields>) {
    return {
      name: fields.name ?? null,
      website_url: fields.website_url ?? null,
      website_url_lc: fields.website_url?.toLowerCase() ?? null,
      language: fields.language ?? null,
      country: fields.country ?? null,
      geographic_scope: fields.geographic_scope ?? null,
      industry: fields.industry ?? null,
    };
  }

  /** Writes the site row (once) and the rows waiting, `batchSize` at a time. */
  private async flush(site: SiteImport): Promise<void> {
    const accountId = site.accountId!;
    if (site.id === undefined) {
      const row = { account_id: accountId, ...this.siteColumns(site.fields), created_at: toTimestamp(this.clock.now()) };
      site.id = (await this.steps.run((trx) => trx.insertInto('sites').values(row).returning('id').executeTakeFirstOrThrow())).id;
      this.created.push(site.id);
    }
    const [articles, backlinks] = [site.articles, site.backlinks];
    site.articles = [];
    site.articleChars = 0;
    site.backlinks = [];
    for (let i = 0; i < articles.length; i += batchSize) await this.writeArticles(site, articles.slice(i, i + batchSize));
    for (let i = 0; i < backlinks.length; i += batchSize) await this.writeBacklinks(site, backlinks.slice(i, i + batchSize));
    this.onProgress?.({ ...this.written });
  }

  private async writeArticles(site: SiteImport, batch: Article[]): Promise<void> {
    const now = toTimestamp(this.clock.now());
    const rows = batch.map((a) => {
      const body = sanitizeTrusted(a.body);
      return {
        site_id: site.id!,
        account_id: site.accountId!,
        title: a.title ?? null,
        url: a.url ?? null,
        status: a.status,
        published_at: a.published_at ?? null,
        target_keyword: a.target_keyword ?? null,
        word_count: wordCount(body),
        protected_links: protectedLinksColumn(body),
        body_sanitizer: SANITIZER_VERSION,
        featured_image_url: a.featured_image_url ?? null,
        meta_description: a.meta_description ?? null,
        body,
        version: 1,
        created_at: now,
        updated_at: now,
      };
    });
    const ids = await this.steps.run(async (trx) => {
      const articleIds = (await trx.insertInto('articles').values(rows).returning('id').execute()).map((r) => r.id);
      // Every article starts with a revision from the content pipeline.
      const revisionIds = (
        await trx
          .insertInto('revisions')
          .values(
            rows.map((a, i) => ({
              article_id: articleIds[i]!,
              account_id: a.account_id,
              title: a.title,
              body: a.body,
              meta_description: a.meta_description,
              featured_image_url: a.featured_image_url,
              origin: 'rewrite' as const,
              reason: 'Imported from the content pipeline',
              created_at: now,
            })),
          )
          .returning('id')
          .execute()
      ).map((r) => r.id);
      for (const [i, articleId] of articleIds.entries()) {
        await trx.updateTable('articles').set({ current_revision_id: revisionIds[i]! }).where('id', '=', articleId).execute();
      }
      const counts = new DayCountChanges();
      for (const [i, article] of rows.entries()) counts.addArticle(articleIds[i]!, article);
      await counts.saveIn(trx);
      return articleIds;
    });
    for (const id of ids) site.articleIds.add(id);
    this.written.articles += rows.length;
  }

  private async writeBacklinks(site: SiteImport, batch: Backlink[]): Promise<void> {
    const rows = batch.map((b) => ({
      site_id: site.id!,
      account_id: site.accountId!,
      acquired_at: b.acquired_at ?? null,
      source_domain: b.source_domain ?? null,
      source_url: b.source_url ?? null,
      target_url: b.target_url ?? null,
      anchor_text: b.anchor_text ?? null,
      anchor_type: b.anchor_type ?? null,
      status: b.status ?? null,
      category: b.category,
    }));
    const ids = await this.steps.run(async (trx) => {
      const inserted = await trx.insertInto('backlinks').values(rows).returning('id').execute();
      const counts = new DayCountChanges();
      for (const [i, { id }] of inserted.entries()) counts.addBacklink(id, rows[i]!);
      await counts.saveIn(trx);
      return inserted;
    });
    for (const { id } of ids) site.backlinkIds.add(id);
    this.written.backlinks += rows.length;
  }
}

/** Feeds every event of `source` to `writer`, each write awaited before the next event. */
async function writeAll(source: AsyncIterable<Buffer | string> | Iterable<Buffer | string>, writer: ImportWriter): Promise<void> {
  for await (const events of importEvents(source)) {
    for (const event of events) {
      const writing = writer.take(event);
      if (writing) await writing;
    }
  }
}

/** The content pipeline's way in: sites, articles and backlinks, all or nothing. */
export class ImportService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly dialect: DialectName,
  ) {}

  /** Imports an import file already in memory (tests, the demo data set). */
  async run(input: unknown): Promise<ImportResult> {
    const sites = await this.importFrom([String(JSON.stringify(input))]);
    return { sites: sites.map((s) => ({ id: s.id, article_ids: [...s.articleIds], backlink_ids: [...s.backlinkIds] })) };
  }

  /**
   * Imports an import file read from `source` as it arrives: rows are written in batches as the
   * file is read, and the first problem (in file order) undoes them all. PostgreSQL writes them in
   * one transaction; SQLite commits them in batches (`CommittedInBatches`), so the service's writes
   * never wait for the whole import. Memory holds one batch, not the file.
   */
  async importFrom(source: AsyncIterable<Buffer | string> | Iterable<Buffer | string>, onProgress?: (progress: ImportProgress) => void): Promise<ImportedSite[]> {
    try {
      if (this.dialect === 'postgres') {
        return await this.db.transaction().execute(async (trx) => {
          const writer = new ImportWriter(new WholeImport(trx), this.clock, onProgress);
          await writeAll(source, writer);
          return writer.sites;
        });
      }
      const batches = new CommittedInBatches(this.db);
      const writer = new ImportWriter(batches, this.clock, onProgress);
      try {
        await writeAll(source, writer);
        await batches.commit();
      } catch (error) {
        await batches.undo(writer.created).catch((undoError: unknown) => {
          throw new Error(
            `${String((error as Error).message)}; removing what the import had stored failed too (${String((undoError as Error).message)}): sites ${writer.created.join(', ')} remain, delete them or import the file again`,
            { cause: error },
          );
        });
        throw error;
      }
      return writer.sites;
    } catch (error) {
      if (error instanceof NotJsonError) throw new ImportError('$', `not valid JSON (${error.message})`);
      throw error;
    }
  }
}
