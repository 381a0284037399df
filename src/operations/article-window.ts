/**
 * MCP get_article: the article with one window of its body, so that no result is larger than
 * an assistant accepts (MCP_RESULT_MAX_CHARS). REST getArticle is unchanged. A body that does
 * not fit whole comes with an outline of its sections to page by, on the first window only.
 *
 * Such a result is sent once: the window and the outline travel in structuredContent, and the
 * text form of the result (`windowTextOf`) names where they are instead of repeating them.
 */
import { z } from 'zod';
import type { BodyWindow } from '../core/body-window.js';
import { validationFailed } from '../core/errors.js';
import type { Utf8Text } from '../core/text-parts.js';
import { type ArticleWithBody, withBody } from '../services/articles.js';
import { codePointsAtMost } from '../services/html-tasks.js';
import { getArticle, getArticleToolPart } from './read.js';
import { articleId, articleWithBodySchema } from './schemas.js';
import { defineTool, type OperationContext, type ToolDefinition } from './types.js';

/** Characters of a whole tool result (structuredContent's JSON and its text) when no bound is given. */
export const DEFAULT_RESULT_CHARS = 40_000;

/** What the text form says in place of the window and of the outline. */
const elsewhere = {
  body: (length: number) => `(${length} characters of the body: structuredContent.data.body)`,
  outline: (entries: number) => `(${entries} headings: structuredContent.meta.outline)`,
};
/** Room for both notes, whatever their numbers. */
const ELSEWHERE_ROOM = elsewhere.body(10 ** 9).length + elsewhere.outline(10 ** 9).length + 2 * ',"outline":""'.length;

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
      .describe('With the first window of a body that is not all here (or outline: true): its headings with their sections (the deepest levels left out if there are too many).'),
    protected_links_total: z
      .number()
      .int()
      .optional()
      .describe('When data.protected_links does not list every protected link (they come with the first window, as far as they fit): how many the body has.'),
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

/** What of the body a window is asked for: where, how much, and whether the outline comes with it. */
export interface WindowAsk {
  offset: number;
  length: number | undefined;
  /** Undefined: with a window that starts at 0 (the first one), not with the others. */
  outline: boolean | undefined;
}

/**
 * The article with the window of its body that `ask` describes, and that fits, with everything
 * else, in a result of `budget` characters: structuredContent's JSON and the text form together,
 * which repeats all but the window and the outline. The article's map comes with the first window
 * (or when asked for): protected links take at most a third of the result (a sixth in each form)
 * and the outline half of what is left. The body window gets the rest. The
 * window and the outline are cut by the HTML pool (`HtmlPool.bodyWindow`): in a thread for a large body.
 */
export async function windowedArticle(
  ctx: OperationContext,
  article: ArticleWithBody<string | Uint8Array | Utf8Text>,
  ask: WindowAsk,
  budget: number,
): Promise<WindowedArticle> {
  // The article's map (its outline and protected links) comes with the first window, or when asked for.
  const withMap = ask.outline ?? ask.offset === 0;
  const linkBudget = withMap ? budget / 6 : 0;
  const links = jsonLength(article.protected_links) <= linkBudget ? article.protected_links : fitting(article.protected_links, linkBudget);
  const linkCount = links.length < article.protected_links.length ? { protected_links_total: article.protected_links.length } : {};
  // Room for the window: everything else, twice (both forms), with numbers as long as the meta's can be.
  const longest = codePointsAtMost(article.body);
  const placeholder: BodyWindow = { text: '', offset: longest, length: longest, total_length: longest, next_offset: longest };
  const frame: WindowedArticle = { data: withBody(article, '', links), meta: Object.assign(metaOf(placeholder), linkCount) };
  const room = budget - 2 * jsonLength(frame) - ELSEWHERE_ROOM;
  const answer = await ctx.services.htmlPool.bodyWindow(ctx.actor.accountId, article.body, {
    offset: ask.offset,
    length: ask.length,
    budget: room,
    outlineBudget: withMap ? room / 2 : 0,
  });
  if (!answer.ok) throw validationFailed({ body_offset: [`Past the end of the body, which has ${answer.total} characters.`] });
  const { window, outline } = answer;
  return { data: withBody(article, window.text, links), meta: Object.assign(metaOf(window), outline ? { outline } : {}, linkCount) };
}

/**
 * The text form of a result that holds a window of a body (get_article, update_article): the same
 * JSON, with notes in place of the window and the outline, which structuredContent alone carries.
 * Null for any other result.
 */
export function windowTextOf(structured: Record<string, unknown>): string | null {
  const { data, meta } = structured as { data?: { body?: unknown }; meta?: { body_offset?: unknown; body_length?: unknown; outline?: unknown } };
  if (typeof data?.body !== 'string' || typeof meta?.body_offset !== 'number' || typeof meta.body_length !== 'number') return null;
  const outline = Array.isArray(meta.outline) ? { outline: elsewhere.outline(meta.outline.length) } : {};
  return JSON.stringify({
    ...structured,
    data: { ...data, body: elsewhere.body(meta.body_length) },
    meta: { ...meta, ...outline },
  });
}

export const getArticleTool = defineTool({
  ...getArticleToolPart,
  input: z.strictObject({
    article_id: articleId,
    body_offset: offsetField('Where the window starts, in code points; default 0.').optional(),
    body_length: z.number().int().min(1).optional().describe('At most this many code points; default: as many as fit.'),
    outline: z.boolean().optional().describe('true: the outline and protected links with any window (default: the first only).'),
  }),
  output: windowedArticleSchema,
  scope: getArticle.scope,
  operation: getArticle.name,
  run: async ({ article_id, body_offset = 0, body_length, outline }, ctx) => {
    const { article, etag } = await ctx.services.articles.getAsUtf8(ctx.actor, article_id);
    const ask = { offset: body_offset, length: body_length, outline };
    return { body: await windowedArticle(ctx, article, ask, ctx.resultChars ?? DEFAULT_RESULT_CHARS), etag };
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
      // The write's meta is in both forms of the result.
      const budget = (ctx.resultChars ?? DEFAULT_RESULT_CHARS) - 2 * jsonLength(meta);
      const windowed = await windowedArticle(ctx, data, { offset: 0, length: undefined, outline: undefined }, budget);
      return { ...result, body: { data: windowed.data, meta: { ...meta, ...windowed.meta } } };
    },
  };
}
