import { z } from 'zod';
import { holdsNul, nulRefused } from '../core/errors.js';
import { articleStatuses, backlinkCategories, backlinkStatuses } from '../core/values.js';
import {
  articleId,
  articleSchema,
  articleWithBodySchema,
  backlinkSchema,
  dateRangeParams,
  pageOf,
  pageParams,
  restArticle,
  single,
  siteId,
  siteSchema,
  statsSchema,
} from './schemas.js';
import { defineOperation, type Operation } from './types.js';

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** A free-text filter; U+0000 is refused because PostgreSQL's text cannot hold it. */
const filterText = z
  .string()
  .min(1)
  .refine((value) => !holdsNul(value), nulRefused)
  .optional();

const pagingNote = 'Paged (meta.last_page); a page too large for one result: validation_failed names a per_page that fits.';

export const listSites = defineOperation({
  name: 'listSites',
  summary: 'List the websites of the account',
  description:
    'Lists the websites of the key’s account, ordered by id. Admin keys list every account and may filter by `account` (a customer user id or e-mail) and `website` (part of the website URL, case-insensitive); other keys get 403 `forbidden` for those filters.',
  rest: { method: 'GET', path: '/sites' },
  tool: {
    name: 'list_sites',
    title: 'List websites',
    description: `The account's websites, by id; a site's id goes to list_articles, list_backlinks and get_stats. ${pagingNote}`,
    annotations: readOnly,
    // A connection sees its own account only, even for staff: the staff filters are not offered.
    restOnly: ['account', 'website'],
  },
  input: z.object({
    account: filterText.describe('Admin keys only: a customer user id or e-mail.'),
    website: filterText.describe('Admin keys only: part of the website URL.'),
    ...pageParams,
  }),
  output: pageOf(siteSchema).describe('One page of the websites of the account, by id, and where the page is in the list.'),
  errors: ['forbidden', 'validation_failed', 'rate_limited'],
  scope: 'read',
  handler: async (input, { actor, services }) => ({ body: await services.sites.list(actor, input) }),
});

export const listArticles = defineOperation({
  name: 'listArticles',
  summary: 'List articles of a website',
  description:
    'Lists the articles of one website, newest `published_at` first (articles without one last), then by id descending. `from`/`to` filter on `published_at`, inclusive UTC days, and exclude articles without one; `status` is one of draft, scheduled, published, archived.',
  rest: { method: 'GET', path: '/sites/{id}/articles', pathId: 'site_id' },
  tool: {
    name: 'list_articles',
    title: 'List articles of a website',
    description: `A website's articles, newest first, without bodies (get_article reads one). Filters: from/to (YYYY-MM-DD, inclusive, on published_at; no drafts) and status. ${pagingNote} A site not on the account: not_found.`,
    annotations: readOnly,
  },
  input: z.object({
    site_id: siteId,
    ...dateRangeParams,
    status: z.enum(articleStatuses).optional().describe('Only articles with this status.'),
    ...pageParams,
  }),
  output: pageOf(articleSchema).describe('One page of the website’s articles, newest first, without bodies.'),
  errors: ['not_found', 'validation_failed', 'rate_limited'],
  scope: 'read',
  handler: async ({ site_id, ...filters }, { actor, services }) => ({
    body: await services.articles.list(actor, site_id, filters),
  }),
});

/** The get_article tool's listing; it runs as `getArticleTool` (article-window.ts), which reads the body in windows. */
export const getArticleToolPart = {
  name: 'get_article',
  title: 'Read an article',
  description:
    'One article: its fields, protected_links (marked data-service-protected in the body; edits must keep them exactly) and its HTML body in windows. data.body is the window from meta.body_offset (meta.body_length of meta.body_total_length characters); while meta.next_offset is not null, call again with body_offset=next_offset. The first window of a long body brings meta.outline (headings with the offset and length of each section, to pass as body_offset and body_length) and the protected links; outline: true asks again. Offsets count code points; a window is the stored text exactly: copy the finds of update_article replacements from it. Errors: not_found, validation_failed (body_offset past the end; the message gives the length).',
  annotations: readOnly,
};

