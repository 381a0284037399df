import { type Kysely, type Selectable, sql, type Transaction, type Updateable } from 'kysely';
import { SANITIZER_VERSION, sanitizeTrusted } from '../core/html.js';
import { wordCount } from '../core/protected-anchors.js';
import { keyPrefixSql } from '../db/import-keys.js';
import type { Database } from '../db/schema.js';
import { protectedLinksColumn } from './articles.js';
import type { DayCountChanges } from './counters.js';
import { articleColumns, articleKey, backlinkColumns, backlinkKey, type ImportArticle, type ImportBacklink, keyPrefix } from './import-format.js';
import type { ImportScratch } from './import-scratch.js';

/** What an import does with each row of the file. */
export interface Tally {
  created: number;
  updated: number;
  unchanged: number;
}

export const emptyTally = (): Tally => ({ created: 0, updated: 0, unchanged: 0 });

/** The site a batch of rows belongs to; `id` null when a dry run would create it. */
export interface BatchSite {
  id: number | null;
  accountId: number;
  /** Whether the site was stored before this import (only then are its rows looked up). */
  existed: boolean;
}

/** A batch's outcome: each row's id in file order (null in a dry run's new rows), and whether counters moved. */
export interface BatchOutcome {
  ids: (number | null)[];
  counted: boolean;
}

type Reader = Kysely<Database> | Transaction<Database>;

/** Where a batch runs: `trx` to write in, or none for a dry run (which reads `db` only). */
export interface BatchContext {
  db: Reader;
  /** `counts`: where the batch adds its counter changes, which the import's steps save (`ImportCounts`). */
  write: { trx: Transaction<Database>; now: string; journal: ImportScratch | undefined; counts: DayCountChanges } | undefined;
  tally: Tally;
}

/** The stored rows of `site` whose URL column starts as one of `urls` does, by `key`; the first (lowest id) of each key. */
async function storedByKey<T extends { id: number }>(
  db: Reader,
  table: 'articles' | 'backlinks',
  urlColumn: 'url' | 'source_url',
  siteId: number,
  urls: string[],
  key: (row: T) => string,
): Promise<Map<string, T>> {
  const prefixes = [...new Set(urls.map(keyPrefix))];
  const { rows } = await sql<T>`select * from ${sql.table(table)} where site_id = ${siteId} and ${keyPrefixSql(urlColumn)} in (${sql.join(prefixes)}) order by id`.execute(db);
  const byKey = new Map<string, T>();
  for (const row of rows) if (!byKey.has(key(row))) byKey.set(key(row), row);
  return byKey;
}

/** The members `given` sets to other values than `stored` holds (a member absent from the file leaves its value). */
function changesOf<K extends string, Row extends Record<K, unknown>>(columns: readonly K[], given: { [C in K]?: Row[C] }, stored: Row): Partial<Pick<Row, K>> {
  const changes: Partial<Pick<Row, K>> = {};
  for (const column of columns) if (given[column] !== undefined && given[column] !== stored[column]) changes[column] = given[column];
  return changes;
}

const before = (stored: Record<string, unknown>, changes: object): Record<string, unknown> =>
  Object.fromEntries(Object.keys(changes).map((column) => [column, stored[column]]));

/** Columns a revision holds: a change of one of them is a revision (origin `rewrite`). */
const revised = ['title', 'body', 'meta_description', 'featured_image_url'] as const;

type StoredArticle = Selectable<Database['articles']>;
type StoredBacklink = Selectable<Database['backlinks']>;

/**
 * Creates the batch's new articles (each with a first revision), updates the changed ones (a
 * revision of origin `rewrite` when what a revision holds changed), leaves the rest; in a dry run
 * only counts them. Its counter changes go to `ctx.write.counts`.
 */
