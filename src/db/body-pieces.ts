import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import type { Utf8Text } from '../core/text-parts.js';
import type { Database } from './schema.js';

/** Characters of a large body per row read (PostgreSQL's `substring` counts characters). */
const pieceChars = 256 * 1024;

/**
 * PostgreSQL: an article's body as UTF-8 in parts, for the HTML pool, read as pieces of
 * `pieceChars` characters, a row each, each piece encoded in a turn of its own; `undefined` when
 * the article is no longer at `version`. Read as one value, a 5 MB body arrived as one message of
 * the protocol, which the driver gathered into one buffer (copied again at each doubling) and
 * decoded in one turn: 22–38 ms of the event loop alone, and the largest part of its 72–92 ms
 * stalls under the bench's load. Each piece is a message of its own, a quarter of a megabyte.
 */
export async function bodyInParts(db: Kysely<Database>, articleId: number, version: number): Promise<Utf8Text | undefined> {
  const { rows } = await sql<{ piece: string }>`
    select substring(body from s for ${sql.lit(pieceChars)}) as piece
    from articles, generate_series(1, length(body), ${sql.lit(pieceChars)}) as s
    where id = ${articleId} and version = ${version}
    order by s`.execute(db);
  if (rows.length === 0) return undefined;
  const encoder = new TextEncoder();
  const utf8: Uint8Array[] = [];
  for (const { piece } of rows) {
    await nextTurn();
    utf8.push(encoder.encode(piece));
  }
  return { utf8 };
}
