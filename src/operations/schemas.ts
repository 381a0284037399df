import { z } from 'zod';
import { errorCatalogue } from '../core/errors.js';
import { validationMessage } from '../core/validation-messages.js';
import { dayProblem } from '../core/periods.js';
import type { LargeText } from '../core/text-parts.js';
import { parseDay } from '../core/time.js';
import type { ArticleWithBody } from '../services/articles.js';
import { anchorTypes, articleStatuses, backlinkCategories, backlinkStatuses, protectedLinkTypes } from '../core/values.js';

z.config({ customError: validationMessage });

/** Request-side building blocks, shared by every operation so bounds are stated once. */
/**
 * An integer query or path parameter, written as decimal digits only: no sign, exponent, decimal
 * point, leading zero, white space or hex (`1e3`, `+1`, `01`, `1.0`, ` 1`, `0x10` are refused,
 * not read as numbers). MCP sends JSON integers, which pass as they are. `z.int()` also refuses
 * anything past 2^53 − 1, where digits stop naming one number.
 */
const decimalDigits = /^(0|[1-9][0-9]*)$/;
const integerParam = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (typeof value === 'string' && decimalDigits.test(value) ? Number(value) : value), schema);
/**
 * An integer parameter's own words. A value that is no integer is told how to write one; a value
 * out of range gets `range` where the parameter has one (decisions.md: `per_page` 1 to 100, `page`
 * at least 1), else the shared map's bound. A missing integer is worded by the shared map
 * ("Required; give a number.").
 */
const integerWords = (range: { below?: string; above?: string } = {}) => ({
  error: (issue: { input?: unknown; code?: string }) => {
    if (issue.input === undefined) return undefined;
    if (issue.code === 'too_small') return range.below;
    if (issue.code === 'too_big') return range.above;
    return 'Must be an integer written in decimal digits, such as 2.';
  },
});

const perPageRange = 'Must be from 1 to 100.';

export const pageParams = {
  page: integerParam(z.int(integerWords({ below: 'Must be 1 or more: pages are numbered from 1.' })).min(1).default(1))
    .describe('Page, from 1.')
    .meta({ example: 1 }),
  per_page: integerParam(z.int(integerWords({ below: perPageRange, above: perPageRange })).min(1).max(100).default(25))
    .describe('Items per page.')
    .meta({ example: 25 }),
};

export const day = z
  .string()
  .refine((v) => parseDay(v) !== undefined, { error: (issue) => dayProblem(String(issue.input)) })
  .meta({ format: 'date', example: '2026-10-01' });

export const dateRangeParams = {
  from: day.optional().describe('First day, inclusive (UTC), YYYY-MM-DD.'),
  to: day.optional().describe('Last day, inclusive (UTC), YYYY-MM-DD.'),
};

// Ids are 32-bit integer columns: a larger id names nothing (and PostgreSQL would fail on it).
const maxId = 2_147_483_647;
export const siteId = integerParam(z.int(integerWords()).min(1).max(maxId)).describe('Website id.').meta({ example: 1 });
export const articleId = integerParam(z.int(integerWords()).min(1).max(maxId)).describe('Article id.').meta({ example: 42 });

const timestamp = z
  .string()
  .meta({ format: 'date-time', example: '2026-10-01T09:00:00Z' })
  .describe('RFC 3339 UTC date-time, second precision.');

/** Resources, exactly the fields of the interface. */
export const siteSchema = z
  .object({
    id: z.number().int(),
    name: z.string().nullable(),
    website_url: z.string().nullable(),
    language: z.string().nullable(),
    country: z.string().nullable(),
    geographic_scope: z.string().nullable(),
    industry: z.string().nullable(),
  })
  .meta({
    id: 'Site',
    example: {
      id: 1,
      name: 'Bright Smile Dental',
      website_url: 'https://brightsmile.example',
      language: 'en',
      country: 'US',
      geographic_scope: 'local',
      industry: 'Dental care',
    },
  });

const articleExample = {
  id: 42,
  site_id: 1,
  title: 'How Often Should You Get a Dental Check-Up?',
  url: 'https://brightsmile.example/blog/dental-check-up',
  status: 'published',
  published_at: '2026-10-01T09:00:00Z',
  target_keyword: 'dental check-up',
  word_count: 812,
  featured_image_url: 'https://images.example.com/check-up.jpg',
};

export const articleSchema = z
  .object({
    id: z.number().int(),
    site_id: z.number().int(),
    title: z.string().nullable(),
    url: z.string().nullable(),
    status: z.enum(articleStatuses).nullable(),
    published_at: timestamp.nullable(),
    target_keyword: z.string().nullable(),
    word_count: z.number().int().nullable(),
    featured_image_url: z.string().nullable(),
  })
  .meta({ id: 'Article', example: articleExample });

export const protectedLinkSchema = z
  .object({
    type: z.enum(protectedLinkTypes),
    href: z.string(),
    text: z.string(),
  })
  .meta({ id: 'ProtectedLink', example: { type: 'backlink', href: 'https://partner.example/', text: 'family dentist' } });

