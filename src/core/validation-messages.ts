import type { z } from 'zod';

const nouns: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
};
const noun = (expected: string) => nouns[expected] ?? `a value of type ${expected}`;
const countOf = (n: number | bigint, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

const formats: Record<string, string> = {
  url: 'Must be an absolute URL.',
  email: 'Must be an e-mail address.',
  base64: 'Must be base64 (A–Z, a–z, 0–9, +, /, padded with =).',
  datetime: 'Must be an RFC 3339 UTC date-time, such as 2026-10-01T09:00:00Z.',
  date: 'Must be a date YYYY-MM-DD.',
};

/**
 * Every zod issue in the catalogue's voice (decisions.md), for REST and MCP alike: zod's own
 * wording ("Invalid input: expected number, received NaN") never reaches a user. A schema's own
 * message (`error`, `refine`) still wins; this map words the rest.
 */
export function validationMessage(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `Required; give ${noun(issue.expected)}.`;
      return `Must be ${noun(issue.expected)}.`;
    case 'too_small': {
      const { minimum: min, inclusive } = issue;
      if (issue.origin === 'string') return min === 1 ? 'Must not be empty.' : `At least ${countOf(min, 'character', 'characters')}.`;
      if (issue.origin === 'array' || issue.origin === 'set') return `At least ${countOf(min, 'item', 'items')}.`;
      return inclusive === false ? `Must be more than ${min}.` : `Must be ${min} or more.`;
    }
    case 'too_big': {
      const { maximum: max, inclusive } = issue;
      if (issue.origin === 'string') return `At most ${countOf(max, 'character', 'characters')}.`;
      if (issue.origin === 'array' || issue.origin === 'set') return `At most ${countOf(max, 'item', 'items')}.`;
      return inclusive === false ? `Must be less than ${max}.` : `Must be ${max} or less.`;
    }
    case 'invalid_format':
      return formats[issue.format] ?? 'Not in the accepted format.';
    case 'not_multiple_of':
      return `Must be a multiple of ${issue.divisor}.`;
    case 'unrecognized_keys':
      return `Not accepted here: ${issue.keys.join(', ')}.`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `Must be ${JSON.stringify(issue.values[0])}.`
        : `Must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}.`;
    case 'invalid_union':
      return 'Matches none of the accepted forms.';
    case 'invalid_key':
      return 'Has a key that is not accepted.';
    case 'invalid_element':
      return 'Has an element that is not accepted.';
    default:
      return 'This value is not accepted.';
  }
}
