import type { ExplainedFailure } from './replacement.js';

/** The one error catalogue of decisions.md: every error the service answers with is one of these. */
export const errorCatalogue = {
  invalid_json: 400,
  unauthenticated: 401,
  forbidden: 403,
  insufficient_scope: 403,
  not_found: 404,
  replacement_failed: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  protected_links_violation: 422,
  unsupported_image: 422,
  image_too_large: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  edit_limit_exceeded: 429,
  internal_error: 500,
  service_unavailable: 503,
  insufficient_storage: 507,
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

export interface ProtectedLink {
  type: 'backlink' | 'internal';
  href: string;
  text: string;
}

/** Extra members an Error body may carry besides `error` and `message`. */
export interface ErrorDetails {
  protected_links?: ProtectedLink[];
  limit?: number;
  fields?: Record<string, string[]>;
  failures?: ExplainedFailure[];
  /** protected_links_violation of a site-wide replace: each refused article with its links. */
  articles?: { article_id: number; protected_links: ProtectedLink[] }[];
}

export interface ErrorBody extends ErrorDetails {
  error: ErrorCode;
  message: string;
}

/** An error as a value: thrown by services, turned into an Error body by each channel. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails;
  /** For limits: seconds until a retry can succeed (Retry-After over HTTP). */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, retryAfter?: number) {
    super(message);
    this.code = code;
    this.status = errorCatalogue[code];
    this.details = details;
    this.retryAfter = retryAfter;
  }

  /** The error again from its body (a stored idempotent outcome). */
  static fromBody({ error, message, ...details }: ErrorBody): AppError {
    return new AppError(error, message, details);
  }

  toBody(): ErrorBody {
    return { error: this.code, message: this.message, ...this.details };
  }
}

export const notFound = (what: 'site' | 'article'): AppError =>
  new AppError('not_found', `No ${what} with this id on your account.`);

/** Whether a text holds U+0000, which PostgreSQL's text cannot hold: every input refuses it (`nulRefused`). */
export const holdsNul = (value: string): boolean => value.includes('\u0000');
export const nulRefused = 'Must not contain the character U+0000.';

export const validationFailed = (fields: Record<string, string[]>): AppError =>
  new AppError('validation_failed', 'The request is invalid; see fields.', { fields });

/** A zod issue as much as `issueFields` needs of it (zod's own, or as fastify-type-provider-zod passes it on). */
export interface FieldIssue {
  path: readonly PropertyKey[];
  message: string;
  code?: string;
  keys?: readonly string[];
}

/** How a channel words what is not about one field it takes. */
export interface FieldWords {
  /** The name of a problem of the input as a whole, one no field can clash with: `(request)`. */
  whole: string;
  /** The message for a field the input does not take. */
  notTaken: string;
}

/**
 * Collects zod issues as `field path → messages`, the `fields` of validation_failed. A field the
 * input does not take is named as a field of its own. Field names are the caller's, so any text
 * is one (`toString`, `__proto__`): they are gathered in a Map, never looked up on an object.
 */
export function issueFields(issues: readonly FieldIssue[], words: FieldWords): Record<string, string[]> {
  const fields = new Map<string, string[]>();
  const add = (path: readonly PropertyKey[], message: string) => {
    const key = path.map(String).join('.') || words.whole;
    const messages = fields.get(key) ?? [];
    fields.set(key, messages);
    // One message once: a value can fail two checks with the same message (a huge `per_page`).
    if (!messages.includes(message)) messages.push(message);
  };
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys' && issue.keys) for (const key of issue.keys) add([...issue.path, key], words.notTaken);
    else add(issue.path, issue.message);
  }
  return Object.fromEntries(fields);
}
