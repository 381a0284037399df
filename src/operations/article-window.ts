/**
 * MCP get_article: the article with one window of its body, so that no result is larger than
 * an assistant accepts (MCP_RESULT_MAX_CHARS). REST getArticle is unchanged. A body that does
 * not fit whole comes with an outline of its sections to page by.
 */
import { z } from 'zod';
import type { BodyWindow } from '../core/body-window.js';
import { validationFailed } from '../core/errors.js';
import type { Utf8Text } from '../core/text-parts.js';
import { type ArticleWithBody, withBody } from '../services/articles.js';
import { codePointsAtMost } from '../services/html-pool.js';
import { getArticle, getArticleToolPart } from './read.js';
import { articleId, articleWithBodySchema } from './schemas.js';
import { defineTool, type OperationContext, type ToolDefinition } from './types.js';

/** Characters of JSON one copy of a tool result may take when no bound is given (half of 40,000). */
export const DEFAULT_RESULT_CHARS = 20_000;

const offsetField = (description: string) => z.number().int().min(0).describe(description);

const outlineEntrySchema = z.object({
  level: z.number().int().describe('2 for <h2> … 6 for <h6>.'),
  text: z.string().describe('The heading’s text (at most 120 characters).'),
  offset: z.number().int().describe('Where the heading starts in the body: use as body_offset.'),
  length: z.number().int().describe('Its section’s length, up to the next heading of the same or a higher level: use as body_length.'),
});

export const bodyWindowMetaSchema = z
  .object({
    body_offset: offsetField('Where this window of the body starts, in characters (Unicode code points).'),
    body_length: offsetField('Characters of the body in this window.'),
    body_total_length: offsetField('Characters in the whole body.'),
    next_offset: offsetField('body_offset of the next window; null when this window reaches the end.').nullable(),
    outline: z
      .array(outlineEntrySchema)
      .optional()
      .describe('When the body is not all here: its headings with their sections (the deepest levels left out if there are too many).'),
    protected_links_total: z
      .number()
      .int()
      .optional()
      .describe('When not every protected link fits in data.protected_links: how many the body has (find the others in the body windows).'),
  })
  .describe('Where data.body lies in the whole body.');

const windowedArticleSchema = z.object({
  data: articleWithBodySchema.describe('The article; body holds the window of the body that meta describes.'),
  meta: bodyWindowMetaSchema,
});
type WindowedArticle = z.input<typeof windowedArticleSchema>;
type WindowMeta = WindowedArticle['meta'];

const jsonLength = (value: unknown): number => JSON.stringify(value).length;

/** The longest prefix of `items` whose JSON fits in `budget` characters. */
function fitting<T>(items: readonly T[], budget: number): T[] {
  const kept: T[] = [];
  let used = 2;
  for (const item of items) {
    used += jsonLength(item) + 1;
    if (used > budget) break;
    kept.push(item);
  }
  return kept;
}

const metaOf = (window: BodyWindow): WindowMeta => ({
  body_offset: window.offset,
  body_length: window.length,
  body_total_length: window.total_length,
  next_offset: window.next_offset,
});

/**
 * The article with the window of its body from `offset` (at most `length` characters) that
 * fits, with everything else, in `budget` characters of JSON. Protected links take at most a
 * third of it and the outline a quarter; the body window gets the rest. The window and the
 * outline are cut by the HTML pool (`HtmlPool.bodyWindow`): in a thread for a large body.
 */
export async function windowedArticle(
  ctx: OperationContext,
  article: ArticleWithBody<string | Uint8Array | Utf8Text>,
  offset: number,
  length: number | undefined,
  budget: number,
): Promise<WindowedArticle> {
  const links = jsonLength(article.protected_links) <= budget / 3 ? article.protected_links : fitting(article.protected_links, budget / 3);
  const linkCount = links.length < article.protected_links.length ? { protected_links_total: article.protected_links.length } : {};
  // Room for the window: everything else, with numbers as long as the meta's can be.
  const longest = codePointsAtMost(article.body);
  const placeholder: BodyWindow = { text: '', offset: longest, length: longest, total_length: longest, next_offset: longest };
  const frame: WindowedArticle = { data: withBody(article, '', links), meta: Object.assign(metaOf(placeholder), linkCount) };
  const answer = await ctx.services.htmlPool.bodyWindow(ctx.actor.accountId, article.body, {
    offset,
    length,
    budget: budget - jsonLength(frame),
    outlineBudget: (budget - jsonLength(links)) / 2,
  });
  if (!answer.ok) throw validationFailed({ body_offset: [`Past the end of the body, which has ${answer.total} characters.`] });
  const { window, outline } = answer;
  return { data: withBody(article, window.text, links), meta: Object.assign(metaOf(window), outline ? { outline } : {}, linkCount) };
}

export const getArticleTool = defineTool({
  ...getArticleToolPart,
  input: z.strictObject({
    article_id: articleId,
    body_offset: offsetField('Where to start reading the body, in characters (Unicode code points); default 0.').optional(),
    body_length: z.number().int().min(1).optional().describe('At most this many characters of the body; default: as many as fit.'),
  }),
  output: windowedArticleSchema,
  scope: getArticle.scope,
  operation: getArticle.name,
  run: async ({ article_id, body_offset = 0, body_length }, ctx) => {
    const { article, etag } = await ctx.services.articles.getAsUtf8(ctx.actor, article_id);
    return { body: await windowedArticle(ctx, article, body_offset, body_length, ctx.resultChars ?? DEFAULT_RESULT_CHARS), etag };
  },
});

const writeResultSchema = z.object({ data: articleWithBodySchema, meta: z.looseObject({}) });

/**
 * An MCP write tool whose result carries the first window of the body, as get_article would,
 * instead of the whole body: `output` is the write's result schema, its meta gains the window's.
 */
export function withBodyWindow(
  tool: ToolDefinition,
  output: z.ZodObject<{ data: typeof articleWithBodySchema; meta: z.ZodObject }>,
): ToolDefinition {
  return {
    ...tool,
    output: output.extend({ meta: output.shape.meta.extend(bodyWindowMetaSchema.shape) }),
    run: async (input, ctx) => {
      const result = await tool.run(input, ctx);
      const { data, meta } = writeResultSchema.parse(result.body);
      const windowed = await windowedArticle(ctx, data, 0, undefined, (ctx.resultChars ?? DEFAULT_RESULT_CHARS) - jsonLength(meta));
      return { ...result, body: { data: windowed.data, meta: { ...meta, ...windowed.meta } } };
    },
  };
}
