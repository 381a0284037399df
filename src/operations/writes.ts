import { z } from 'zod';
import { ARTICLE_TEXT_LIMITS, blankTitle, codePoints, isBlankTitle, tooLong } from '../core/article-rules.js';
import { holdsNul, nulRefused, validationFailed } from '../core/errors.js';
import type { WriteResult } from '../services/article-states.js';
import { toArticle } from '../services/articles.js';
import { withBodyWindow } from './article-window.js';
import { articleId, articleSchema, articleWithBodySchema, restArticle, single } from './schemas.js';
import { runOperation } from './run.js';
import { defineOperation, defineTool, type Operation, type OperationContext, type OperationResult } from './types.js';

/** Length limits count Unicode code points, not UTF-16 units. */
const text = (max: number, description: string) =>
  z
    .string()
    .refine((value) => codePoints(value) <= max, tooLong(max))
    .refine((value) => !holdsNul(value), nulRefused)
    .describe(description)
    .meta({ maxLength: max });

const title = text(ARTICLE_TEXT_LIMITS.title, 'New title; not blank.')
  .refine((value) => !isBlankTitle(value), blankTitle)
  .meta({ minLength: 1, pattern: '\\S' });
export const reason = text(ARTICLE_TEXT_LIMITS.reason, 'Why the change is made, kept with the revision.');
const metaDescription = text(ARTICLE_TEXT_LIMITS.meta_description, 'New meta description.');

// Strict, like every write body: a key the item does not take is refused, not ignored.
const replacement = z
  .strictObject({
    find: z.string().min(1).describe('Exact text of the body as GET returns it (case-sensitive).'),
    replace: z.string().optional().describe('Replacement text; defaults to "".'),
    all: z.boolean().optional().describe('Every occurrence (at least one), not exactly one.'),
  })
  .meta({ id: 'Replacement', example: { find: 'twice a year', replace: 'every six months' } });

const replacements = z
  .array(replacement)
  .max(50)
  .describe('Applied in order; any failure saves nothing.');

const dryRun = z
  .enum(['true', 'false'])
  .optional()
  .describe('true: run every check and return the would-be article without saving.')
  .meta({ example: 'true' });

const writeOutput = z
  .object({
    data: articleWithBodySchema,
    meta: z.object({
      sanitized: z.array(z.string()).describe('What the sanitiser removed from the submitted HTML (may be empty).'),
      dry_run: z.boolean().optional().describe('Present and true when nothing was saved because of dry_run.'),
    }),
  })
  .meta({ id: 'ArticleWrite', description: 'The article as saved (or as it would be, with dry_run), and what the sanitiser removed.' });

/** Both write tools overwrite what was there (the body, the image); revisions keep the old state. */
const write = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

const rules =
  'The body is sanitised (scripts, iframes, event handlers and javascript: links are removed; meta.sanitized lists what was). Every protected link (data-service-protected) must stay exactly as it is, or the edit is refused with protected_links_violation (422) listing them. Each change is stored as a revision; a change that changes nothing saves nothing. Counts against 200 article writes per day per account (edit_limit_exceeded, 429).';

const toWriteBody = (result: WriteResult, dryRun: boolean): OperationResult<z.input<typeof writeOutput>> => ({
  body: { data: restArticle(result.article), meta: { sanitized: result.sanitized, ...(dryRun ? { dry_run: true } : {}) } },
  etag: result.etag,
  allowance: result.allowance,
});

const writeOptions = (ctx: OperationContext, dryRun: string | undefined) => ({
  dryRun: dryRun === 'true',
  ifMatch: ctx.preconditions.ifMatch,
  idempotencyKey: ctx.preconditions.idempotencyKey,
});

export const writeErrors = ['not_found', 'forbidden', 'insufficient_scope', 'precondition_failed', 'payload_too_large', 'unsupported_media_type', 'invalid_json', 'validation_failed', 'protected_links_violation', 'idempotency_key_reused', 'rate_limited', 'edit_limit_exceeded'] as const;

