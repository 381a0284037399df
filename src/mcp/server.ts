import { type CallToolResult, ProtocolError, ProtocolErrorCode, type RequestId, Server } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import { storageFailureOf } from '../db/failures.js';
import { DatabaseUnavailable } from '../db/unavailable.js';
import { windowTextOf } from '../operations/article-window.js';
import { runTool } from '../operations/run.js';
import type { ToolDefinition } from '../operations/types.js';
import type { Actor, RequestInfo } from '../services/actor.js';
import type { Services } from '../services/index.js';
import type { LimitState } from '../services/limits.js';
import { legacyListingOf, listingOf } from './listing.js';
import { boundedError, checkResultSize } from './result-bound.js';

const instructions =
  'Anchorage keeps the search-optimised articles and acquired backlinks of the signed-in account’s websites. ' +
  'Start with list_sites to learn the site ids; list_articles, list_backlinks and get_stats take a site_id, get_article an article_id. ' +
  'Article bodies contain protected links (data-service-protected) that every edit must keep exactly. ' +
  'get_article returns a large body in windows (body_offset, next_offset; the first brings an outline of its sections); edit a part with update_article replacements rather than resending the body. ' +
  'Errors come back as results with isError and a JSON body whose `error` names the problem; an argument a tool does not take is refused (validation_failed names it). ' +
  'Every call counts against 60 a minute per connection: rate_limited says in how many seconds to retry. ' +
  'A read-only connection is offered the reading tools only.';

/** What every tool call of one HTTP request shares, for its activity record. */
export interface McpCall {
  actor: Actor;
  services: Services;
  tools: readonly ToolDefinition[];
  /** Set when the request was over the connection's limit: every tool call answers with it. */
  refusal?: AppError;
  request: Pick<RequestInfo, 'id' | 'clientIp' | 'userAgent'>;
  /** A write's daily edit allowance afterwards, for the response headers as over REST. */
  onAllowance(state: LimitState): void;
  onInternalError(error: unknown): void;
  /** MCP_RESULT_MAX_CHARS: no result is larger (structuredContent's JSON and the text counted together). */
  resultMaxChars: number;
  /**
   * The request's MCP-Protocol-Version. Without it the client speaks 2025-03-26 (the transport
   * specification says so), which knows no structuredContent: it gets the JSON as text alone.
   */
  protocolVersion: string | undefined;
  /** Set once a tool call of this request is in the activity log: the endpoint then logs nothing more. */
  logged?: boolean;
}

const textOf = (body: unknown): CallToolResult['content'] => [{ type: 'text', text: JSON.stringify(body) }];

/** Protocol versions before structuredContent (2025-06-18), and a request that names none. */
const beforeStructuredContent = (version: string | undefined) => version === undefined || version === '2025-03-26';

/**
 * A success in the forms the client reads: structuredContent (checked against the outputSchema)
 * with the same JSON as text; for a window of a body, a text that names where the window and the
 * outline are rather than repeating them; for a client before structuredContent, the text alone.
 */
function successOf(structured: Record<string, unknown>, call: McpCall): CallToolResult {
  const json = JSON.stringify(structured);
  const windowText = windowTextOf(structured);
  if (beforeStructuredContent(call.protocolVersion)) {
    // The JSON once, as text: a window fits as it is; a list page is held to the same bound as for others.
    checkResultSize(structured, json.length, call.resultMaxChars, windowText === null ? 'same' : 0);
    return { content: [{ type: 'text', text: json }] };
  }
  checkResultSize(structured, json.length, call.resultMaxChars, windowText === null ? 'same' : windowText.length);
  return { content: [{ type: 'text', text: windowText ?? json }], structuredContent: structured };
}

/** Runs one tool call through the operation pipeline and logs it, as REST does for a request. */
async function callTool(tool: ToolDefinition, args: unknown, call: McpCall): Promise<CallToolResult> {
  const info: RequestInfo = {
    ...call.request,
    operation: tool.operation,
    method: 'POST',
    path: '/mcp',
    tool: tool.name,
    startedAt: Date.now(),
  };
  const actor: Actor = { ...call.actor, request: info };
  let result: CallToolResult;
  let outcome: { status: number; error: string | null };
  try {
    if (call.refusal) throw call.refusal;
    const resultChars = call.resultMaxChars;
    const { body, allowance } = await runTool(tool, args, { actor, services: call.services, preconditions: {}, resultChars });
    if (allowance) call.onAllowance(allowance);
    // The REST twin serialises through the output schema; so do we, field for field.
    result = successOf(z.encode(tool.output, body) as Record<string, unknown>, call);
    outcome = { status: 200, error: null };
  } catch (error) {
    if (!(error instanceof AppError) && !(error instanceof DatabaseUnavailable)) call.onInternalError(error);
    const appError =
      error instanceof AppError
        ? error
        : error instanceof DatabaseUnavailable
          ? error.toAppError()
          : (storageFailureOf(error)?.error ?? new AppError('internal_error', 'Something went wrong on our side; try again later.'));
    // No structuredContent: clients check it against the success outputSchema, errors included (1.x SDK).
    result = { content: textOf(boundedError(appError.toBody(), call.resultMaxChars)), isError: true };
    outcome = { status: appError.status, error: appError.code };
  }
  // A write stores its record with the change; everything else is logged here.
  if (!info.recorded) call.services.activity.record({ actor, channel: 'mcp', request: info, outcome });
  call.logged = true;
  return result;
}

const toolNamed = (call: McpCall, name: string): ToolDefinition | undefined => call.tools.find((tool) => tool.name === name);

/**
 * The JSON-RPC response to a tools/call request that skips the SDK (direct-call.ts says which),
 * as the SDK's 2025-era transport writes it: the same callTool, the same members in the same
 * order (a result's members are in the order of the SDK's schema). Undefined for a
 * tool that does not exist: the SDK answers that with its protocol error.
 *
 * The SDK checks a result against the protocol's CallToolResult schema; callTool's results are
 * of that shape by construction (text blocks, and structuredContent that `z.encode` made of the
 * tool's output schema, which is an object).
 */
export async function answerToolCall(call: McpCall, id: RequestId, name: string, args: unknown): Promise<string | undefined> {
  const tool = toolNamed(call, name);
  if (!tool) return undefined;
  const result = await callTool(tool, args, call);
  return JSON.stringify({ result, jsonrpc: '2.0', id });
}

/**
 * One MCP server per HTTP request (stateless), for one actor. It lists the tools the connection
 * may use; a tool it may not use is still answered, with the Error body of the permissions step.
 * (McpServer would answer an unlisted tool with a protocol error, hence the low-level server.)
 */
export function buildMcpServer(call: McpCall): Server {
  const server = new Server({ name: 'anchorage', title: 'Anchorage', version: '1.0.0' }, { capabilities: { tools: {} }, instructions });
  const offered = call.tools.filter((tool) => call.actor.scopes.includes(tool.scope));
  // A client before structuredContent knows no outputSchema or top-level title either (2025-03-26).
  const listing = beforeStructuredContent(call.protocolVersion) ? legacyListingOf : listingOf;
  server.setRequestHandler('tools/list', () => ({ tools: offered.map(listing) }));
  server.setRequestHandler('tools/call', (request) => {
    const tool = toolNamed(call, request.params.name);
    if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name.slice(0, 100)}`);
    return callTool(tool, request.params.arguments, call);
  });
  return server;
}
