import { z } from 'zod';
import { holdsNul, nulRefused } from '../core/errors.js';
import { MAX_REPLACE_ARTICLES } from '../services/site-replace.js';
import { CONTEXT_CHARS, isWellFormed, LISTED_MATCHES, MAX_QUERY_CHARS, MIN_QUERY_CHARS } from '../core/text-search.js';
import { articleId, pageOf, pageParams, siteId } from './schemas.js';
import { reason, writeErrors } from './writes.js';
import { defineOperation, type Operation } from './types.js';

const codePoints = (value: string) => [...value].length;

/** Text to find: long enough for the trigram index, short enough to look up. */
export const searchText = (description: string, example: string) =>
  z
    .string()
    .refine((value) => value !== '', 'Must not be empty.')
    .refine((value) => value === '' || codePoints(value) >= MIN_QUERY_CHARS, `At least ${MIN_QUERY_CHARS} characters: the search index looks up text by its runs of ${MIN_QUERY_CHARS}.`)
    .refine((value) => codePoints(value) <= MAX_QUERY_CHARS, `At most ${MAX_QUERY_CHARS} characters.`)
    .refine((value) => !holdsNul(value), nulRefused)
    .refine(isWellFormed, 'Must not contain a lone surrogate (half of a character).')
    .describe(description)
    .meta({ minLength: MIN_QUERY_CHARS, maxLength: MAX_QUERY_CHARS, example });

/** `true`/`false` in a query string; a JSON boolean from MCP passes as it is. */
export const flag = (description: string) =>
  z
    .preprocess((value) => (value === 'true' ? true : value === 'false' ? false : value), z.boolean())
    .optional()
    .describe(description);

const matchSchema = z
  .object({
    field: z.enum(['title', 'body']).describe('Where the match is.'),
    offset: z.number().int().describe('Where it starts in that field, in characters (Unicode code points), as get_article windows count them.'),
    text: z.string().describe('The field’s exact text there (paste it into a find).'),
    before: z.string().describe(`Up to ${CONTEXT_CHARS} characters before it.`),
    after: z.string().describe(`Up to ${CONTEXT_CHARS} characters after it.`),
  })
  .meta({ id: 'SearchMatch' });

const searchResultSchema = z
  .object({
    article_id: z.number().int(),
    title: z.string().nullable(),
    url: z.string().nullable(),
    match_count: z.number().int().describe('Matches in the title and body together.'),
    matches: z.array(matchSchema).describe(`The first ${LISTED_MATCHES} matches, the title’s first.`),
  })
  .meta({
    id: 'SearchResult',
    example: {
      article_id: 42,
      title: 'Winter tyres: when to change',
      url: 'https://example.com/winter-tyres',
      match_count: 2,
      matches: [{ field: 'body', offset: 318, text: '555-0100', before: 'Call us on ', after: ' for an appointment.' }],
    },
  });

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export const searchArticles = defineOperation({
  name: 'searchArticles',
  summary: 'Search the articles of a website',
  description: `Finds the articles of one website whose title or HTML body (as GET returns it) holds \`q\` literally: case-insensitive unless \`match_case=true\`. Each result gives the match count and the first ${LISTED_MATCHES} matches with their offset (code points) and about ${CONTEXT_CHARS} characters of context. Most matches first, then newest \`published_at\`, then id descending. \`q\`: ${MIN_QUERY_CHARS} to ${MAX_QUERY_CHARS} characters.`,
  rest: { method: 'GET', path: '/sites/{id}/search', pathId: 'site_id' },
  tool: {
    name: 'search_articles',
    title: 'Search a website’s articles',
    description: `Finds articles of a site whose title or HTML body holds q literally (${MIN_QUERY_CHARS}-${MAX_QUERY_CHARS} characters; case-insensitive unless match_case). Each result: match_count and the first ${LISTED_MATCHES} matches (field, offset, exact text, context). Most matches first. Paged: page, per_page (max 100); meta.last_page. Paste a match's text into find. A too short q gives validation_failed.`,
    annotations: readOnly,
  },
  input: z.object({
    site_id: siteId,
    q: searchText('The text to find, literally: 3 to 500 characters.', 'Call us on'),
    match_case: flag('true: match upper and lower case exactly.'),
    ...pageParams,
  }),
  output: pageOf(searchResultSchema).describe('One page of the articles that hold the text, most matches first.'),
  errors: ['not_found', 'validation_failed', 'rate_limited'],
  scope: 'read',
  handler: async ({ site_id, q, match_case, page, per_page }, { actor, services }) => {
    const found = await services.search.search(actor, site_id, { q, match_case: match_case ?? false, page, per_page });
    return {
      body: {
        data: found.data.map(({ id, title, url, count, matches }) => ({ article_id: id, title, url, match_count: count, matches })),
        meta: found.meta,
      },
    };
  },
});

