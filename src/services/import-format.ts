import { z } from 'zod';
import { ARTICLE_TEXT_LIMITS, blankTitle, codePoints, isBlankTitle, tooLong } from '../core/article-rules.js';
import { holdsNul, nulRefused } from '../core/errors.js';
import { anchorTypes, articleStatuses, backlinkCategories, backlinkStatuses, singleLine } from '../core/values.js';
import { keyPrefixLength } from '../db/import-keys.js';
import { validationMessage } from '../core/validation-messages.js';

/**
 * The import file (docs/operations.md, "Import"): its shape, and the keys by which its rows are
 * matched with the stored ones. Keys are required: a site by its owner's account and
 * `website_url`, an article by its site and `url`, a backlink by its site, `source_url` and
 * `target_url` (decisions.md, "Import").
 */

const timestamp = z.iso.datetime({ offset: false, precision: 0 });
// Refused with its path rather than failing on save.
const text = z.string().max(100_000).refine((value) => !holdsNul(value), nulRefused);
/** Links the UI and the API hand out: absolute http(s) only, as the API takes (no `javascript:`, `data:` …). */
const httpUrl = text.refine((value) => {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}, 'Must be an absolute http or https URL.');
/** A site's own address is shown and matched as written; only its scheme is checked. */
const httpAddress = text.refine((value) => /^https?:\/\//i.test(value), 'Must start with http:// or https://.');

export const importArticle = z.strictObject({
  // Absent or null: an article without a title, as the content pipeline may send one.
  title: text
    .refine((v) => codePoints(v) <= ARTICLE_TEXT_LIMITS.title, tooLong(ARTICLE_TEXT_LIMITS.title))
    .refine((v) => !isBlankTitle(v), blankTitle)
    .nullable()
    .optional(),
  url: httpUrl,
  status: z.enum(articleStatuses),
  published_at: timestamp.nullable().optional(),
  target_keyword: text.nullable().optional(),
  meta_description: text.refine((v) => codePoints(v) <= ARTICLE_TEXT_LIMITS.meta_description, tooLong(ARTICLE_TEXT_LIMITS.meta_description)).nullable().optional(),
  featured_image_url: httpUrl.nullable().optional(),
  body: z.string().max(5_000_000),
});

export const importBacklink = z.strictObject({
  acquired_at: timestamp.nullable().optional(),
  source_domain: text.nullable().optional(),
  source_url: httpUrl,
  target_url: httpUrl,
  anchor_text: text.nullable().optional(),
  anchor_type: z.enum(anchorTypes).nullable().optional(),
  status: z.enum(backlinkStatuses).nullable().optional(),
  category: z.enum(backlinkCategories),
});

export const importSite = z.strictObject({
  owner: z.email(),
  name: text.transform(singleLine).nullable().optional(),
  website_url: httpAddress,
  language: text.nullable().optional(),
  country: text.nullable().optional(),
  geographic_scope: text.nullable().optional(),
  industry: text.nullable().optional(),
  articles: z.array(importArticle).default([]),
  backlinks: z.array(importBacklink).default([]),
});

/** The file's shape. A streamed import checks it piece by piece: each member and row as it arrives, each object's missing and unknown members when it ends. */
export const importFileSchema = z.strictObject({ sites: z.array(importSite) });
export type ImportInput = z.input<typeof importFileSchema>;

export type ImportArticle = z.output<typeof importArticle>;
export type ImportBacklink = z.output<typeof importBacklink>;
export type SiteFields = Omit<z.output<typeof importSite>, 'articles' | 'backlinks'>;
export type JsonPath = (string | number)[];

/** A problem in an import file, at a JSON path such as `$.sites[0].articles[3].status`. */
export interface ImportProblem {
  path: string;
  message: string;
}

/** An import refused: its problems (at most the cap asked for) and how many more there were. */
export class ImportError extends Error {
  readonly path: string;

  constructor(
    readonly problems: ImportProblem[],
    readonly more = 0,
  ) {
    const first = problems[0]!;
    super(`${first.path}: ${first.message}`);
    this.path = first.path;
  }
}

export const jsonPath = (segments: readonly PropertyKey[]): string =>
  segments.reduce<string>((path, s) => (typeof s === 'number' ? `${path}[${s}]` : `${path}.${String(s)}`), '$');

/** `value` as `schema` gives it, or every problem with it, below `at`, in the catalogue's voice. */
export function checked<T extends z.ZodType>(schema: T, value: unknown, at: JsonPath): { value: z.output<T> } | { problems: ImportProblem[] } {
  const parsed = schema.safeParse(value, { error: validationMessage, reportInput: true });
  if (parsed.success) return { value: parsed.data };
  return {
    problems: parsed.error.issues.map((issue) => {
      const member = issue.path.at(-1) ?? at.at(-1);
      const key = issue.code === 'invalid_type' && (issue.input === undefined || issue.input === null) && typeof member === 'string' ? keyMembers[member] : undefined;
      return { path: jsonPath([...at, ...issue.path]), message: key ?? issue.message };
    }),
  };
}

/** What a missing key member is told. */
const keyMembers: Record<string, string> = {
  website_url: 'Required: a site is matched by its owner and website_url.',
  url: 'Required: an article is matched by its url.',
  source_url: 'Required: a backlink is matched by its source_url and target_url.',
  target_url: 'Required: a backlink is matched by its source_url and target_url.',
};

/** The members of a site a row of the file may leave out: absent, the stored value stays. */
export const siteColumns = ['name', 'language', 'country', 'geographic_scope', 'industry'] as const;
export const articleColumns = ['title', 'status', 'published_at', 'target_keyword', 'meta_description', 'featured_image_url'] as const;
export const backlinkColumns = ['acquired_at', 'source_domain', 'anchor_text', 'anchor_type', 'status', 'category'] as const;

/** The first code points of a URL, as the key indexes hold them (migration 020). */
export const keyPrefix = (url: string): string => {
  let end = 0;
  let points = 0;
  for (const point of url) {
    if (points === keyPrefixLength) break;
    end += point.length;
    points += 1;
  }
  return url.slice(0, end);
};

export const articleKey = (article: { url: string }): string => article.url;
export const backlinkKey = (backlink: { source_url: string; target_url: string }): string => JSON.stringify([backlink.source_url, backlink.target_url]);

/** The key of a row as given, valid or not, when its key members are strings. */
export function keyOf(list: 'articles' | 'backlinks', value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const row = value as Record<string, unknown>;
  if (list === 'articles') return typeof row.url === 'string' ? articleKey({ url: row.url }) : undefined;
  return typeof row.source_url === 'string' && typeof row.target_url === 'string' ? backlinkKey({ source_url: row.source_url, target_url: row.target_url }) : undefined;
}
