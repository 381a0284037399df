import type { Transaction } from 'kysely';
import type { CurrentState } from '../core/article-body.js';
import { AppError, notFound, type ProtectedLink } from '../core/errors.js';
import { SANITIZER_VERSION } from '../core/html.js';
import type { Replacement } from '../core/replacement.js';
import type { SharedText } from '../core/text-parts.js';
import type { ArticleWithStoredBody, BodyStore } from '../db/body-store.js';
import type { Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import type { ArticleWithBody } from './articles.js';
import type { LargeTurn } from './html-pool.js';
import type { LimitState } from './limits.js';
import type { ArticleState } from './revisions.js';
import { readsEveryAccount } from './sites.js';

// The shapes of an article write (article-writes.ts): what it is given and answers, and the states
// it goes through: the row as read, the next state computed from it, and that state as stored.

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
  /** A body sent as a `SharedText` (a large PUT's, over REST) is answered as one. */
  article: ArticleWithBody<string | SharedText>;
  etag: string;
  /** What the sanitiser removed from the submitted body (meta.sanitized). */
  sanitized: string[];
  changed: boolean;
  /** The revision that holds the answered body (none for a dry run that would change it). */
  revision: number | null;
  /** The daily edit allowance after this write (API and MCP writes only). */
  allowance?: LimitState;
}

export interface ReplaceInput {
  /** A large body of a PUT over REST comes as a `SharedText` (its operation's `sharedTextFields`). */
  body: string | SharedText;
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

/** One article of a site-wide edit: its row as read and its next state (`ArticleWritesService.plan`). */
export interface PlannedEdit {
  row: WritableRow;
  next: NextState;
}

/** An article a site-wide edit changed. */
export interface SavedEdit {
  articleId: number;
  etag: string;
  revision: number;
}

/** The next state of an article, computed from its current row, with what the body's scan found. */
export type NextState = ArticleState<string | SharedText> & {
  sanitized: string[];
  word_count: number | null;
  protected_links: ProtectedLink[];
  clean: boolean;
  /** The body is the current one. */
  unchanged: boolean;
};

/**
 * An article as a write reads it: a large body as its UTF-8 bytes (SQLite) or in UTF-8 parts
 * (PostgreSQL: `bodyInParts`), which go to the HTML pool as they are. Decoded here and encoded
 * again for the pool, a large body would cost the event loop time and two more copies of it in
 * its memory.
 */
export type WritableRow = ArticleWithStoredBody<'utf8'>;

/** A next state as stored: its derived columns as the row holds them. */
export type StoredState = ArticleState<string | SharedText> & { word_count: number | null; protected_links: string; body_sanitizer: number | null };

/** `If-Match` holds when it names the current ETag or is `*`; a weak tag never matches (RFC 9110). */
export function ifMatchHolds(header: string, etag: string): boolean {
  return header
    .split(',')
    .map((tag) => tag.trim())
    .some((tag) => tag === '*' || tag === etag);
}

/** The row's state but its body. */
export const textsOf = (row: WritableRow): Omit<ArticleState, 'body'> => ({
  title: row.title,
  meta_description: row.meta_description,
  featured_image_url: row.featured_image_url,
});

/**
 * What the row says of its body: clean when the current sanitiser wrote it, and then its stored
 * word count and protected links, which every write and import computes with the body.
 */
export const currentState = (row: WritableRow): CurrentState => {
  if (row.body_sanitizer !== SANITIZER_VERSION) return { clean: false };
  if (row.word_count === null || row.protected_links === null) return { clean: true };
  return { clean: true, stored: { words: row.word_count, links: JSON.parse(row.protected_links) as ProtectedLink[] } };
};

/** The next state changes nothing of the row. */
export const sameState = (next: NextState, row: WritableRow) =>
  next.unchanged && next.title === row.title && next.meta_description === row.meta_description && next.featured_image_url === row.featured_image_url;

/** How a write computes the next state from the current row (with the large turn it holds, if any). */
export type NextStep = (row: WritableRow, turn?: LargeTurn) => Promise<NextState>;

/** What a new body brings to the next state. */
export type BodyContent = Pick<NextState, 'body' | 'sanitized' | 'word_count' | 'protected_links' | 'clean' | 'unchanged'>;

/** The next state with a new body and, where given, a new title and meta description. */
export const withTexts = (
  row: WritableRow,
  texts: { title?: string; meta_description?: string },
  content: BodyContent,
): NextState => ({
  ...textsOf(row),
  title: texts.title ?? row.title,
  meta_description: texts.meta_description ?? row.meta_description,
  ...content,
});

/** The next state as the row stores it, and what the body's scan found beside it. */
export function storedStateOf(next: NextState): { state: StoredState; sanitized: string[]; protected_links: ProtectedLink[] } {
  const { sanitized, word_count, protected_links, clean, unchanged: _unchanged, ...state } = next;
  const derived = { word_count, protected_links: JSON.stringify(protected_links), body_sanitizer: clean ? SANITIZER_VERSION : null };
  return { state: { ...state, ...derived }, sanitized, protected_links };
}

/**
 * The article if the actor may change it, its body as `WritableRow` holds it: another account's
 * article is not found, or forbidden for admin keys, which may read it.
 */
export async function writableRow(bodies: BodyStore, actor: Actor, articleId: number): Promise<WritableRow> {
  const row = await bodies.article(articleId, undefined, 'utf8');
  if (!row || (row.account_id !== actor.accountId && !readsEveryAccount(actor))) throw notFound('article');
  if (row.account_id !== actor.accountId) {
    throw new AppError('forbidden', 'Admin keys may change only their own account’s articles.');
  }
  if (!actor.scopes.includes('write')) throw new AppError('insufficient_scope', 'This credential is read-only.');
  return row;
}
