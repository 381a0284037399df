import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely, Transaction } from 'kysely';
import { checkArticleFields } from '../core/article-rules.js';
import { AppError, type ProtectedLink } from '../core/errors.js';
import { jsonSha256 } from '../core/secrets.js';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import { type BodyStore, largeBodyChars } from '../db/body-store.js';
import type { Database } from '../db/schema.js';
import type { ActivityEntry, ActivityLog } from './activity.js';
import {
  type BodyContent,
  type EditInput,
  type PlannedEdit,
  type ReplaceInput,
  type SavedEdit,
  type WriteOptions,
  type WriteResult,
  currentState,
  ifMatchHolds,
  type NextStep,
  sameState,
  type StoredState,
  storedStateOf,
  textsOf,
  withTexts,
  type WritableRow,
  writableRow,
} from './article-states.js';
import type { Actor } from './actor.js';
import { articleETag, withBody } from './articles.js';
import type { EditAllowance } from './edit-allowance.js';
import type { HtmlPool, LargeTurn } from './html-pool.js';
import type { PoolChange } from './html-tasks.js';
import type { IdempotencyStore, StoredOutcome, StoredSuccess } from './idempotency.js';
import type { LimitState } from './limits.js';
import type { LoopTurns } from '../platform/loop-turns.js';
import type { RevisionsService } from './revisions.js';


/**
 * A stored write's answer, for an Idempotency-Key's replays: a large body is not stored again
 * but named by the revision that holds it (revisions are never deleted). Stored with the answer, a
 * large body held the event loop to serialise the record, and each replay to read and parse it
 * back.
 */
const toReplay = (result: WriteResult): StoredSuccess<WriteResult> =>
  result.article.body.length < largeBodyChars || result.revision === null
    ? { ok: true, result }
    : { ok: true, result: { ...result, article: { ...result.article, body: '' } }, bodyRevision: result.revision };

/** Articles `storeAll` stores in one turn of the event loop. */
const storedPerTurn = 20;


/** API and MCP writes take the edit allowance and are logged with the change they made. */
const countedWrite = (actor: Actor): boolean => actor.channel === 'api' || actor.channel === 'mcp';

/** The activity record a counted write stores in its transaction. */
const successEntry = (actor: Actor): ActivityEntry | undefined =>
  countedWrite(actor) && actor.request
    ? { actor, channel: actor.channel === 'mcp' ? 'mcp' : 'api', request: actor.request, outcome: { status: 200, error: null } }
    : undefined;

/** Thrown in a write's transaction to roll it back: another write changed the article meanwhile. */
const articleMoved = new Error('The article changed meanwhile.');

/**
 * Every change to an article goes through `write`: check access and If-Match, compute the new
 * state (sanitised and guarded, in the HTML pool when the body is large), then — in one
 * transaction, rolled back if the row's version moved meanwhile — take one unit of the edit
 * allowance, store the article, its revision, its activity record and the idempotent response.
 * The HTML work runs outside the transaction, so a large body never holds the database (on
 * SQLite, every other request) while it is parsed. A refused write changes nothing.
 */
