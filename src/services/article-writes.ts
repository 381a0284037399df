import { type Kysely, type Transaction } from 'kysely';
import { AppError, notFound } from '../core/errors.js';
import {
  applyReplacements,
  type Replacement,
  protectedAnchorsOf,
  sanitizeBody,
  violatedProtectedLinks,
  wordCount,
} from '../core/html.js';
import { sha256 } from '../core/secrets.js';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import type { DialectName } from '../db/connect.js';
import type { ArticleRow, Database } from '../db/schema.js';
import type { ActivityLog } from './activity.js';
import type { Actor } from './actor.js';
import { articleETag, type ArticleWithBody, protectedLinksColumn, toArticleWithBody } from './articles.js';
import type { EditAllowance } from './edit-allowance.js';
import type { IdempotencyStore, StoredOutcome } from './idempotency.js';
import type { LimitState } from './limits.js';
import type { ArticleState, RevisionsService } from './revisions.js';
import { readsEveryAccount } from './sites.js';

export interface WriteOptions {
  dryRun?: boolean;
  ifMatch?: string;
  idempotencyKey?: string;
  /**
   * Stores what the change refers to (an uploaded image), last inside the write's transaction:
   * after every check, so a refused write stores nothing, and with the database store rolled
   * back with it.
   */
  storeMedia?: (trx: Transaction<Database>) => Promise<void>;
}

export interface WriteResult {
  article: ArticleWithBody;
  etag: string;
  /** What the sanitiser removed from the submitted body (meta.sanitized). */
  sanitized: string[];
  changed: boolean;
  /** The daily edit allowance after this write (API and MCP writes only). */
  allowance?: LimitState;
}

export interface ReplaceInput {
  body: string;
  title?: string;
  /** The UI editor saves it with the body; PUT over the API does not take it. */
  meta_description?: string;
  reason?: string;
}

export interface EditInput {
  title?: string;
  meta_description?: string;
  replacements?: Replacement[];
  reason?: string;
}

/** The next state of an article, computed from the locked current row. */
type NextState = ArticleState & { sanitized: string[] };

/** `If-Match` holds when it names the current ETag or is `*`; a weak tag never matches (RFC 9110). */
function ifMatchHolds(header: string, etag: string): boolean {
  return header
    .split(',')
    .map((tag) => tag.trim())
    .some((tag) => tag === '*' || tag === etag);
}

const stateOf = (row: ArticleRow): ArticleState => ({
  title: row.title,
  body: row.body,
  meta_description: row.meta_description,
  featured_image_url: row.featured_image_url,
});

const sameState = (a: ArticleState, b: ArticleState) =>
  a.title === b.title && a.body === b.body && a.meta_description === b.meta_description && a.featured_image_url === b.featured_image_url;

/** A client's body through the one allowlist, keeping only markers it was entitled to. */
function sanitizedAgainst(current: ArticleRow, body: string): { body: string; sanitized: string[] } {
  const clean = sanitizeBody(body, { protectedBefore: protectedAnchorsOf(current.body) });
  return { body: clean.html, sanitized: clean.removed };
}

/** The next state with a new body and, where given, a new title and meta description. */
const withTexts = (
  row: ArticleRow,
  texts: { title?: string; meta_description?: string },
  content: { body: string; sanitized: string[] },
): NextState => ({
  ...stateOf(row),
  title: texts.title ?? row.title,
  meta_description: texts.meta_description ?? row.meta_description,
  ...content,
});

/**
 * Every change to an article goes through `write`: lock the row, check access and If-Match,
 * compute the new state, guard the protected links, then — in one transaction — take one unit of
 * the edit allowance, store the article, its revision, its activity record and the idempotent
 * response. A refused write changes nothing.
 */
