import { validationFailed } from './errors.js';

/**
 * The rules of an article's text fields, one set for every channel: the API schemas (REST, OpenAPI
 * and MCP), the importer and the UI editor show them, and the write service enforces them.
 */

/** The longest each text field may be, in Unicode code points (decisions.md, "Limits"). */
export const ARTICLE_TEXT_LIMITS = { title: 255, meta_description: 500, reason: 2000 } as const;

export type LimitedField = keyof typeof ARTICLE_TEXT_LIMITS;

/** Length in Unicode code points, as every limit of the interface counts. */
export const codePoints = (text: string): number => {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
};

export const tooLong = (limit: number): string => `At most ${limit} characters.`;

/**
 * An article's title holds something to read: empty or white space only, it is refused on every
 * channel (PUT and PATCH, MCP, the UI editor, import). Stored as given: the rule refuses, it never trims.
 */
export const blankTitle = 'Must not be empty or only white space.';

export const isBlankTitle = (title: string): boolean => title.trim() === '';

/** What is wrong with the given fields, by field name (empty when nothing is); absent fields are not checked. */
export function articleFieldProblems(fields: Partial<Record<LimitedField, string | null | undefined>>): Record<string, string[]> {
  const problems: Record<string, string[]> = {};
  if (typeof fields.title === 'string' && isBlankTitle(fields.title)) problems.title = [blankTitle];
  for (const name of Object.keys(ARTICLE_TEXT_LIMITS) as LimitedField[]) {
    const value = fields[name];
    if (typeof value === 'string' && codePoints(value) > ARTICLE_TEXT_LIMITS[name]) (problems[name] ??= []).push(tooLong(ARTICLE_TEXT_LIMITS[name]));
  }
  return problems;
}

/** Refuses fields that break a rule as a 422 `validation_failed` naming each; absent ones change nothing. */
export function checkArticleFields(fields: Partial<Record<LimitedField, string | null | undefined>>): void {
  const problems = articleFieldProblems(fields);
  if (Object.keys(problems).length > 0) throw validationFailed(problems);
}