const replacedSchema = z
  .object({
    article_id: z.number().int(),
    occurrences: z.number().int().describe('Occurrences replaced (the dry run: that would be).'),
    etag: z.string().optional().describe('The article’s new ETag (not in a dry run).'),
    matches: z.array(matchSchema).optional().describe('The dry run: the first occurrences with their context.'),
  })
  .meta({ id: 'ReplacedArticle' });

const replaceOutput = z
  .object({
    data: z.array(replacedSchema),
    meta: z.object({
      articles: z.number().int().describe('Articles changed (or that would be).'),
      occurrences: z.number().int().describe('Occurrences replaced in all of them.'),
      dry_run: z.boolean().optional().describe('Present and true when nothing was saved because of dry_run.'),
    }),
  })
  .meta({
    id: 'SiteReplace',
    description: 'The articles changed, each with its occurrences and new ETag (the dry run: the occurrences with context).',
    example: { data: [{ article_id: 42, occurrences: 2, etag: '"a42-v4"' }], meta: { articles: 1, occurrences: 2 } },
  });

const write = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

export const replaceInSite = defineOperation({
  name: 'replaceInSite',
  summary: 'Replace a text in every article of a website',
  description: `Replaces every occurrence of \`find\` (literal, case-insensitive unless \`match_case\`, matched as searchArticles matches it) in the HTML bodies of the website's articles; titles are left alone. All or nothing, in one transaction: an edit that would remove or rewrite a protected link refuses the whole request (422 \`protected_links_violation\`, \`articles\` lists each article with its \`protected_links\`). Each changed article gets a revision (with \`reason\`) and uses one edit of the daily allowance (429 \`edit_limit_exceeded\` when the request would pass it). At most ${MAX_REPLACE_ARTICLES} articles per request: narrow with \`article_ids\`. Accepts Idempotency-Key and ?dry_run=true (the occurrences with context, nothing saved).`,
  rest: { method: 'POST', path: '/sites/{id}/replace', pathId: 'site_id', queryFields: ['dry_run'] },
  tool: {
    name: 'replace_in_site',
    title: 'Replace text across a website',
    description: `Replaces find by replace in every article body of a site (not titles; case-insensitive unless match_case), all or nothing: a revision and one of the 200 daily edits per changed article. Try dry_run: true first. protected_links_violation lists the articles: leave them out with article_ids. Over ${MAX_REPLACE_ARTICLES} articles, or an answer too large: validation_failed says how many article_ids to send at a time.`,
    annotations: write,
  },
  input: z.object({
    site_id: siteId,
    find: searchText('The text to replace, literally: 3 to 500 characters.', '555-0100'),
    replace: z
      .string()
      .refine((value) => !holdsNul(value), nulRefused)
      .describe('What replaces it (may be empty).')
      .meta({ example: '555-0199' }),
    match_case: z.boolean().optional().describe('true: match upper and lower case exactly.'),
    article_ids: z.array(articleId).min(1).max(MAX_REPLACE_ARTICLES).optional().describe(`Only these articles of the site (at most ${MAX_REPLACE_ARTICLES}).`),
    reason: reason.optional(),
    dry_run: flag('true: check everything and answer the occurrences with their context, without saving.'),
  }),
  output: replaceOutput,
  errors: [...writeErrors],
  scope: 'write',
  handler: async ({ site_id, dry_run, ...input }, ctx) => {
    const dry = dry_run === true;
    const result = await ctx.services.siteReplace.replace(ctx.actor, site_id, { ...input, match_case: input.match_case ?? false }, {
      dryRun: dry,
      idempotencyKey: ctx.preconditions.idempotencyKey,
      // An MCP result carries this JSON twice (structuredContent and its text), both within the bound.
      answerChars: ctx.resultChars === undefined ? undefined : Math.floor(ctx.resultChars / 2),
    });
    return { body: { data: result.data, meta: result.meta }, allowance: result.allowance };
  },
});

export const siteTextOperations: readonly Operation[] = [searchArticles, replaceInSite];
