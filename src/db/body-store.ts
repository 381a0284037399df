import type { CompiledQuery, Kysely, QueryResult, RawBuilder, Transaction } from 'kysely';
import type { SharedText, TextPieces, Utf8Text } from '../core/text-parts.js';
import { bodyInParts, bodyPieces, bodyText, bodyUnlessLarge, storedText, withLargeBody } from './body-pieces.js';
import type { Db } from './connect.js';
import { bodyBytes, bodyReadOnLoop, offLoopBodyBytes } from './off-loop.js';
import { precompiled } from './precompiled.js';
import type { ArticleRow, ArticlesTable, Database, RevisionRow, RevisionsTable } from './schema.js';

/** A body this long (characters) is large: read and stored apart from the event loop's turns. */
export const largeBodyChars = offLoopBodyBytes;

/**
 * The forms an article's body is read in:
 * - `text`: one string (a page, the editor);
 * - `pieces`: a large body in the pieces PostgreSQL sent it in, for a REST answer, which escapes
 *   them where they are;
 * - `utf8`: a large body as UTF-8 (SQLite's bytes, PostgreSQL's parts), for the HTML pool's
 *   threads, never made one string on the event loop.
 */
export interface BodyForms {
  text: string;
  pieces: string | TextPieces;
  utf8: string | Uint8Array | Utf8Text;
}

export type BodyForm = keyof BodyForms;

/** An article as stored, its body in `Form`. */
export type ArticleWithStoredBody<Form extends BodyForm> = Omit<ArticleRow, 'body'> & { body: BodyForms[Form] };

/** Every column of an article but its body. */
export const articleColumnsButBody = Object.keys({
  id: true,
  site_id: true,
  account_id: true,
  title: true,
  url: true,
  status: true,
  published_at: true,
  target_keyword: true,
  word_count: true,
  featured_image_url: true,
  meta_description: true,
  current_revision_id: true,
  protected_links: true,
  body_sanitizer: true,
  version: true,
  created_at: true,
  updated_at: true,
} satisfies Record<Exclude<keyof ArticlesTable, 'body'>, true>) as Exclude<keyof ArticlesTable, 'body'>[];

/** Every column of a revision but its body. */
const revisionColumnsButBody = Object.keys({
  id: true,
  article_id: true,
  account_id: true,
  title: true,
  meta_description: true,
  featured_image_url: true,
  origin: true,
  user_id: true,
  api_key_id: true,
  mcp_grant_id: true,
  reason: true,
  created_at: true,
} satisfies Record<Exclude<keyof RevisionsTable, 'body'>, true>) as Exclude<keyof RevisionsTable, 'body'>[];

/** An article as read: PostgreSQL leaves a large body null (`bodyUnlessLarge`). */
type ReadRow = Omit<ArticleRow, 'body'> & { body: string | Uint8Array | null };

type RowReader = (...parameters: unknown[]) => Promise<ReadRow[]>;

/** The readers of an article by id, and by id within one account, for one form of its body. */
interface Readers {
  byId: RowReader[];
  byIdInAccount: RowReader[];
}

/**
 * Where article and revision bodies are read and stored: the one module that knows how each
 * database moves a large body without holding the event loop. SQLite reads and stores it by the
 * off-loop connection, in a thread of its own (0006); PostgreSQL reads it apart, in pieces
 * (`body-pieces.ts`). Services ask for a row with its body in a form (`BodyForms`) and for a
 * transaction fit for the bodies it stores; they never pick a connection.
 */
export class BodyStore {
  private readonly db: Kysely<Database>;
  private readonly dialect: Db['dialect'];
  /** SQLite: the connection that reads and stores large bodies off the event loop. */
  private readonly offLoop: Kysely<Database> | undefined;
  private readonly readers: Record<'rows' | 'bytes', Readers>;
  /** PostgreSQL: an article's large body, read apart in each form; none when it is no longer at `version`. */
  private readonly largeBody: { [Form in BodyForm]: (articleId: number, version: number) => Promise<BodyForms[Form] | undefined> } = {
    text: (articleId, version) => bodyText(this.db, 'articles', articleId, version),
    pieces: (articleId, version) => bodyPieces(this.db, articleId, version),
    utf8: (articleId, version) => bodyInParts(this.db, articleId, version),
  };

