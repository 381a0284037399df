import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import type { Services } from '../../src/services/index.js';
import { createCustomer, type Harness } from './harness.js';
import { type ApiResponse, seedSite } from './fixtures.js';

/** The links the content pipeline inserted: one backlink, one internal link. */
export const BACKLINK = '<a href="https://partner.example/page" data-service-protected="backlink">partner page</a>';
export const INTERNAL = '<a href="/guides/setup" data-service-protected="internal">our setup guide</a>';

/** A body with both kinds of protected link, as stored (already sanitised, so byte-stable). */
export const PROTECTED_BODY =
  `<p>Intro paragraph with some words.</p>` +
  `<p>Read the ${BACKLINK} for the details.</p>` +
  `<p>Second paragraph mentions ${INTERNAL} once.</p>` +
  `<p>Closing words here.</p>`;

export const PLAIN_BODY = '<p>Alpha beta gamma.</p><p>Delta epsilon.</p>';

/**
 * A clean body of over a million characters (over 1 MB of UTF-8) with `marker` at its end:
 * characters of one to four bytes (and two UTF-16 units) all along, so that any cut into pieces
 * (PostgreSQL's, a part's of an answer) ends inside every kind of character, and every character
 * JSON escapes in text.
 */
export const largeBody = (marker: string) =>
  `${PROTECTED_BODY}${'<p>Ünïcode — € and 😀, "quoted" \\ back\tslash, 中文 &amp; plain ASCII.</p>\n'.repeat(16_000)}<p>${marker}</p>`;

export interface Customer {
  userId: number;
  accountId: number;
  key: string;
  keyId: number;
  email: string;
}

export interface SeededArticle {
  customer: Customer;
  siteId: number;
  articleId: number;
}

export interface ArticleSeed {
  title?: string | null;
  body?: string;
  meta_description?: string | null;
  featured_image_url?: string | null;
}

/** A new customer (unless one is given) with one site holding one published article. */
export async function seedArticle(
  services: Services,
  seed: ArticleSeed = {},
  customer?: Customer,
): Promise<SeededArticle> {
  const owner = customer ?? (await createCustomer(services));
  const tag = randomBytes(3).toString('hex');
  // A site of its own each time: import matches a site by its owner's account and website_url.
  const { siteId, articleIds } = await seedSite(services, owner.email, {
    name: `Site ${tag}`,
    website_url: `https://site-${tag}.example`,
    language: 'en',
    country: 'US',
    geographic_scope: 'national',
    industry: 'software',
    articles: [
      {
        status: 'published',
        title: seed.title === undefined ? 'Original title' : seed.title,
        url: 'https://site.example/article',
        published_at: '2026-10-01T09:00:00Z',
        target_keyword: 'setup guide',
        meta_description: seed.meta_description === undefined ? 'Original meta.' : seed.meta_description,
        featured_image_url: seed.featured_image_url === undefined ? 'https://img.example/original.jpg' : seed.featured_image_url,
        body: seed.body ?? PROTECTED_BODY,
      },
    ],
  });
  return { customer: owner, siteId, articleId: articleIds[0]! };
}

/** A fresh API key for a user (each key has its own 60 requests a minute). */
export async function newKey(services: Services, userId: number, readOnly = false): Promise<{ key: string; keyId: number }> {
  const created = await services.keys.create(userId, { name: `k-${randomBytes(3).toString('hex')}`, readOnly });
  return { key: created.key, keyId: created.id };
}

export interface SendOptions {
  headers?: Record<string, string>;
  /** Raw payload (sent as is, with the given content-type header). */
  payload?: string | Buffer;
}

/** A request through `app.inject` with a JSON body (unless `payload` is given). */
export async function send(
  app: FastifyInstance,
  method: 'GET' | 'PUT' | 'PATCH' | 'POST',
  url: string,
  key: string | undefined,
  body?: unknown,
  options: SendOptions = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = {
    ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}),
    ...(body !== undefined && options.payload === undefined ? { 'content-type': 'application/json' } : {}),
    ...options.headers,
  };
  const response = await app.inject({
    method,
    url,
    headers,
    ...(options.payload !== undefined ? { payload: options.payload } : body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
  let parsed: unknown;
  try {
    parsed = response.json();
  } catch {
    parsed = undefined;
  }
  return { status: response.statusCode, body: parsed, headers: response.headers, text: response.body };
}

export const put = (h: Harness, id: number, key: string, body: unknown, options?: SendOptions & { query?: string }) =>
  send(h.app, 'PUT', `/api/v1/articles/${id}${options?.query ?? ''}`, key, body, options);

export const patch = (h: Harness, id: number, key: string, body: unknown, options?: SendOptions & { query?: string }) =>
  send(h.app, 'PATCH', `/api/v1/articles/${id}${options?.query ?? ''}`, key, body, options);

export const getArticle = (h: Harness, id: number, key: string) => send(h.app, 'GET', `/api/v1/articles/${id}`, key);

/** The stored article row. */
export const articleRow = (h: Harness, id: number) =>
  h.services.db.kysely.selectFrom('articles').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** Revisions of an article, oldest first. */
export const revisionsOf = (h: Harness, id: number) =>
  h.services.db.kysely.selectFrom('revisions').selectAll().where('article_id', '=', id).orderBy('id', 'asc').execute();

/** Today's (by the harness clock) edit count of an account; 0 when none. */
export async function editCount(h: Harness, accountId: number, day = h.clock.now().toISOString().slice(0, 10)): Promise<number> {
  const row = await h.services.db.kysely
    .selectFrom('edit_counts')
    .select('count')
    .where('account_id', '=', accountId)
    .where('day', '=', day)
    .executeTakeFirst();
  return row?.count ?? 0;
}

/** Sets today's edit count of an account directly. */
export async function setEditCount(h: Harness, accountId: number, count: number): Promise<void> {
  const day = h.clock.now().toISOString().slice(0, 10);
  const db = h.services.db.kysely;
  await db.deleteFrom('edit_counts').where('account_id', '=', accountId).where('day', '=', day).execute();
  await db.insertInto('edit_counts').values({ account_id: accountId, day, count }).execute();
}

/** Everything a refused write must leave untouched. */
export async function snapshot(h: Harness, article: SeededArticle) {
  const row = await articleRow(h, article.articleId);
  return {
    row,
    revisions: (await revisionsOf(h, article.articleId)).length,
    edits: await editCount(h, article.customer.accountId),
  };
}

/** Asserts that the article row (body byte for byte), its revisions and the edit count are as in `before`. */
export async function expectUnchanged(h: Harness, article: SeededArticle, before: Awaited<ReturnType<typeof snapshot>>) {
  const after = await snapshot(h, article);
  expect(after.row.body, 'body byte-identical').toBe(before.row.body);
  expect(after.row).toEqual(before.row);
  expect(after.revisions, 'no new revision').toBe(before.revisions);
  expect(after.edits, 'no edit allowance used').toBe(before.edits);
}