/**
 * An article for a REST answer, whose body may be a `SharedText` (a large PUT's, answered as sent)
 * or `TextPieces` (a large body read from PostgreSQL): REST sends it as the JSON string it stands
 * for (json-answer.ts), so the operation's output, as the OpenAPI document, says string. MCP never
 * meets either: its inputs are strings, and get_article reads the body as one (`articles.get`).
 */
export const restArticle = (article: ArticleWithBody<LargeText>): ArticleWithBody => article as ArticleWithBody;

export const articleWithBodySchema = articleSchema
  .extend({
    meta_description: z.string().nullable(),
    body: z.string().describe('The article HTML.'),
    protected_links: z.array(protectedLinkSchema).describe('Inserted links that must not be removed or rewritten.'),
  })
  .meta({
    id: 'ArticleWithBody',
    example: {
      ...articleExample,
      word_count: 12,
      meta_description: 'Twice a year is the rule of thumb.',
      body: '<p>See a <a href="https://partner.example/" data-service-protected="backlink">family dentist</a> twice a year.</p>',
      protected_links: [{ type: 'backlink', href: 'https://partner.example/', text: 'family dentist' }],
    },
  });

export const backlinkSchema = z
  .object({
    id: z.number().int(),
    acquired_at: timestamp.nullable(),
    source_domain: z.string().nullable(),
    source_url: z.string().nullable(),
    target_url: z.string().nullable(),
    anchor_text: z.string().nullable(),
    anchor_type: z.enum(anchorTypes).nullable(),
    status: z.enum(backlinkStatuses).nullable(),
    category: z.enum(backlinkCategories),
  })
  .meta({
    id: 'Backlink',
    example: {
      id: 7,
      acquired_at: '2026-09-14T10:30:00Z',
      source_domain: 'healthdirectory.example',
      source_url: 'https://healthdirectory.example/dentists/springfield',
      target_url: 'https://brightsmile.example/',
      anchor_text: 'Springfield dentist',
      anchor_type: 'partial',
      status: 'live',
      category: 'local',
    },
  });

export const statsSchema = z
  .object({
    site_id: z.number().int(),
    from: z.string().meta({ format: 'date' }),
    to: z.string().meta({ format: 'date' }),
    articles_published: z.number().int(),
    backlinks_acquired: z.number().int(),
    backlinks_industry: z.number().int(),
    backlinks_local: z.number().int(),
  })
  .meta({
    id: 'Stats',
    example: {
      site_id: 1,
      from: '2026-10-01',
      to: '2026-10-31',
      articles_published: 9,
      backlinks_acquired: 31,
      backlinks_industry: 12,
      backlinks_local: 19,
    },
  });

export const pageMetaSchema = z
  .object({
    page: z.number().int(),
    per_page: z.number().int(),
    total: z.number().int(),
    last_page: z.number().int(),
  })
  .meta({ id: 'PageMeta', example: { page: 1, per_page: 25, total: 120, last_page: 5 } });

const nearMatchSchema = z
  .object({
    offset: z.number().int().describe('Where the passage starts in the body the replacement ran on, in characters (Unicode code points).'),
    length: z.number().int().describe('Its length in characters (at most 2,000).'),
    text: z.string().describe('The body’s exact text there: send it as `find`.'),
    equivalent: z.boolean().describe('True: the find itself but for case, white space or entity spelling. False: the most similar passage.'),
  })
  .describe('No match: the nearest near-match in the body (ignoring case, white-space runs and entity spelling, else the most similar passage); absent when nothing is close.');

const occurrenceSchema = z.object({
  offset: z.number().int().describe('Where this occurrence starts, in characters (Unicode code points).'),
  before: z.string().describe('Up to 60 characters of the body before it.'),
  after: z.string().describe('Up to 60 characters of the body after it.'),
});

const replacementFailureSchema = z
  .object({
    index: z.number().int().describe('The failing item of `replacements`, from 0.'),
    matches: z.number().int().describe('How often its `find` occurs in the body as that item met it.'),
    near_match: nearMatchSchema.optional(),
    occurrences: z
      .array(occurrenceSchema)
      .optional()
      .describe('Several matches without `all`: the first five, with their surroundings, to make the find unique.'),
  })
  .meta({
    id: 'ReplacementFailure',
    example: { index: 0, matches: 0, near_match: { offset: 318, length: 24, text: 'Twice a year is the rule', equivalent: false } },
  });

export const errorSchema = z
  .object({
    error: z.enum(Object.keys(errorCatalogue) as [keyof typeof errorCatalogue, ...(keyof typeof errorCatalogue)[]]),
    message: z.string(),
    protected_links: z.array(protectedLinkSchema).optional(),
    limit: z.number().int().optional(),
    fields: z.record(z.string(), z.array(z.string())).optional().describe('validation_failed: messages per field path.'),
    failures: z
      .array(replacementFailureSchema)
      .optional()
      .describe('replacement_failed: every failing replacement with its match count and what to change it to.'),
    articles: z
      .array(z.object({ article_id: z.number().int(), protected_links: z.array(protectedLinkSchema) }))
      .optional()
      .describe('protected_links_violation of a site-wide replace: each refused article with the links its edit would touch.'),
  })
  .meta({ id: 'Error', example: { error: 'not_found', message: 'No article with this id on your account.' } });

export const pageOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), meta: pageMetaSchema });
export const single = <T extends z.ZodType>(item: T) => z.object({ data: item });