  constructor(db: Pick<Db, 'kysely' | 'dialect' | 'offLoop'>) {
    this.db = db.kysely;
    this.dialect = db.dialect;
    this.offLoop = db.offLoop;
    const kysely = this.db;
    const offLoop = this.offLoop;
    const byId = offLoop
      ? kysely.selectFrom('articles').selectAll().where('id', '=', 0)
      : kysely.selectFrom('articles').select([...articleColumnsButBody, bodyUnlessLarge.as('body')]).where('id', '=', 0);
    const asBytes = kysely.selectFrom('articles').select([...articleColumnsButBody, bodyBytes.as('body')]).where('id', '=', 0);
    const readers = (query: typeof byId, offLoopQuery: typeof byId | typeof asBytes = query): RowReader[] =>
      [precompiled(kysely, offLoop ? query.where(bodyReadOnLoop) : query), ...(offLoop ? [precompiled(offLoop, offLoopQuery)] : [])] as RowReader[];
    this.readers = {
      rows: { byId: readers(byId), byIdInAccount: readers(byId.where('account_id', '=', 0)) },
      bytes: { byId: readers(byId, asBytes), byIdInAccount: readers(byId.where('account_id', '=', 0), asBytes.where('account_id', '=', 0)) },
    };
  }

  /**
   * The article `articleId` (within `accountId` when given: another account's large body is then
   * never read) with its body in `form`; none when there is no such article.
   */
  async article<Form extends BodyForm>(articleId: number, accountId: number | undefined, form: Form): Promise<ArticleWithStoredBody<Form> | undefined> {
    const { byId, byIdInAccount } = this.readers[form === 'utf8' ? 'bytes' : 'rows'];
    const [readers, parameters] = accountId === undefined ? [byId, [articleId]] : [byIdInAccount, [articleId, accountId]];
    const row = await withLargeBody(
      () => this.firstRow(readers, parameters),
      (read) => this.largeBody[form](articleId, read.version),
    );
    return row as ArticleWithStoredBody<Form> | undefined;
  }

  /** The revision `revisionId` of article `articleId`, with its body as one string. */
  async revision(articleId: number, revisionId: number): Promise<RevisionRow | undefined> {
    const { offLoop, db } = this;
    if (offLoop) {
      const query = (db: Kysely<Database>) => db.selectFrom('revisions').selectAll().where('article_id', '=', articleId).where('id', '=', revisionId);
      return (await query(db).where(bodyReadOnLoop).executeTakeFirst()) ?? (await query(offLoop).executeTakeFirst());
    }
    return withLargeBody(
      () =>
        db
          .selectFrom('revisions')
          .select([...revisionColumnsButBody, bodyUnlessLarge.as('body')])
          .where('article_id', '=', articleId)
          .where('id', '=', revisionId)
          .executeTakeFirst(),
      () => bodyText(db, 'revisions', revisionId),
    );
  }

  /** A body as a value to store: a `SharedText` stays bytes, which the database makes text. */
  stored(body: string | SharedText): string | RawBuilder<string> {
    return storedText(this.dialect, body);
  }

  /**
   * Runs `work` in a transaction on the connection that stores bodies of `bodyChars` characters
   * (on SQLite, a large one's by the off-loop connection). `Infinity`: a transaction that moves
   * many bodies (deleting an account's).
   */
  transaction<T>(bodyChars: number, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    const db = this.offLoop && bodyChars >= largeBodyChars ? this.offLoop : this.db;
    return db.transaction().execute(work);
  }

  /** Runs a read that goes through many articles' bodies or their index, off the event loop where the database would hold it. */
  readMany<Row>(query: CompiledQuery<Row>): Promise<QueryResult<Row>> {
    return (this.offLoop ?? this.db).executeQuery(query);
  }

  /** The first row a reader finds; its body is null where PostgreSQL left a large one to read apart. */
  private async firstRow(readers: RowReader[], parameters: number[]): Promise<(Omit<ReadRow, 'body'> & { body: string | null }) | undefined> {
    for (const read of readers) {
      const [row] = await read(...parameters);
      if (row) return row as Omit<ReadRow, 'body'> & { body: string | null };
    }
    return undefined;
  }
}
