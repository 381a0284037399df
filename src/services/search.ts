import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import type { ArticleMatches, ArticleText } from '../core/text-search.js';
import { caseVariants, prepareCaseVariants, trigramVariants } from '../core/text-search.js';
import type { BodyStore } from '../db/body-store.js';
import type { DialectName } from '../db/connect.js';
import { plannedForItsValues } from '../db/pg-statements.js';
import type { Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import type { HtmlPool } from './html-pool.js';
import type { Page, PageRequest } from './pagination.js';
import type { SitesService } from './sites.js';

export interface SearchRequest extends PageRequest {
  q: string;
  match_case: boolean;
}

export interface SearchHit extends ArticleMatches {
  id: number;
  title: string | null;
  url: string | null;
}

/** An article the index found: what orders the results, and its size for batching. */
export interface Candidate {
  id: number;
  published_at: string | null;
  bytes: number;
}

/**
 * Bytes of titles and bodies read and scanned at a time, each batch in a turn of the event loop
 * of its own: one pool task each (the pool's large tasks start at a million characters), and no
 * more text than that in memory at once.
 */
const batchBytes = 1_000_000;

/** `text` as an FTS5 string (a trigram). */
const phrase = (text: string) => `"${text.replaceAll('"', '""')}"`;

/** `text` as a LIKE pattern that finds it anywhere (`\` escapes). */
const anywhere = (text: string) => `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;

/**
 * A PostgreSQL regular expression that matches `text` folded: each character as the class of its
 * case variants (letters), any other character escaped. pg_trgm looks up its trigrams in the
 * index, and the database's own notion of case never enters.
 */
const foldedPattern = (text: string) =>
  [...text]
    .map((char) => {
      const variants = caseVariants(char);
      if (variants.length > 1) return `[${variants.join('')}]`;
      return /[\p{L}\p{N}]/u.test(char) ? char : `\\${char}`;
    })
    .join('');

/** The text the PostgreSQL index holds (migration 020): the same expression, or the index is not used. */
const searchedText = sql`(coalesce(title, '') || chr(10) || body)`;

export type RankedArticle = Candidate & { count: number };

/** What is searched of a row: its title and body, or its body alone. */
const textOf = (row: ArticleText | undefined, bodyOnly: boolean): ArticleText => ({ title: bodyOnly ? null : (row?.title ?? null), body: row?.body ?? '' });

/** Batches of candidates of at most `batchBytes` each (or one larger article alone). */
function batches(candidates: readonly Candidate[]): Candidate[][] {
  const out: Candidate[][] = [];
  let current: Candidate[] = [];
  let bytes = 0;
  for (const candidate of candidates) {
    if (current.length > 0 && bytes + candidate.bytes > batchBytes) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(candidate);
    bytes += candidate.bytes;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** Most matches first, then newest `published_at` (none last), then highest id. */
function byRank(a: RankedArticle, b: RankedArticle): number {
  if (a.count !== b.count) return b.count - a.count;
  if (a.published_at !== b.published_at) {
    if (a.published_at === null) return 1;
    if (b.published_at === null) return -1;
    return a.published_at < b.published_at ? 1 : -1;
  }
  return b.id - a.id;
}

/**
 * `searchArticles`: the database's trigram index narrows a site's articles to those that may hold
 * the query; core (`text-search.ts`, in the HTML pool for large texts) finds the exact matches.
 * Every candidate is counted, so the order and the total are exact; only a page's articles are
 * listed with their matches.
 */
export class SearchService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    private readonly sites: SitesService,
    private readonly html: HtmlPool,
    /** Looks the index up off the event loop where the database would hold it (a large site's lookup is long). */
    private readonly bodies: BodyStore,
  ) {
    prepareCaseVariants();
  }

  async search(actor: Actor, siteId: number, request: SearchRequest): Promise<Page<SearchHit>> {
    await this.sites.visible(actor, siteId);
    const { q: query, match_case: matchCase } = request;
    const ranked = await this.counted(actor, siteId, query, matchCase);
    const start = (request.page - 1) * request.per_page;
    const data = await this.listed(actor, ranked.slice(start, start + request.per_page), query, matchCase);
    return {
      data,
      meta: { page: request.page, per_page: request.per_page, total: ranked.length, last_page: Math.max(1, Math.ceil(ranked.length / request.per_page)) },
    };
  }

  /**
   * Every article of the site that holds `query` (in its body alone with `bodyOnly`), with its
   * match count, in the order of the results. The caller has checked the site.
   */
  async counted(actor: Actor, siteId: number, query: string, matchCase: boolean, bodyOnly = false): Promise<RankedArticle[]> {
    const ranked: RankedArticle[] = [];
    for (const batch of batches(await this.candidates(siteId, query, matchCase))) {
      await nextTurn();
      const rows = await this.texts(batch.map(({ id }) => id));
      const texts = batch.map(({ id }) => textOf(rows.get(id), bodyOnly));
      const counts = await this.html.searchTexts(actor.accountId, { texts, query, matchCase }, false);
      batch.forEach((candidate, i) => {
        if (counts[i]! > 0) ranked.push({ ...candidate, count: counts[i]! });
      });
    }
    return ranked.sort(byRank);
  }

  /** `articles` with their listed matches, in the order given (an article deleted meanwhile is left out). */
  async listed(actor: Actor, articles: readonly RankedArticle[], query: string, matchCase: boolean, bodyOnly = false): Promise<SearchHit[]> {
    const hits: SearchHit[] = [];
    for (const batch of batches(articles)) {
      await nextTurn();
      const rows = await this.texts(batch.map(({ id }) => id));
      const present = batch.filter(({ id }) => rows.has(id));
      const texts = present.map(({ id }) => textOf(rows.get(id), bodyOnly));
      const found = await this.html.searchTexts(actor.accountId, { texts, query, matchCase }, true);
      present.forEach(({ id }, i) => hits.push({ id, title: rows.get(id)!.title, url: rows.get(id)!.url, ...found[i]! }));
    }
    return hits;
  }

  /** The site's articles the index says may hold `query` (a superset of those that do). */
  private async candidates(siteId: number, query: string, matchCase: boolean): Promise<Candidate[]> {
    if (this.dialect === 'postgres') {
      const holds = matchCase ? sql`${searchedText} like ${anywhere(query)}` : sql`${searchedText} ~ ${foldedPattern(query)}`;
      // Planned for the site and the query each time: a plan for any site reads a large site's
      // entries of the site index on every search, where the trigram index finds a few rows.
      const found = await sql<Candidate>`${sql.raw(plannedForItsValues)}select id, published_at, coalesce(octet_length(title), 0) + octet_length(body) as bytes
        from articles where site_id = ${siteId} and ${holds}`.execute(this.db);
      return found.rows.map((row) => ({ ...row, bytes: Number(row.bytes) }));
    }
    // The index holds no positions: an article holding each of the query's trigrams (in one of
    // its case variants, unless the case must match) is a candidate. So is an article written
    // since the index last caught up (db/search-index.ts) whose text holds one variant of the
    // trigram with the fewest, which SQLite checks without handing the text over.
    const trigrams = trigramVariants(query, matchCase);
    const match = trigrams.map((variants) => `(${variants.map(phrase).join(' OR ')})`).join(' AND ');
    const fewest = trigrams.reduce((a, b) => (b.length < a.length ? b : a));
    const holdsOne = sql.join(
      fewest.map((variant) => sql`instr(a.body, ${variant}) > 0 or instr(coalesce(a.title, ''), ${variant}) > 0`),
      sql` or `,
    );
    const candidate = sql`a.id, a.published_at, coalesce(octet_length(a.title), 0) + octet_length(a.body) as bytes`;
    // CROSS JOIN keeps the index the outer loop: SQLite otherwise may walk the site's articles
    // and evaluate the whole MATCH again for each of them.
    const lookup = sql<Candidate>`select ${candidate} from article_search s cross join articles a on a.id = s.rowid
      where article_search match ${match} and a.site_id = ${siteId}
      union select ${candidate} from article_search_pending p cross join articles a on a.id = p.article_id
      where a.site_id = ${siteId} and (${holdsOne})`.compile(this.db);
    return (await this.bodies.readMany(lookup)).rows;
  }

  /** Titles, bodies and URLs of `ids`, by id (an article deleted meanwhile is absent). */
  private async texts(ids: number[]): Promise<Map<number, ArticleText & { url: string | null }>> {
    const rows = await this.db.selectFrom('articles').select(['id', 'title', 'body', 'url']).where('id', 'in', ids).execute();
    return new Map(rows.map((row) => [row.id, row]));
  }
}