export async function upsertArticles(site: BatchSite, batch: ImportArticle[], ctx: BatchContext): Promise<BatchOutcome> {
  const rows = batch.map((article) => ({ article, body: sanitizeTrusted(article.body) }));
  const stored =
    site.existed && site.id !== null
      ? await storedByKey<StoredArticle>(ctx.db, 'articles', 'url', site.id, rows.map(({ article }) => article.url), (row) => row.url!)
      : new Map<string, StoredArticle>();
  const ids: (number | null)[] = [];
  const created: { at: number; row: ReturnType<typeof newArticle> }[] = [];
  let counted = false;
  for (const [at, { article, body }] of rows.entries()) {
    const row = stored.get(articleKey(article));
    if (!row) {
      ctx.tally.created += 1;
      ids.push(null);
      if (ctx.write) created.push({ at, row: newArticle(site, article, body, ctx.write.now) });
      continue;
    }
    ids.push(row.id);
    const changes: Updateable<Database['articles']> = changesOf(articleColumns, article, row);
    if (body !== row.body) Object.assign(changes, { body, word_count: wordCount(body), protected_links: protectedLinksColumn(body), body_sanitizer: SANITIZER_VERSION });
    if (Object.keys(changes).length === 0) {
      ctx.tally.unchanged += 1;
      continue;
    }
    ctx.tally.updated += 1;
    if (!ctx.write) continue;
    const { trx, now, journal, counts } = ctx.write;
    const next = { ...row, ...changes } as StoredArticle;
    Object.assign(changes, { version: row.version + 1, updated_at: now });
    if (revised.some((column) => column in changes)) {
      const revision = await trx
        .insertInto('revisions')
        .values({ ...revisionOf(next, now), reason: 'Rewritten by the content pipeline (import)' })
        .returning('id')
        .executeTakeFirstOrThrow();
      journal?.changed('revisions', revision.id, null, row.site_id);
      changes.current_revision_id = revision.id;
    }
    journal?.changed('articles', row.id, before(row, changes), row.site_id);
    await trx.updateTable('articles').set(changes).where('id', '=', row.id).execute();
    if (next.status !== row.status || next.published_at !== row.published_at) {
      counts.changeArticle(row.id, row, next);
      counted = true;
    }
  }
  if (ctx.write && created.length > 0) {
    const { trx, now, journal, counts } = ctx.write;
    const articleIds = (await trx.insertInto('articles').values(created.map((c) => c.row)).returning('id').execute()).map((r) => r.id);
    // Every article starts with a revision from the content pipeline.
    const revisionIds = (
      await trx
        .insertInto('revisions')
        .values(created.map(({ row }, i) => ({ ...revisionOf({ ...row, id: articleIds[i]! }, now), reason: 'Imported from the content pipeline' })))
        .returning('id')
        .execute()
    ).map((r) => r.id);
    for (const [i, articleId] of articleIds.entries()) {
      await trx.updateTable('articles').set({ current_revision_id: revisionIds[i]! }).where('id', '=', articleId).execute();
      journal?.changed('revisions', revisionIds[i]!, null, site.id!);
      journal?.changed('articles', articleId, null, site.id!);
      counts.addArticle(articleId, created[i]!.row);
      ids[created[i]!.at] = articleId;
    }
  }
  return { ids, counted: counted || created.length > 0 };
}

function newArticle(site: BatchSite, a: ImportArticle, body: string, now: string) {
  return {
    site_id: site.id!,
    account_id: site.accountId,
    title: a.title ?? null,
    url: a.url,
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
}

const revisionOf = (a: Pick<StoredArticle, 'id' | 'account_id' | 'title' | 'body' | 'meta_description' | 'featured_image_url'>, now: string) => ({
  article_id: a.id,
  account_id: a.account_id,
  title: a.title,
  body: a.body,
  meta_description: a.meta_description,
  featured_image_url: a.featured_image_url,
  origin: 'rewrite' as const,
  created_at: now,
});

/** Creates the batch's new backlinks, updates the changed ones (a status `live` → `lost`, say), leaves the rest. */
export async function upsertBacklinks(site: BatchSite, batch: ImportBacklink[], ctx: BatchContext): Promise<BatchOutcome> {
  const stored =
    site.existed && site.id !== null
      ? await storedByKey<StoredBacklink>(ctx.db, 'backlinks', 'source_url', site.id, batch.map((b) => b.source_url), (row) =>
          backlinkKey({ source_url: row.source_url!, target_url: row.target_url ?? '' }),
        )
      : new Map<string, StoredBacklink>();
  const ids: (number | null)[] = [];
  const created: { at: number; row: ReturnType<typeof newBacklink> }[] = [];
  let counted = false;
  for (const [at, backlink] of batch.entries()) {
    const row = stored.get(backlinkKey(backlink));
    if (!row) {
      ctx.tally.created += 1;
      ids.push(null);
      if (ctx.write) created.push({ at, row: newBacklink(site, backlink) });
      continue;
    }
    ids.push(row.id);
    const changes = changesOf(backlinkColumns, backlink, row);
    if (Object.keys(changes).length === 0) {
      ctx.tally.unchanged += 1;
      continue;
    }
    ctx.tally.updated += 1;
    if (!ctx.write) continue;
    ctx.write.journal?.changed('backlinks', row.id, before(row, changes), row.site_id);
    await ctx.write.trx.updateTable('backlinks').set(changes).where('id', '=', row.id).execute();
    const next = { ...row, ...changes } as StoredBacklink;
    if (next.acquired_at !== row.acquired_at || next.category !== row.category) {
      ctx.write.counts.changeBacklink(row.id, row, next);
      counted = true;
    }
  }
  if (ctx.write && created.length > 0) {
    const inserted = await ctx.write.trx.insertInto('backlinks').values(created.map((c) => c.row)).returning('id').execute();
    for (const [i, { id }] of inserted.entries()) {
      ctx.write.journal?.changed('backlinks', id, null, site.id!);
      ctx.write.counts.addBacklink(id, created[i]!.row);
      ids[created[i]!.at] = id;
    }
  }
  return { ids, counted: counted || created.length > 0 };
}

const newBacklink = (site: BatchSite, b: ImportBacklink) => ({
  site_id: site.id!,
  account_id: site.accountId,
  acquired_at: b.acquired_at ?? null,
  source_domain: b.source_domain ?? null,
  source_url: b.source_url,
  target_url: b.target_url,
  anchor_text: b.anchor_text ?? null,
  anchor_type: b.anchor_type ?? null,
  status: b.status ?? null,
  category: b.category,
});
