import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import type { SharedText } from '../core/text-parts.js';
import type { BodyStore } from '../db/body-store.js';
import type { Database, RevisionRow } from '../db/schema.js';
import { type Actor, credentialColumns } from './actor.js';

/** An article's full content: what every revision holds (`Body`: see `ArticleWithBody`). */
export interface ArticleState<Body = string> {
  title: string | null;
  body: Body;
  meta_description: string | null;
  featured_image_url: string | null;
}

export interface RevisionSummary {
  id: number;
  /** The number people see: 1 for the article's first revision, counting up (`numberedRevision`). */
  number: number;
  created_at: string;
  origin: RevisionRow['origin'];
  reason: string | null;
  user_email: string | null;
  key_name: string | null;
  mcp_grant_id: number | null;
  /** The assistant (MCP client) of an `mcp` revision. */
  client_name: string | null;
}

/** Revisions: one per change, with its origin, who made it and why. */
export class RevisionsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly bodies: BodyStore,
  ) {}

  /** Records a revision in the change's transaction; returns its id. */
  async recordIn(
    trx: Transaction<Database>,
    article: { id: number; account_id: number },
    state: ArticleState<string | SharedText>,
    actor: Actor,
    reason: string | null,
  ): Promise<number> {
    const row = await trx
      .insertInto('revisions')
      .values({
        article_id: article.id,
        account_id: article.account_id,
        ...state,
        body: this.bodies.stored(state.body),
        origin: actor.channel,
        user_id: actor.userId,
        ...credentialColumns(actor),
        reason,
        created_at: toTimestamp(this.clock.now()),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** Newest first, numbered, with who made each one. */
  async list(articleId: number): Promise<RevisionSummary[]> {
    const rows = await this.db
      .selectFrom('revisions')
      .leftJoin('users', 'users.id', 'revisions.user_id')
      .leftJoin('api_keys', 'api_keys.id', 'revisions.api_key_id')
      .leftJoin('oauth_grants', 'oauth_grants.id', 'revisions.mcp_grant_id')
      .leftJoin('oauth_clients', 'oauth_clients.client_id', 'oauth_grants.client_id')
      .select([
        'revisions.id',
        'revisions.created_at',
        'revisions.origin',
        'revisions.reason',
        'revisions.mcp_grant_id',
        'users.email as user_email',
        'api_keys.name as key_name',
        'oauth_clients.client_name',
      ])
      .where('revisions.article_id', '=', articleId)
      .orderBy('revisions.id', 'desc')
      .execute();
    return rows.map((row, index) => ({ ...row, number: rows.length - index }));
  }

  /**
   * The id of the article's revision numbered `number`: revisions are numbered per article, 1 for
   * its first, in the order they were made (database ids are shared by every article, so they
   * jump). Revisions are never deleted, so a number names the same revision for good.
   */
  async idOf(articleId: number, number: number): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('revisions')
      .select('id')
      .where('article_id', '=', articleId)
      .orderBy('id')
      .limit(1)
      .offset(number - 1)
      .executeTakeFirst();
    return row?.id;
  }

  /** The revision numbered `number` of the article (`idOf`), with its body. */
  async byNumber(articleId: number, number: number): Promise<RevisionRow | undefined> {
    const id = await this.idOf(articleId, number);
    return id === undefined ? undefined : this.get(articleId, id);
  }

  async get(articleId: number, revisionId: number): Promise<RevisionRow | undefined> {
    return this.bodies.revision(articleId, revisionId);
  }
}