export class ArticleWritesService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly bodies: BodyStore,
    private readonly clock: Clock,
    private readonly loopTurns: LoopTurns,
    private readonly html: HtmlPool,
    private readonly revisions: RevisionsService,
    private readonly activity: ActivityLog,
    private readonly allowance: EditAllowance,
    private readonly idempotency: IdempotencyStore,
    /** Told once a change of an article committed, or failed (`ArticlesService.changed`). */
    private readonly changed: (articleId: number) => void,
  ) {}

  /** PUT: a whole new body (and optionally title; the UI editor adds the meta description). */
  async replace(actor: Actor, articleId: number, input: ReplaceInput, options: WriteOptions = {}): Promise<WriteResult> {
    checkArticleFields(input);
    return this.write(
      actor,
      articleId,
      'updateArticle',
      input,
      options,
      input.reason,
      async (row, turn) => withTexts(row, input, await this.bodyFor(actor, row, { body: input.body }, turn)),
      input.body.length >= largeBodyChars,
    );
  }

  /** PATCH: title, meta description and exact replacements in the body as GET returns it. */
  async edit(actor: Actor, articleId: number, input: EditInput, options: WriteOptions = {}): Promise<WriteResult> {
    checkArticleFields(input);
    return this.write(actor, articleId, 'editArticle', input, options, input.reason, async (row) =>
      withTexts(row, input, await this.bodyFor(actor, row, { replacements: input.replacements ?? [] })),
    );
  }

  /** A new featured image URL (an uploaded image is stored by the media store first). */
  async replaceFeaturedImage(
    actor: Actor,
    articleId: number,
    input: { url: string; reason?: string; fingerprint: string },
    options: WriteOptions = {},
  ): Promise<WriteResult> {
    checkArticleFields({ reason: input.reason });
    return this.write(actor, articleId, 'replaceFeaturedImage', input.fingerprint, options, input.reason, async (row) => ({
      ...textsOf(row),
      ...(await this.bodyFor(actor, row, { replacements: [] })),
      featured_image_url: input.url,
    }));
  }

  /**
   * Restores an earlier revision from the UI, as a new revision of origin editor. The revision is
   * named by its number within the article (1 for the first), as the UI shows it and the reason records it.
   */
  restore(actor: Actor, articleId: number, revisionNumber: number): Promise<WriteResult> {
    return this.write(actor, articleId, 'restoreRevision', revisionNumber, {}, `Restored revision ${revisionNumber}`, async (row) => {
      const revision = await this.revisions.byNumber(row.id, revisionNumber);
      if (!revision) throw new AppError('not_found', 'This article has no revision with this number.');
      // A revision saved before the title rule held may carry a blank title: restoring it is refused as any such write.
      checkArticleFields({ title: revision.title });
      return {
        title: revision.title,
        meta_description: revision.meta_description,
        featured_image_url: revision.featured_image_url,
        ...(await this.bodyFor(actor, row, { body: revision.body })),
      };
    });
  }

  /** The article if the actor may change it, and its next state after `change` (`replaceInSite`); refusals are thrown. */
  async plan(actor: Actor, articleId: number, change: PoolChange): Promise<PlannedEdit> {
    const row = await writableRow(this.bodies, actor, articleId);
    return { row, next: withTexts(row, {}, await this.bodyFor(actor, row, change)) };
  }

  /**
   * Stores planned edits in one transaction, all or nothing, as `store` stores one: an edit of
   * the allowance and a revision per changed article, one activity record, and the idempotent
   * answer that `answer` makes of the saved articles. Undefined (nothing stored) when an article
   * moved since it was planned.
   */
  async storeAll<T>(
    actor: Actor,
    edits: readonly PlannedEdit[],
    reason: string | null,
    answer: (saved: SavedEdit[], allowance: LimitState | undefined) => T,
    idempotencyKey?: string,
  ): Promise<T | undefined> {
    const changed = edits.filter(({ row, next }) => !sameState(next, row));
    const counted = countedWrite(actor);
    const entry = successEntry(actor);
    await this.loopTurns.take('store');
    const result = await this.db.transaction().execute(async (trx) => {
      const now = this.clock.now();
      const allowance = counted && changed.length > 0 ? await this.allowance.take(trx, actor.accountId, now, changed.length) : undefined;
      const saved: SavedEdit[] = [];
      for (const [i, { row, next }] of changed.entries()) {
        // Hundreds of articles are stored in one transaction: the event loop gets a turn every few.
        if (i > 0 && i % storedPerTurn === 0) await nextTurn();
        const stored = await this.saveIn(trx, actor, row, storedStateOf(next).state, reason, now);
        saved.push({ articleId: row.id, etag: articleETag(stored.saved), revision: stored.revisionId });
      }
      const result = answer(saved, allowance);
      if (entry) await this.activity.recordIn(trx, entry);
      if (idempotencyKey !== undefined) await this.idempotency.complete(trx, actor.accountId, idempotencyKey, { ok: true, result });
      return result;
    })
      .catch((error: unknown) => {
        if (error === articleMoved) return undefined;
        throw error;
      })
      .finally(() => {
        for (const { row } of changed) this.changed(row.id);
      });
    if (result !== undefined && entry) {
      this.activity.committed(entry);
      actor.request!.recorded = true;
    }
    return result;
  }

  /** A stored success as first answered: a large body read back from the revision that holds it. */
  private async replayed(articleId: number, stored: StoredSuccess<WriteResult>): Promise<WriteResult> {
    if (stored.bodyRevision === undefined) return stored.result;
    const revision = await this.revisions.get(articleId, stored.bodyRevision);
    if (!revision) throw new Error(`revision ${stored.bodyRevision} of a stored answer is missing`);
    return { ...stored.result, article: { ...stored.result.article, body: revision.body } };
  }

  /** The body after `change`, sanitised and guarded; a refusal is thrown as its AppError. */
  private async bodyFor(actor: Actor, row: WritableRow, change: PoolChange, turn?: LargeTurn): Promise<BodyContent> {
    const outcome = await this.html.nextBody(actor.accountId, row.body, change, currentState(row), turn);
    if (!outcome.ok) throw AppError.fromBody(outcome.error);
    return { ...outcome.next, unchanged: outcome.unchanged };
  }

  private async write(
    actor: Actor,
    articleId: number,
    operation: string,
    request: unknown,
    options: WriteOptions,
    reason: string | undefined,
    next: NextStep,
    /** The new body is large, as a PUT's may be: see `apply`. */
    largeChange = false,
  ): Promise<WriteResult> {
    const key = options.dryRun ? undefined : options.idempotencyKey;
    if (key === undefined) return this.apply(actor, articleId, options, reason ?? null, next, largeChange);

    const fingerprint = await jsonSha256([operation, articleId, request]);
    const stored = await this.idempotency.claim<WriteResult>(actor.accountId, key, fingerprint);
    if (stored) {
      if (stored.ok) return this.replayed(articleId, stored);
      throw AppError.fromBody(stored.error);
    }
    try {
      const result = await this.apply(actor, articleId, options, reason ?? null, next, largeChange, key);
      // A no-op stored nothing in its transaction: store its answer too, or the key stays pending.
      if (!result.changed) await this.idempotency.complete(this.db, actor.accountId, key, toReplay(result));
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

  /**
   * The write, attempted again while another write changes the article meanwhile. A large new
   * body holds the HTML pool's large turn for every step of an attempt (`HtmlPool.inLargeTurn`).
   */
  private async apply(
    actor: Actor,
    articleId: number,
    options: WriteOptions,
    reason: string | null,
    next: NextStep,
    largeChange: boolean,
    idempotencyKey?: string,
  ): Promise<WriteResult> {
    for (;;) {
      // Each step of a large write (parsing the request, reading the row, handing it to a worker,
      // storing it) costs milliseconds per megabyte: a turn of the event loop between them keeps
      // other requests answered in the meantime. The row's size is not known before it is read.
      await nextTurn();
      const attempt = (turn?: LargeTurn) => this.attempt(actor, articleId, options, reason, next, idempotencyKey, turn);
      const result = await (largeChange ? this.html.inLargeTurn(attempt) : attempt());
      if (result !== undefined) return result;
    }
  }

  /** One attempt of `apply`; undefined when another write changed the article meanwhile. */
  private async attempt(
    actor: Actor,
    articleId: number,
    options: WriteOptions,
    reason: string | null,
    next: NextStep,
    idempotencyKey: string | undefined,
    turn: LargeTurn | undefined,
  ): Promise<WriteResult | undefined> {
    const row = await writableRow(this.bodies, actor, articleId);
    const etag = articleETag(row);
    if (options.ifMatch !== undefined && !ifMatchHolds(options.ifMatch, etag)) {
      throw new AppError('precondition_failed', 'The article changed since you read it (If-Match does not match its ETag); nothing was saved.');
    }
    const nextState = await next(row, turn);
    const { state, sanitized, protected_links } = storedStateOf(nextState);
    if (options.dryRun || sameState(nextState, row)) {
      const revision = nextState.unchanged ? row.current_revision_id : null;
      return { article: withBody({ ...row, ...state }, state.body, protected_links), etag, sanitized, changed: false, revision };
    }
    // The HTML work may have come back from a pool thread, in a turn of the loop shared with
    // other results and requests: storing waits for a turn of its own (loop-turns.ts), in a lane
    // shared by every write that stores.
    await this.loopTurns.take('store');
    // A large body is stored in the large turn: the database's copies of it then never add to
    // those of a large edit running meanwhile.
    const large = state.body.length >= largeBodyChars;
    const store = () => this.store(actor, row, state, sanitized, reason, idempotencyKey, options.storeMedia);
    const result = await (large ? this.html.inLargeTurn(store, turn) : store());
    if (result === undefined) return undefined;
    if (large) await nextTurn();
    // The activity record went in with the change: the transport must not add a second one.
    if (actor.request && countedWrite(actor)) actor.request.recorded = true;
    return result;
  }

  /** Stores the next state in one transaction, unless the row moved past `row.version`. */
  private async store(
    actor: Actor,
    row: WritableRow,
    state: StoredState,
    sanitized: string[],
    reason: string | null,
    idempotencyKey: string | undefined,
    storeMedia: WriteOptions['storeMedia'],
  ): Promise<WriteResult | undefined> {
    const counted = countedWrite(actor);
    const entry = successEntry(actor);
    const result = await this.bodies.transaction(state.body.length, async (trx) => {
      const now = this.clock.now();
      const allowance = counted ? await this.allowance.take(trx, actor.accountId, now) : undefined;
      const { saved, revisionId } = await this.saveIn(trx, actor, row, state, reason, now);
      const article = withBody(saved, state.body, JSON.parse(state.protected_links) as ProtectedLink[]);
      const result: WriteResult = { article, etag: articleETag(saved), sanitized, changed: true, revision: revisionId, allowance };
      if (entry) await this.activity.recordIn(trx, entry);
      if (idempotencyKey !== undefined) {
        await this.idempotency.complete(trx, actor.accountId, idempotencyKey, toReplay(result));
      }
      await storeMedia?.(trx);
      return result;
    })
      .catch((error: unknown) => {
        if (error === articleMoved) return undefined;
        throw error;
      })
      .finally(() => this.changed(row.id));
    if (result && entry) this.activity.committed(entry);
    return result;
  }

  /**
   * Stores one article's next state and its revision in `trx`; throws `articleMoved` when the
   * row's version moved past `row.version` (everything `trx` wrote is then rolled back).
   */
  private async saveIn(trx: Transaction<Database>, actor: Actor, row: WritableRow, state: StoredState, reason: string | null, now: Date) {
    const { word_count: _words, protected_links: _links, body_sanitizer: _sanitizer, ...revised } = state;
    const revisionId = await this.revisions.recordIn(trx, row, revised, actor, reason);
    const changes = { ...state, current_revision_id: revisionId, version: row.version + 1, updated_at: toTimestamp(now) };
    // The body is copied from the revision inside the database: sent again, a large body would
    // be encoded, carried and decoded once more. The stored row is known: reading it back would
    // copy the body once more too.
    //
    // Ownership and scope were checked on `row`; neither changes, only the version may have. The
    // update checks it itself instead of a locking read first (one round trip fewer): on
    // PostgreSQL a concurrent write's update waits for this one's commit, then finds the version
    // moved, and everything its transaction wrote is rolled back.
    const { body: _body, ...columns } = changes;
    const updated = await trx
      .updateTable('articles')
      .set({ ...columns, body: (eb) => eb.selectFrom('revisions').select('body').where('id', '=', revisionId) })
      .where('id', '=', row.id)
      .where('version', '=', row.version)
      .executeTakeFirstOrThrow();
    if (updated.numUpdatedRows === 0n) throw articleMoved;
    return { saved: { ...row, ...changes }, revisionId };
  }
}