export const updateArticle = defineOperation({
  name: 'updateArticle',
  summary: 'Replace an article’s title and HTML body',
  description: `Replaces the whole HTML body (and optionally the title). ${rules} Accepts If-Match (412 when stale), Idempotency-Key (a retry replays the first response) and ?dry_run=true.`,
  rest: { method: 'PUT', path: '/articles/{id}', pathId: 'article_id', queryFields: ['dry_run'], etag: true, sharedTextFields: ['body'] },
  input: z.object({
    article_id: articleId,
    body: z.string().describe('The new article HTML.'),
    title: title.optional(),
    reason: reason.optional(),
    dry_run: dryRun,
  }),
  output: writeOutput,
  errors: [...writeErrors],
  scope: 'write',
  handler: async ({ article_id, dry_run, ...input }, ctx) =>
    toWriteBody(await ctx.services.articleWrites.replace(ctx.actor, article_id, input, writeOptions(ctx, dry_run)), dry_run === 'true'),
});

export const editArticle = defineOperation({
  name: 'editArticle',
  summary: 'Small edits: title, meta description, find/replace in the body',
  description: `Changes the title and meta description, and applies exact find/replace edits to the body as GET returns it, in order. Each find must match exactly once (or at least once with all: true); otherwise 409 replacement_failed lists every failing item with its match count and how to fix it (near_match: the nearest passage of the body; occurrences: where the several matches are) and nothing is saved. At least one of title, meta_description, replacements is required. ${rules} Accepts If-Match, Idempotency-Key and ?dry_run=true.`,
  rest: { method: 'PATCH', path: '/articles/{id}', pathId: 'article_id', queryFields: ['dry_run'], etag: true },
  input: z.object({
    article_id: articleId,
    title: title.optional(),
    meta_description: metaDescription.optional(),
    replacements: replacements.optional(),
    reason: reason.optional(),
    dry_run: dryRun,
  }),
  output: writeOutput,
  errors: ['replacement_failed', ...writeErrors],
  scope: 'write',
  handler: async ({ article_id, dry_run, ...input }, ctx) => {
    if (input.title === undefined && input.meta_description === undefined && input.replacements === undefined) {
      throw validationFailed({ '(request)': ['Give at least one of title, meta_description, replacements (each alone or together).'] });
    }
    return toWriteBody(await ctx.services.articleWrites.edit(ctx.actor, article_id, input, writeOptions(ctx, dry_run)), dry_run === 'true');
  },
});

const imageUrl = z
  .url({
    protocol: /^https?$/,
    error: (issue) => (issue.code === 'invalid_format' ? 'Only absolute http/https URLs are accepted, such as https://images.example.com/cover.jpg.' : undefined),
  })
  // Stored as sent: no white space or control characters (U+0000 cannot even be stored in PostgreSQL).
  .refine((value) => !/[\u0000-\u0020\u007f]/.test(value), 'Must not contain spaces or control characters.')
  .describe('Absolute http(s) URL of the image; stored, never fetched.')
  .meta({ example: 'https://images.example.com/new-cover.jpg' });

export const replaceFeaturedImage = defineOperation({
  name: 'replaceFeaturedImage',
  summary: 'Replace the featured image',
  description:
    'Sets a new featured image: as JSON with `url`, or as multipart/form-data with exactly one of `image` (a JPEG, PNG, WebP, GIF or AVIF file, recognised by content, at most 10 MiB and 40 megapixels, stored and served by the service) or `url`. Creates a revision. Accepts If-Match and Idempotency-Key.',
  rest: {
    method: 'POST',
    path: '/articles/{id}/featured-image',
    pathId: 'article_id',
    multipart: z.object({
      image: z.string().meta({ format: 'binary' }).optional().describe('The image file.'),
      url: imageUrl.optional(),
      reason: reason.optional(),
    }),
    etag: true,
  },
  // The JSON body: url is required there (multipart fields are validated against `rest.multipart`).
  input: z.object({ article_id: articleId, url: imageUrl, reason: reason.optional() }),
  output: single(articleSchema).describe('The article with its new featured image.'),
  errors: ['unsupported_image', 'image_too_large', ...writeErrors],
  scope: 'write',
  handler: async ({ article_id, ...input }, ctx) => {
    const upload = { ...input, image: ctx.upload };
    const result = await ctx.services.featuredImages.replace(ctx.actor, article_id, upload, writeOptions(ctx, undefined));
    return { body: { data: toArticle(result.article) }, etag: result.etag, allowance: result.allowance };
  },
});