export class ArticleWritesService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    private readonly clock: Clock,
    private readonly revisions: RevisionsService,
    private readonly activity: ActivityLog,
    private readonly allowance: EditAllowance,
    private readonly idempotency: IdempotencyStore,
  ) {}

  /** PUT: a whole new body (and optionally title; the UI editor adds the meta description). */
  replace(actor: Actor, articleId: number, input: ReplaceInput, options: WriteOptions = {}): Promise<WriteResult> {
    return this.write(actor, articleId, 'updateArticle', input, options, input.reason, (row) =>
      withTexts(row, input, sanitizedAgainst(row, input.body)),
    );
  }

  /** PATCH: title, meta description and exact replacements in the body as GET returns it. */
  edit(actor: Actor, articleId: number, input: EditInput, options: WriteOptions = {}): Promise<WriteResult> {
    return this.write(actor, articleId, 'editArticle', input, options, input.reason, (row) => {
      if (!input.replacements || input.replacements.length === 0) return withTexts(row, input, { body: row.body, sanitized: [] });
      const replaced = applyReplacements(row.body, input.replacements);
      if (!replaced.ok) {
        throw new AppError('replacement_failed', 'Some replacements did not match as required; nothing was saved.', {
          failures: replaced.failures,
        });
      }
      return withTexts(row, input, sanitizedAgainst(row, replaced.body));
    });
  }

  /** A new featured image URL (an uploaded image is stored by the media store first). */
  replaceFeaturedImage(
    actor: Actor,
    articleId: number,
    input: { url: string; reason?: string; fingerprint: string },
    options: WriteOptions = {},
  ): Promise<WriteResult> {
    return this.write(actor, articleId, 'replaceFeaturedImage', input.fingerprint, options, input.reason, (row) => ({
      ...stateOf(row),
      featured_image_url: input.url,
      sanitized: [],
    }));
  }

  /** Restores an earlier revision from the UI, as a new revision of origin editor. */
  restore(actor: Actor, articleId: number, revisionId: number): Promise<WriteResult> {
    return this.write(actor, articleId, 'restoreRevision', revisionId, {}, `Restored revision ${revisionId}`, async (row, trx) => {
      const revision = await trx
        .selectFrom('revisions')
        .selectAll()
        .where('id', '=', revisionId)
        .where('article_id', '=', row.id)
        .executeTakeFirst();
      if (!revision) throw new AppError('not_found', 'No such revision of this article.');
      const { body, sanitized } = sanitizedAgainst(row, revision.body);
      return {
        title: revision.title,
        body,
        meta_description: revision.meta_description,
        featured_image_url: revision.featured_image_url,
        sanitized,
      };
    });
  }

  private async write(
    actor: Actor,
    articleId: number,
    operation: string,
    request: unknown,
    options: WriteOptions,
    reason: string | undefined,
    next: (row: ArticleRow, trx: Transaction<Database>) => NextState | Promise<NextState>,
  ): Promise<WriteResult> {
    const key = options.dryRun ? undefined : options.idempotencyKey;
    if (key === undefined) return this.apply(actor, articleId, options, reason ?? null, next);

    const fingerprint = sha256(JSON.stringify([operation, articleId, request]));
    const stored = await this.idempotency.claim<WriteResult>(actor.accountId, key, fingerprint);
    if (stored) {
      if (stored.ok) return stored.result;
      throw AppError.fromBody(stored.error);
    }
    try {
      const result = await this.apply(actor, articleId, options, reason ?? null, next, key);
      // A no-op stored nothing in its transaction: store its answer too, or the key stays pending.
      if (!result.changed) await this.idempotency.complete(this.db, actor.accountId, key, { ok: true, result });
      return result;
    } catch (error) {
      // A refusal is the answer to replay; a limit or a failure on our side may succeed on retry.
      if (error instanceof AppError && error.status < 500 && error.status !== 429) {
        const outcome: StoredOutcome<WriteResult> = { ok: false, error: error.toBody(), status: error.status };
        await this.idempotency.complete(this.db, actor.accountId, key, outcome);
      } else {
        await this.idempotency.release(actor.accountId, key);
      }
      throw error;
    }
  }

  private apply(
    actor: Actor,
    articleId: number,
    options: WriteOptions,
    reason: string | null,
    next: (row: ArticleRow, trx: Transaction<Database>) => NextState | Promise<NextState>,
    idempotencyKey?: string,
  ): Promise<WriteResult> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.lockedForWrite(trx, actor, articleId);
      const etag = articleETag(row);
      if (options.ifMatch !== undefined && !ifMatchHolds(options.ifMatch, etag)) {
        throw new AppError('precondition_failed', 'The article changed since you read it (If-Match does not match its ETag); nothing was saved.');
      }
      const { sanitized, ...state } = await next(row, trx);
      const violated = violatedProtectedLinks(row.body, state.body);
      if (violated.length > 0) {
        throw new AppError(
          'protected_links_violation',
          'The edit removes or rewrites links the service inserted; keep each of them exactly as it is. Nothing was saved.',
          { protected_links: violated },
        );
      }
      const preview = { ...row, ...state, word_count: wordCount(state.body), protected_links: protectedLinksColumn(state.body) };
      if (options.dryRun || sameState(state, stateOf(row))) {
        return { article: toArticleWithBody(preview), etag, sanitized, changed: false };
      }

      const now = this.clock.now();
      const counted = actor.channel === 'api' || actor.channel === 'mcp';
      const allowance = counted ? await this.allowance.take(trx, actor.accountId, now) : undefined;
      const revisionId = await this.revisions.recordIn(trx, row, state, actor, reason);
      const saved = await trx
        .updateTable('articles')
        .set({
          ...state,
          word_count: preview.word_count,
          protected_links: preview.protected_links,
          current_revision_id: revisionId,
          version: row.version + 1,
          updated_at: toTimestamp(now),
        })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const result: WriteResult = { article: toArticleWithBody(saved), etag: articleETag(saved), sanitized, changed: true, allowance };
      if (counted && actor.request) {
        await this.activity.recordIn(trx, {
          actor,
          channel: actor.channel === 'mcp' ? 'mcp' : 'api',
          request: actor.request,
          outcome: { status: 200, error: null },
        });
      }
      if (idempotencyKey !== undefined) {
        await this.idempotency.complete(trx, actor.accountId, idempotencyKey, { ok: true, result });
      }
      await options.storeMedia?.(trx);
      return result;
    }).then((result) => {
      // The activity record went in with the change: the transport must not add a second one.
      if (result.changed && actor.request && (actor.channel === 'api' || actor.channel === 'mcp')) actor.request.recorded = true;
      return result;
    });
  }

  /**
   * The article, locked for the transaction (PostgreSQL row lock; SQLite serialises writers),
   * if the actor may change it: another account's article is not found, or forbidden for
   * admin keys, which may read it.
   */
  private async lockedForWrite(trx: Transaction<Database>, actor: Actor, articleId: number): Promise<ArticleRow> {
    let query = trx.selectFrom('articles').selectAll().where('id', '=', articleId);
    if (this.dialect === 'postgres') query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row || (row.account_id !== actor.accountId && !readsEveryAccount(actor))) throw notFound('article');
    if (row.account_id !== actor.accountId) {
      throw new AppError('forbidden', 'Admin keys may change only their own account’s articles.');
    }
    if (!actor.scopes.includes('write')) throw new AppError('insufficient_scope', 'This credential is read-only.');
    return row;
  }
}
