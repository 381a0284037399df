import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import { sanitizeTrusted, wordCount } from '../core/html.js';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import type { Database } from '../db/schema.js';
import { protectedLinksColumn } from './articles.js';
import { DayCountChanges } from './counters.js';
import { anchorTypes, articleStatuses, backlinkCategories, backlinkStatuses } from '../core/values.js';

const timestamp = z.iso.datetime({ offset: false, precision: 0 });
// PostgreSQL text cannot hold U+0000: refuse it with its path rather than fail on save.
const noNul = (value: string) => !value.includes('\u0000');
const text = z.string().max(100_000).refine(noNul, 'Must not contain the character U+0000.');
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
  title: text.refine((v) => [...v].length <= 255, 'At most 255 characters.').nullable().optional(),
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
  name: text.nullable().optional(),
  website_url: httpAddress.nullable().optional(),
  language: text.nullable().optional(),
  country: text.nullable().optional(),
  geographic_scope: text.nullable().optional(),
  industry: text.nullable().optional(),
  articles: z.array(importArticle).default([]),
  backlinks: z.array(importBacklink).default([]),
});

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

const batchSize = 400;

async function insertInBatches<T>(items: T[], insert: (batch: T[]) => Promise<number[]>): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < items.length; i += batchSize) ids.push(...(await insert(items.slice(i, i + batchSize))));
  return ids;
}

/** The content pipeline's way in: sites, articles and backlinks, all or nothing. */
export class ImportService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async run(input: unknown): Promise<ImportResult> {
    const parsed = importFileSchema.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ImportError(jsonPath(issue.path), issue.message);
    }
    const owners = new Map<string, number>();
    for (const [index, site] of parsed.data.sites.entries()) {
      const email = site.owner.toLowerCase();
      if (owners.has(email)) continue;
      const user = await this.db.selectFrom('users').select('account_id').where('email', '=', email).executeTakeFirst();
      if (!user) throw new ImportError(`$.sites[${index}].owner`, `no user with e-mail ${site.owner}`);
      owners.set(email, user.account_id);
    }
    return this.db.transaction().execute(async (trx) => {
      const result: ImportResult = { sites: [] };
      for (const site of parsed.data.sites) {
        result.sites.push(await this.importSite(trx, site, owners.get(site.owner.toLowerCase())!));
      }
      return result;
    });
  }

  private async importSite(
    trx: Transaction<Database>,
    site: z.output<typeof importSite>,
    accountId: number,
  ): Promise<ImportResult['sites'][number]> {
    const now = toTimestamp(this.clock.now());
    const { id: siteId } = await trx
      .insertInto('sites')
      .values({
        account_id: accountId,
        name: site.name ?? null,
        website_url: site.website_url ?? null,
        website_url_lc: site.website_url?.toLowerCase() ?? null,
        language: site.language ?? null,
        country: site.country ?? null,
        geographic_scope: site.geographic_scope ?? null,
        industry: site.industry ?? null,
        created_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();

    const articles = site.articles.map((a) => {
      const body = sanitizeTrusted(a.body);
      return {
        site_id: siteId,
        account_id: accountId,
        title: a.title ?? null,
        url: a.url ?? null,
        status: a.status,
        published_at: a.published_at ?? null,
        target_keyword: a.target_keyword ?? null,
        word_count: wordCount(body),
        protected_links: protectedLinksColumn(body),
        featured_image_url: a.featured_image_url ?? null,
        meta_description: a.meta_description ?? null,
        body,
        version: 1,
        created_at: now,
        updated_at: now,
      };
    });
    const articleIds = await insertInBatches(articles, async (batch) =>
      (await trx.insertInto('articles').values(batch).returning('id').execute()).map((r) => r.id),
    );
    // Every article starts with a revision from the content pipeline.
    const revisionIds = await insertInBatches(
      articles.map((a, i) => ({ a, id: articleIds[i]! })),
      async (batch) =>
        (
          await trx
            .insertInto('revisions')
            .values(
              batch.map(({ a, id }) => ({
                article_id: id,
                account_id: accountId,
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
        ).map((r) => r.id),
    );
    for (const [i, articleId] of articleIds.entries()) {
      await trx.updateTable('articles').set({ current_revision_id: revisionIds[i]! }).where('id', '=', articleId).execute();
    }

    const backlinkIds = await insertInBatches(site.backlinks, async (batch) =>
      (
        await trx
          .insertInto('backlinks')
          .values(
            batch.map((b) => ({
              site_id: siteId,
              account_id: accountId,
              acquired_at: b.acquired_at ?? null,
              source_domain: b.source_domain ?? null,
              source_url: b.source_url ?? null,
              target_url: b.target_url ?? null,
              anchor_text: b.anchor_text ?? null,
              anchor_type: b.anchor_type ?? null,
              status: b.status ?? null,
              category: b.category,
            })),
          )
          .returning('id')
          .execute()
      ).map((r) => r.id),
    );
    // The day counters change in this same transaction: totals and stats never see half an import.
    const counts = new DayCountChanges();
    for (const article of articles) counts.addArticle(article);
    for (const b of site.backlinks) counts.addBacklink({ site_id: siteId, acquired_at: b.acquired_at ?? null, category: b.category });
    await counts.saveIn(trx);
    return { id: siteId, article_ids: articleIds, backlink_ids: backlinkIds };
  }
}
