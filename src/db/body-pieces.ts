import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { type SharedText, sharedBytes, type TextPieces, type Utf8Text } from '../core/text-parts.js';
import type { DialectName } from './connect.js';
import { offLoopBodyBytes } from './off-loop.js';
import type { Database } from './schema.js';

/**
 * A body to store: a string as it is; a `SharedText` as its bytes, which the database makes text
 * (both check them as UTF-8): better-sqlite3 binds them from where they are, on the off-loop
 * connection's thread too, and the PostgreSQL driver sends them as they are (binary). Made a
 * string first, a large body would cost the event loop a turn.
 */
export const storedText = (dialect: DialectName, body: string | SharedText): string | RawBuilder<string> => {
  if (typeof body === 'string') return body;
  const bytes = sharedBytes(body);
  return dialect === 'postgres' ? sql<string>`convert_from(${bytes}, 'UTF8')` : sql<string>`cast(${bytes} as text)`;
};

/** Characters of a large body per row read (PostgreSQL's `substring` counts characters). */
const pieceChars = 256 * 1024;

/**
 * PostgreSQL: the `body` column where it is under a megabyte, else null: read such a body with
 * `bodyInParts` or `bodyText`. Read as one value, a large body arrived as one message of the
 * protocol, which the driver gathered into one buffer (copied again at each doubling) and decoded
 * in one turn: the largest part of the event loop's stalls under load. Each piece is a message of
 * its own, a quarter of a megabyte.
 */
export const bodyUnlessLarge = sql<string | null>`case when octet_length(body) < ${sql.lit(offLoopBodyBytes)} then body end`;

/**
 * PostgreSQL: the row `read` gives (its body selected with `bodyUnlessLarge`), a large body read
 * apart by `piecesOf`. When `piecesOf` finds none (a write moved the article on between the two
 * reads), the row is read again.
 */
export async function withLargeBody<Row extends { body: string | null }, Body>(
  read: () => Promise<Row | undefined>,
  piecesOf: (row: Row) => Promise<Body | undefined>,
): Promise<(Omit<Row, 'body'> & { body: string | Body }) | undefined> {
  for (;;) {
    const row = await read();
    if (!row || row.body !== null) return row as (Row & { body: string }) | undefined;
    const body = await piecesOf(row);
    if (body !== undefined) return { ...row, body };
  }
}

/** The body of an article (at `version`) or a revision in pieces of `pieceChars`, a row each; none when no such row. */
async function pieces(db: Kysely<Database>, table: 'articles' | 'revisions', id: number, version?: number): Promise<string[]> {
  const { rows } = await sql<{ piece: string }>`
    select substring(body from s for ${sql.lit(pieceChars)}) as piece
    from ${sql.table(table)}, generate_series(1, length(body), ${sql.lit(pieceChars)}) as s
    where id = ${id}${version === undefined ? sql`` : sql` and version = ${version}`}
    order by s`.execute(db);
  return rows.map((row) => row.piece);
}

/**
 * An article's large body as UTF-8 in parts, for the HTML pool, each piece encoded in a turn of
 * its own; `undefined` when the article is no longer at `version`.
 */
export async function bodyInParts(db: Kysely<Database>, articleId: number, version: number): Promise<Utf8Text | undefined> {
  const read = await pieces(db, 'articles', articleId, version);
  if (read.length === 0) return undefined;
  const encoder = new TextEncoder();
  const utf8: Uint8Array[] = [];
  for (const piece of read) {
    await nextTurn();
    utf8.push(encoder.encode(piece));
  }
  return { utf8 };
}

/**
 * A large body as one string, for an answer or a page (joined once, which costs mostly faulting
 * in the fresh memory); `undefined` when the article is no longer at `version`, or
 * no such revision.
 */
export async function bodyText(db: Kysely<Database>, table: 'articles' | 'revisions', id: number, version?: number): Promise<string | undefined> {
  const read = await pieces(db, table, id, version);
  return read.length === 0 ? undefined : read.join('');
}

/**
 * A large body as the pieces it was read in, for a REST answer, which escapes them where they
 * are (`TextPieces`); `undefined` when the article is no longer at `version`.
 */
export async function bodyPieces(db: Kysely<Database>, articleId: number, version: number): Promise<TextPieces | undefined> {
  const read = await pieces(db, 'articles', articleId, version);
  return read.length === 0 ? undefined : { pieces: read };
}
