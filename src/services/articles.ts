import type { Kysely } from 'kysely';
import { notFound } from '../core/errors.js';
import { type ChangesSince, KeptRows } from '../core/kept-rows.js';
import { protectedLinksOf } from '../core/protected-anchors.js';
import type { ProtectedLink } from '../core/errors.js';
import type { TextPieces, Utf8Text } from '../core/text-parts.js';
import type { ArticleStatus } from '../core/values.js';
import { articleColumnsButBody, type ArticleWithStoredBody, type BodyForm, type BodyStore } from '../db/body-store.js';
import type { ArticleRow, Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import type { CountersService } from './counters.js';
import { type DayFilters, type Page, type PageRequest, checkedDayFilters, paginateByDay, SHORT_SKIP, TopPages } from './pagination.js';
import { readsEveryAccount, type SitesService } from './sites.js';

export interface Article {
  id: number;
  site_id: number;
  title: string | null;
  url: string | null;
  status: ArticleStatus | null;
  published_at: string | null;
  target_keyword: string | null;
  word_count: number | null;
  featured_image_url: string | null;
}

/** An article with its body: a string, or where a write kept it so, a `SharedText` (`Body`). */
export interface ArticleWithBody<Body = string> extends Article {
  meta_description: string | null;
  body: Body;
  protected_links: ProtectedLink[];
}

export interface ArticleFilters extends PageRequest, DayFilters {
  status?: ArticleStatus;
}

const listColumns = [
  'id',
  'site_id',
  'title',
  'url',
  'status',
  'published_at',
  'target_keyword',
  'word_count',
  'featured_image_url',
] as const;

export function toArticle(row: Pick<ArticleRow, (typeof listColumns)[number]>): Article {
  return {
    id: row.id,
    site_id: row.site_id,
    title: row.title,
    url: row.url,
    status: row.status,
    published_at: row.published_at,
    target_keyword: row.target_keyword,
    word_count: row.word_count,
    featured_image_url: row.featured_image_url,
  };
}

/** The protected links of a stored body: as written with it, or parsed from a row written without them. */
const storedProtectedLinks = (row: { body: string | TextPieces; protected_links: string | null }): ProtectedLink[] =>
  row.protected_links === null
    ? protectedLinksOf(typeof row.body === 'string' ? row.body : row.body.pieces.join(''))
    : (JSON.parse(row.protected_links) as ProtectedLink[]);

/** The `protected_links` column of a body: stored with every body written (import, every article write). */
export const protectedLinksColumn = (body: string): string => JSON.stringify(protectedLinksOf(body));

export function toArticleWithBody(row: ArticleRow): ArticleWithBody {
  return withBody(row, row.body, storedProtectedLinks(row));
}

/**
 * The article of `row` with `body` and its protected links as given. Assigned to the article, not
 * spread into a literal: on Node 20's V8, a literal that spreads an object and then adds fields
 * (`{ ...toArticle(row), body }`) made a new hidden class each time, which cost every GET and
 * left the old generation maps to collect.
 */
export const withBody = <Body>(row: Article & Pick<ArticleRow, 'meta_description'>, body: Body, protectedLinks: ProtectedLink[]): ArticleWithBody<Body> =>
  Object.assign(toArticle(row), { meta_description: row.meta_description, body, protected_links: protectedLinks });

/** A strong validator of an article's stored state, for ETag and If-Match. */
export const articleETag = (row: Pick<ArticleRow, 'id' | 'version'>): string => `"a${row.id}-v${row.version}"`;

/** An answer of `getAnswer` or `getAsUtf8`, with the account the article is on; kept with a body of a string. */
interface KeptAnswer<Body = string | TextPieces | Uint8Array | Utf8Text> {
  article: ArticleWithBody<Body>;
  etag: string;
  accountId: number;
}

/**
 * The answers `getAnswer` keeps: bodies of up to 64 Ki characters, 2 Mi characters in all (each
 * answer counts its body and 512 for the rest), at most 10,000 answers.
 */
const keptAnswersMax = 10_000;
const keptAnswersRoom = {
  size: ({ article }: KeptAnswer) => (typeof article.body === 'string' ? article.body.length + 512 : Infinity),
  budget: 2 * 1024 * 1024,
  largest: 64 * 1024,
};

export class ArticlesService {
  private readonly answers: KeptRows<number, KeptAnswer>;
  private readonly topPages;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly sites: SitesService,
    private readonly counters: CountersService,
    private readonly bodies: BodyStore,
    /** The articles that may have changed elsewhere (`Db.watchArticleChanges`). */
    changedElsewhere: () => ChangesSince<number>,
    /** Rows a page skips by index before it seeks by the day counters (tests lower it to exercise the seek). */
    private readonly shortSkip = SHORT_SKIP,
  ) {
    this.topPages = new TopPages(db);
    this.answers = new KeptRows(changedElsewhere, keptAnswersMax, keptAnswersRoom);
  }

  /** Forgets the kept answer of an article this process changed, or every one (told once the change committed, or failed). */
  changed(articleId?: number): void {
    this.answers.forget(articleId);
  }

  async list(actor: Actor, siteId: number, filters: ArticleFilters): Promise<Page<Article>> {
    await this.sites.visible(actor, siteId);
    const bounds = checkedDayFilters(filters);
    const counts = this.counters.list('articles', siteId, bounds, filters.status);
    const { status } = filters;
    const build = () => {
      const query = this.db.selectFrom('articles').select(listColumns).where('site_id', '=', siteId);
      return status === undefined ? query : query.where('status', '=', status);
    };
    const list = { build, shape: `status:${status !== undefined}`, parameters: status === undefined ? [siteId] : [siteId, status], top: this.topPages };
    return paginateByDay(list, 'published_at', bounds, counts, filters, toArticle, this.shortSkip);
  }

  async get(actor: Actor, articleId: number): Promise<{ article: ArticleWithBody; etag: string }> {
    const row = await this.visible(actor, articleId);
    return { article: toArticleWithBody(row), etag: articleETag(row) };
  }

  /**
   * `get` for a pool thread (an assistant's window of the body: `HtmlPool.bodyWindow`): a large
   * body as its UTF-8 bytes (SQLite, read by the off-loop connection) or in UTF-8 parts
   * (PostgreSQL), never made one string on the event loop, where decoding it and encoding it
   * again for the thread cost more than the window. A row written without its protected links
   * (before they were stored) is read as `get` reads it. A small body's answer is the one
   * `getAnswer` keeps, and is kept: a tool call reads no more than REST does.
   */
  async getAsUtf8(actor: Actor, articleId: number): Promise<{ article: ArticleWithBody<string | Uint8Array | Utf8Text>; etag: string }> {
    const answer = await this.keptAnswer(actor, articleId, () => this.utf8AnswerOf(actor, articleId));
    // A kept answer's body is a string (`keptAnswersRoom`), and this read gives no pieces.
    return answer as KeptAnswer<string | Uint8Array | Utf8Text>;
  }

  private async utf8AnswerOf(actor: Actor, articleId: number): Promise<KeptAnswer<string | Uint8Array | Utf8Text>> {
    const row = await this.visible(actor, articleId, 'utf8');
    if (row.protected_links === null) return { ...(await this.get(actor, articleId)), accountId: row.account_id };
    return {
      article: withBody(row, row.body, JSON.parse(row.protected_links) as ProtectedLink[]),
      etag: articleETag(row),
      accountId: row.account_id,
    };
  }

  /** The stored article but its body, if the actor may read it (pages that show only its title). */
  async visibleWithoutBody(actor: Actor, articleId: number): Promise<Omit<ArticleRow, 'body'>> {
    let query = this.db.selectFrom('articles').select(articleColumnsButBody).where('id', '=', articleId);
    if (!readsEveryAccount(actor)) query = query.where('account_id', '=', actor.accountId);
    const row = await query.executeTakeFirst();
    if (!row) throw notFound('article');
    return row;
  }

  /**
   * `get` for a REST answer, which escapes the body a part per turn of the event loop: a large
   * body PostgreSQL read in pieces stays in them (`TextPieces`): joining a large body would hold
   * the loop for one more turn.
   *
   * The answers of articles with bodies up to 64 Ki characters are kept until that article changes
   * (here: `changed`; on another node or by the CLI: `Db.watchArticleChanges`), as API keys and
   * sites are: a read of a kept article reads nothing. Under the bench's load, reading and mapping the row
   * cost the event loop more than the key's lookup and limit together.
   */
  async getAnswer(actor: Actor, articleId: number): Promise<{ article: ArticleWithBody<string | TextPieces>; etag: string }> {
    const answer = await this.keptAnswer(actor, articleId, () => this.answerOf(actor, articleId));
    // A kept answer's body is a string (`keptAnswersRoom`), and this read gives no bytes.
    return answer as KeptAnswer<string | TextPieces>;
  }

  /** The kept answer of the article, else the one `read` finds (kept if its body is small), if the actor may read it. */
  private async keptAnswer(actor: Actor, articleId: number, read: () => Promise<KeptAnswer>): Promise<KeptAnswer> {
    const answer = await this.answers.get(articleId, read);
    // Kept by whoever read it first: the ownership check holds for every read.
    if (!answer || !(readsEveryAccount(actor) || answer.accountId === actor.accountId)) throw notFound('article');
    return answer;
  }

  /**
   * The answer of an article the actor may read, else "not found": read within the actor's
   * account, so another account's large body is never read to answer that it is not found.
   */
  private async answerOf(actor: Actor, articleId: number): Promise<KeptAnswer> {
    const row = await this.visible(actor, articleId, 'pieces');
    return { article: withBody(row, row.body, storedProtectedLinks(row)), etag: articleETag(row), accountId: row.account_id };
  }

  /**
   * The stored article with its body in `form` (a string unless given) if the actor may read it;
   * another account's is "not found", and its body is never read.
   */
  async visible(actor: Actor, articleId: number): Promise<ArticleRow>;
  async visible<Form extends BodyForm>(actor: Actor, articleId: number, form: Form): Promise<ArticleWithStoredBody<Form>>;
  async visible(actor: Actor, articleId: number, form: BodyForm = 'text'): Promise<ArticleWithStoredBody<BodyForm>> {
    const row = await this.bodies.article(articleId, readsEveryAccount(actor) ? undefined : actor.accountId, form);
    if (!row) throw notFound('article');
    return row;
  }
}
