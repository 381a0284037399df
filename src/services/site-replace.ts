import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { AppError, type ProtectedLink, validationFailed } from '../core/errors.js';
import { jsonSha256 } from '../core/secrets.js';
import type { FoundMatch } from '../core/text-search.js';
import type { Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import type { PlannedEdit } from './article-states.js';
import type { ArticleWritesService } from './article-writes.js';
import { articleETag } from './articles.js';
import type { IdempotencyStore } from './idempotency.js';
import type { LimitState } from './limits.js';
import type { SearchService } from './search.js';
import type { SitesService } from './sites.js';

/** Articles one request may change. */
export const MAX_REPLACE_ARTICLES = 500;
/** Matches the dry run shows per article. */
const previewMatches = 3;

export interface SiteReplaceInput {
  find: string;
  replace: string;
  match_case: boolean;
  article_ids?: number[];
  reason?: string;
}

export interface ReplacedArticle {
  article_id: number;
  occurrences: number;
  /** The new ETag (not in a dry run). */
  etag?: string;
  /** The dry run: the first occurrences with their context. */
  matches?: FoundMatch[];
}

export interface SiteReplaceResult {
  data: ReplacedArticle[];
  meta: { articles: number; occurrences: number; dry_run?: true };
  allowance?: LimitState;
}

export interface SiteReplaceOptions {
  dryRun?: boolean;
  idempotencyKey?: string;
  /** Characters of JSON the answer may take (MCP): a dry run's previews are cut to fit; a larger answer is refused before anything is saved. */
  answerChars?: number;
}

const jsonLength = (value: unknown): number => JSON.stringify(value).length;

/** `result` within `chars` characters of JSON: the dry run's previews cut from the last article on; else refused, naming how to narrow. */
function fitted(result: SiteReplaceResult, chars: number | undefined): SiteReplaceResult {
  if (chars === undefined) return result;
  for (let i = result.data.length - 1; i >= 0 && jsonLength(result) > chars; i--) delete result.data[i]!.matches;
  if (jsonLength(result) <= chars) return result;
  const fit = Math.max(1, Math.floor((result.data.length * chars) / jsonLength(result)) - 1);
  throw validationFailed({ article_ids: [`The answer for ${result.data.length} articles is larger than one result may hold (${chars} characters of JSON); send article_ids (from search_articles) with at most ${fit} at a time.`] });
}

/**
 * `replaceInSite`: every occurrence of a text in the bodies of a site's articles replaced, all or
 * nothing. The articles are found as a search finds them (`SearchService`), each next body is
 * computed by the article write path (`ArticleWritesService.plan`: sanitiser, protected-link
 * guard, the HTML pool for large bodies), and every change is stored in one transaction
 * (`storeAll`): a revision and an edit of the allowance per changed article.
 */
export class SiteReplaceService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly sites: SitesService,
    private readonly search: SearchService,
    private readonly writes: ArticleWritesService,
    private readonly idempotency: IdempotencyStore,
  ) {}

  async replace(actor: Actor, siteId: number, input: SiteReplaceInput, options: SiteReplaceOptions = {}): Promise<SiteReplaceResult> {
    const site = await this.sites.visible(actor, siteId);
    if (site.account_id !== actor.accountId) throw new AppError('forbidden', 'Admin keys may change only their own account’s articles.');
    const key = options.dryRun ? undefined : options.idempotencyKey;
    if (key === undefined) return this.apply(actor, siteId, input, options);
    const stored = await this.idempotency.claim<SiteReplaceResult>(actor.accountId, key, await jsonSha256(['replaceInSite', siteId, input]));
    if (stored) {
      if (stored.ok) return stored.result;
      throw AppError.fromBody(stored.error);
    }
    try {
      const result = await this.apply(actor, siteId, input, { ...options, idempotencyKey: key });
      if (result.data.length === 0) await this.idempotency.complete(this.db, actor.accountId, key, { ok: true, result });
      return result;
    } catch (error) {
      // As on PATCH: a refusal is the answer to replay; a limit or a failure may succeed on retry.
      if (error instanceof AppError && error.status < 500 && error.status !== 429) {
        await this.idempotency.complete(this.db, actor.accountId, key, { ok: false, error: error.toBody(), status: error.status });
      } else {
        await this.idempotency.release(actor.accountId, key);
      }
      throw error;
    }
  }

  private async apply(actor: Actor, siteId: number, input: SiteReplaceInput, { dryRun, idempotencyKey: key, answerChars }: SiteReplaceOptions): Promise<SiteReplaceResult> {
    const { find, match_case: matchCase } = input;
    for (;;) {
      const holding = await this.articlesHolding(actor, siteId, input);
      const occurrences = holding.reduce((sum, { count }) => sum + count, 0);
      if (dryRun) {
        const listed = await this.search.listed(actor, holding, find, matchCase, true);
        await this.planned(actor, holding.map(({ id }) => id), input);
        const data = listed.map(({ id, count, matches }) => ({ article_id: id, occurrences: count, matches: matches.slice(0, previewMatches) }));
        return fitted({ data, meta: { articles: data.length, occurrences, dry_run: true } }, answerChars);
      }
      const edits = await this.planned(actor, holding.map(({ id }) => id), input);
      const counts = new Map(holding.map(({ id, count }) => [id, count]));
      if (answerChars !== undefined) {
        // The answer must fit before anything is stored: a write must never be answered as an error.
        const data = edits.map(({ row }) => ({ article_id: row.id, occurrences: counts.get(row.id) ?? 0, etag: articleETag({ id: row.id, version: row.version + 1 }) }));
        fitted({ data, meta: { articles: data.length, occurrences } }, answerChars);
      }
      const stored = await this.writes.storeAll(
        actor,
        edits,
        input.reason ?? null,
        (saved, allowance): SiteReplaceResult => {
          const data = saved.map(({ articleId, etag }) => ({ article_id: articleId, occurrences: counts.get(articleId) ?? 0, etag }));
          return { data, meta: { articles: data.length, occurrences: data.reduce((sum, item) => sum + item.occurrences, 0) }, allowance };
        },
        key,
      );
      if (stored !== undefined) return stored;
      // An article changed meanwhile: nothing was stored; find and plan again.
    }
  }

  /** The articles whose bodies hold `find` (those of `article_ids` only, when given), at most 500. */
  private async articlesHolding(actor: Actor, siteId: number, input: SiteReplaceInput) {
    let holding = await this.search.counted(actor, siteId, input.find, input.match_case, true);
    if (input.article_ids !== undefined) {
      const asked = new Set(input.article_ids);
      const ofSite = await this.db.selectFrom('articles').select('id').where('site_id', '=', siteId).where('id', 'in', [...asked]).execute();
      const strangers = [...asked].filter((id) => !ofSite.some((row) => row.id === id));
      if (strangers.length > 0) throw validationFailed({ article_ids: [`Not articles of this site: ${strangers.join(', ')}.`] });
      holding = holding.filter(({ id }) => asked.has(id));
    }
    if (holding.length > MAX_REPLACE_ARTICLES) {
      throw validationFailed({
        article_ids: [
          `${holding.length} articles hold this text; one request changes at most ${MAX_REPLACE_ARTICLES}. Send article_ids (from search_articles) to replace in up to ${MAX_REPLACE_ARTICLES} at a time.`,
        ],
      });
    }
    return holding;
  }

  /**
   * Each article's next body, by the write path; every article whose edit would touch a
   * protected link is named in one refusal, so that nothing is saved and all of them are known.
   */
  private async planned(actor: Actor, ids: number[], { find, replace, match_case: matchCase }: SiteReplaceInput): Promise<PlannedEdit[]> {
    const edits: PlannedEdit[] = [];
    const refused: { article_id: number; protected_links: ProtectedLink[] }[] = [];
    for (const id of ids) {
      // A turn of the event loop between articles: hundreds of small edits, each computed inline, must not hold it.
      await nextTurn();
      try {
        edits.push(await this.writes.plan(actor, id, { everywhere: { find, replace, matchCase } }));
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== 'protected_links_violation') throw error;
        refused.push({ article_id: id, protected_links: error.details.protected_links ?? [] });
      }
    }
    if (refused.length > 0) {
      throw new AppError(
        'protected_links_violation',
        `The replacement would remove or rewrite links the service inserted in ${refused.length} article(s) (listed in articles); nothing was saved. Narrow find, or leave those articles out with article_ids.`,
        { protected_links: refused.flatMap(({ protected_links }) => protected_links), articles: refused },
      );
    }
    return edits;
  }
}
