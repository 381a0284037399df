/**
 * No tool result is larger than MCP_RESULT_MAX_CHARS characters of JSON, counting both forms
 * of a success (structuredContent and its text) and the one text of an error.
 * get_article and update_article window the body themselves (operations/article-window.ts);
 * this is the check every result passes, and the cut an oversized error gets.
 */
import { AppError, type ErrorBody, validationFailed } from '../core/errors.js';

const jsonLength = (value: unknown): number => JSON.stringify(value).length;

/**
 * Throws when a success result does not fit in `maxChars` characters: `structured`'s JSON
 * (`length` characters) and `otherForm` more, a number of characters or the same JSON again. A list page names the
 * `per_page` that would fit, anything else is refused as too large.
 */
export function checkResultSize(structured: Record<string, unknown>, length: number, maxChars: number, otherForm: number | 'same'): void {
  if (otherForm !== 'same') {
    if (length + otherForm <= maxChars) return;
    throw new AppError('validation_failed', `This result is ${length + otherForm} characters, more than one result may hold (${maxChars}).`);
  }
  const chars = Math.floor(maxChars / 2);
  if (length <= chars) return;
  const { data } = structured;
  if (Array.isArray(data)) {
    let used = length - jsonLength(data) + 2;
    let fit = 0;
    for (const item of data) {
      used += jsonLength(item) + 1;
      if (used > chars) break;
      fit += 1;
    }
    throw validationFailed({
      per_page: [
        fit > 0
          ? `This page is ${length} characters of JSON, more than one result may hold (${chars}); ask for per_page=${fit} or fewer.`
          : `One item of this page is larger than a result may hold (${chars} characters of JSON); read it over the REST API.`,
      ],
    });
  }
  throw new AppError('validation_failed', `This result is ${length} characters of JSON, more than one result may hold (${chars}).`);
}

/**
 * An error body within `chars` characters of JSON: the hints of the last failures go first,
 * then the lists are cut, saying so in the message.
 */
export function boundedError(body: ErrorBody, chars: number): ErrorBody {
  if (jsonLength(body) <= chars) return body;
  const failures = body.failures?.map((failure) => ({ ...failure }));
  const links = body.protected_links?.slice();
  const bounded: ErrorBody = { ...body, ...(failures ? { failures } : {}), ...(links ? { protected_links: links } : {}) };
  for (let i = (failures?.length ?? 0) - 1; i >= 0 && jsonLength(bounded) > chars; i--) {
    const failure = failures?.[i];
    if (failure) {
      delete failure.near_match;
      delete failure.occurrences;
    }
  }
  for (const list of ['failures', 'protected_links'] as const) {
    const items = bounded[list];
    if (!items || jsonLength(bounded) <= chars) continue;
    const total = items.length;
    while (items.length > 1 && jsonLength(bounded) > chars - 80) items.pop();
    bounded.message += ` (${list}: the first ${items.length} of ${total})`;
  }
  return bounded;
}