const acceptedEdits =
  'Send either body (the whole new HTML, optionally with title) or any of title, meta_description and replacements (small edits); reason and dry_run go with either.';

/** MCP: one tool for both kinds of edit — a whole body (PUT rules) or small edits (PATCH rules). */
export const updateArticleTool = withBodyWindow(defineTool({
  name: 'update_article',
  title: 'Edit an article',
  description: `Edits an article: body replaces the whole HTML (title optional); or any of title, meta_description, replacements (not with body). Prefer replacements, finds copied from a get_article window: each must match exactly once (all: true: at least once), else replacement_failed lists the failing items and nothing is saved: near_match gives the nearest passage's exact text, to send as find; occurrences show the text around several matches, to lengthen find. The HTML is sanitised (meta.sanitized). Each protected link (data-service-protected) must stay as it is, else protected_links_violation lists them. The result holds the new body's first window. 200 edits a day per account (edit_limit_exceeded). Also not_found, insufficient_scope, validation_failed (fields names the arguments).`,
  annotations: write,
  input: z.strictObject({
    article_id: articleId,
    body: z.string().optional().describe('The complete new article HTML (full replace).'),
    title: title.optional(),
    meta_description: metaDescription.optional(),
    replacements: replacements.optional(),
    reason: reason.optional(),
    dry_run: z.boolean().optional().describe('Check everything, save nothing: the would-be article.'),
  }),
  output: writeOutput,
  scope: 'write',
  operation: 'updateArticle',
  run: ({ body, dry_run, ...rest }, ctx) => {
    const { meta_description, replacements: edits } = rest;
    const dryRun = dry_run === true ? 'true' : undefined;
    if (body === undefined && rest.title === undefined && meta_description === undefined && edits === undefined) {
      throw validationFailed({ '(arguments)': [acceptedEdits] });
    }
    if (body === undefined) return runOperation(editArticle, { ...rest, dry_run: dryRun }, ctx);
    if (meta_description !== undefined || edits !== undefined) {
      throw validationFailed({ body: [`Not with meta_description or replacements. ${acceptedEdits}`] });
    }
    return runOperation(updateArticle, { ...rest, body, dry_run: dryRun }, ctx);
  },
}), writeOutput);

/** MCP: a new featured image from a URL or from base64 bytes. */
export const replaceFeaturedImageTool = defineTool({
  name: 'replace_featured_image',
  title: 'Replace the featured image',
  description:
    'Sets an article’s featured image (a revision): url (http(s), stored, never fetched) or image_base64 with filename (JPEG, PNG, WebP, GIF or AVIF, at most 10 MiB and 40 megapixels). Errors: not_found, insufficient_scope, validation_failed, unsupported_image, image_too_large (names the limit), edit_limit_exceeded.',
  // Sending the same image again changes nothing: uploads are stored under their content hash.
  annotations: { ...write, idempotentHint: true },
  input: z.strictObject({
    article_id: articleId,
    url: imageUrl.optional(),
    image_base64: z.base64().optional().describe('The image file, base64-encoded.'),
    filename: z.string().optional().describe('Its file name (the type is read from the content).'),
    reason: reason.optional(),
  }),
  output: single(articleSchema),
  scope: 'write',
  operation: 'replaceFeaturedImage',
  run: async ({ article_id, url, image_base64, filename, reason: why }, ctx) => {
    if ((url === undefined) === (image_base64 === undefined)) {
      throw validationFailed({ url: ['Send exactly one of url or image_base64.'], image_base64: ['Send exactly one of url or image_base64.'] });
    }
    if (filename !== undefined && image_base64 === undefined) throw validationFailed({ filename: ['Only with image_base64.'] });
    const image = image_base64 === undefined ? undefined : Buffer.from(image_base64, 'base64');
    const result = await ctx.services.featuredImages.replace(ctx.actor, article_id, { url, image, reason: why });
    return { body: { data: toArticle(result.article) }, etag: result.etag, allowance: result.allowance };
  },
});

export const writeOperations: readonly Operation[] = [updateArticle, editArticle, replaceFeaturedImage];
export const writeTools = [updateArticleTool, replaceFeaturedImageTool];