export const getArticle = defineOperation({
  name: 'getArticle',
  summary: 'Get an article with its HTML body',
  description:
    'Returns one article with its HTML body, meta description and the protected links in the body (links the service inserted, marked `data-service-protected`, which no edit may remove or rewrite). The `ETag` header can be sent back as `If-Match` on writes, or as `If-None-Match` for a 304 without body while the article is unchanged.',
  rest: { method: 'GET', path: '/articles/{id}', pathId: 'article_id', etag: true },
  tool: getArticleToolPart,
  input: z.object({ article_id: articleId }),
  output: single(articleWithBodySchema).describe('The article with its HTML body and protected links; the `ETag` header names this state.'),
  errors: ['not_found', 'rate_limited'],
  scope: 'read',
  handler: async ({ article_id }, { actor, services }) => {
    const { article, etag } = await services.articles.getAnswer(actor, article_id);
    return { body: { data: restArticle(article) }, etag };
  },
});

export const listBacklinks = defineOperation({
  name: 'listBacklinks',
  summary: 'List backlinks acquired for a website',
  description:
    'Lists the backlinks acquired for one website, newest `acquired_at` first. `from`/`to` filter on `acquired_at`, inclusive UTC days; `status` (pending, live, lost) and `category` (industry, local) keep the backlinks with that value. Filters combine.',
  rest: { method: 'GET', path: '/sites/{id}/backlinks', pathId: 'site_id' },
  tool: {
    name: 'list_backlinks',
    title: 'List backlinks of a website',
    description: `A website's acquired backlinks, newest first; read-only. Filters, combined: from/to (YYYY-MM-DD, inclusive, on acquired_at), status (pending, live or lost) and category (industry or local). ${pagingNote} A site not on the account: not_found.`,
    annotations: readOnly,
  },
  input: z.object({
    site_id: siteId,
    ...dateRangeParams,
    status: z.enum(backlinkStatuses).optional().describe('Only backlinks with this status.'),
    category: z.enum(backlinkCategories).optional().describe('Only backlinks of this category.'),
    ...pageParams,
  }),
  output: pageOf(backlinkSchema).describe('One page of the backlinks acquired for the website, newest first.'),
  errors: ['not_found', 'validation_failed', 'rate_limited'],
  scope: 'read',
  handler: async ({ site_id, ...filters }, { actor, services }) => ({
    body: await services.backlinks.list(actor, site_id, filters),
  }),
});

export const getStats = defineOperation({
  name: 'getStats',
  summary: 'Article and backlink counts for a period',
  description:
    'Counts published articles and acquired backlinks (split industry/local) of one website in a period. Give either `period` (this_month, last_month, last_30_days, YYYY-MM or YYYY-MM-DD) or both `from` and `to`; giving both kinds, or only one of from/to, is a 422. Without either, the period is this_month. Days are UTC; the response gives the resolved dates.',
  rest: { method: 'GET', path: '/sites/{id}/stats', pathId: 'site_id' },
  tool: {
    name: 'get_stats',
    title: 'Monthly report numbers',
    description:
      'A website\'s counts for a period (monthly reports): articles published, backlinks acquired, industry and local. Give period or from and to (YYYY-MM-DD, inclusive), not both; neither: this_month. UTC days. Errors: validation_failed (names the fields), not_found.',
    annotations: readOnly,
  },
  input: z.object({
    site_id: siteId,
    period: z
      .string()
      .optional()
      .describe('this_month, last_month, last_30_days, a month YYYY-MM or a day YYYY-MM-DD.')
      .meta({ example: '2026-10' }),
    ...dateRangeParams,
  }),
  output: single(statsSchema).describe('The counts of the period, with the days it covers.'),
  errors: ['not_found', 'validation_failed', 'rate_limited'],
  scope: 'read',
  handler: async ({ site_id, ...period }, { actor, services }) => ({
    body: { data: await services.stats.get(actor, site_id, period) },
  }),
});

export const readOperations: readonly Operation[] = [listSites, listArticles, getArticle, listBacklinks, getStats];
