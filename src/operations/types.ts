import type { z } from 'zod';
import type { ErrorCode } from '../core/errors.js';
import type { Actor, Scope } from '../services/actor.js';
import type { Services } from '../services/index.js';
import type { LimitState } from '../services/limits.js';

/** What the transport hands an operation besides its input. */
export interface OperationContext {
  actor: Actor;
  services: Services;
  /** `If-Match` and `Idempotency-Key`, where the transport has them. */
  preconditions: { ifMatch?: string; idempotencyKey?: string };
  /** A file uploaded as multipart/form-data (the featured image). */
  upload?: Buffer;
  /** MCP: characters the whole result may take, structuredContent's JSON and its text (MCP_RESULT_MAX_CHARS). */
  resultChars?: number;
}

export interface OperationResult<T> {
  body: T;
  /** Sent as the `ETag` header over REST. */
  etag?: string;
  /** The daily edit allowance after a write, shown in the rate-limit headers. */
  allowance?: LimitState;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * One public operation, declared once. REST routes, the OpenAPI document and the MCP tools are
 * all generated from these fields, so the three cannot drift apart.
 */
export interface Operation<Input extends z.ZodObject = z.ZodObject, Output extends z.ZodType = z.ZodType> {
  /** The interface's operation name, e.g. `listArticles`. */
  name: string;
  summary: string;
  /** For people reading the OpenAPI document. */
  description: string;
  rest: {
    method: 'GET' | 'PUT' | 'PATCH' | 'POST';
    /** OpenAPI-style path under /api/v1, e.g. `/sites/{id}/articles`. */
    path: string;
    /** The input field that the path's `{id}` carries. */
    pathId?: keyof z.infer<Input> & string;
    /** Input fields sent in the query string of a write (GET sends every field there). */
    queryFields?: (keyof z.infer<Input> & string)[];
    /** Also accepts multipart/form-data with these fields (documented; parsed by the route). */
    multipart?: z.ZodObject;
    /** The result carries the article's ETag; on GET a matching `If-None-Match` is a 304. */
    etag?: boolean;
    /**
     * Body fields whose large strings reach the handler as `SharedText`s, never strings on the
     * event loop (`sharedTextFields` in json-body.ts): only fields that take any string.
     */
    sharedTextFields?: (keyof z.infer<Input> & string)[];
  };
  /** The MCP tool that is this operation; absent when a combined tool covers it. */
  tool?: {
    name: string;
    title: string;
    /** Written for a model: what it does, its limits, what its errors mean. */
    description: string;
    annotations: ToolAnnotations;
    /** Input fields REST offers but no MCP connection may use (the staff filters): left out of the tool. */
    restOnly?: (keyof z.infer<Input> & string)[];
  };
  /** Every input field, flat: path id, query and body together (the MCP tool's input, less `tool.restOnly`). */
  input: Input;
  /** The 200 response body. */
  output: Output;
  /** The errors this operation can answer with, besides 401 and 500. */
  errors: ErrorCode[];
  scope: Scope;
  handler(input: z.output<Input>, ctx: OperationContext): Promise<OperationResult<z.input<Output>>>;
}

/**
 * One MCP tool. Most are an operation's `tool` part; a few (update_article) combine several
 * operations behind one tool and are declared as tools directly.
 */
export interface ToolDefinition<Input extends z.ZodObject = z.ZodObject, Output extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  /** Strict: an argument the tool does not take is refused, never ignored. */
  input: Input;
  output: Output;
  /** A connection without this scope is not offered the tool, and is refused if it calls it anyway. */
  scope: Scope;
  /** The operation name recorded in the activity log. */
  operation: string;
  run(input: z.output<Input>, ctx: OperationContext): Promise<OperationResult<z.input<Output>>>;
}

/** Checks a declaration against its own schemas (the handler gets the parsed input with its types). */
export const defineOperation = <Input extends z.ZodObject, Output extends z.ZodType>(operation: Operation<Input, Output>): Operation<Input, Output> =>
  operation;

/** The same for a tool declared directly: `run` gets the parsed arguments with their types. */
export const defineTool = <Input extends z.ZodObject, Output extends z.ZodType>(tool: ToolDefinition<Input, Output>): ToolDefinition => tool;
