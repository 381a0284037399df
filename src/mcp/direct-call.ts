/**
 * Which requests to /mcp are answered without the SDK: a POST that is exactly one 2025-era
 * JSON-RPC `tools/call` request, whose headers pass every check the SDK's transport for that era
 * makes (`WebStandardStreamableHTTPServerTransport.handlePostRequest` in SDK 2.4). Everything else
 * (initialize, tools/list, notifications, batches, a 2026-07-28 request, a header or a message the
 * SDK would refuse) goes to the SDK, so its answers and refusals stay its own.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isJsonContentType, type RequestId, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';

export interface DirectToolCall {
  /** A string or a safe integer, as the SDK takes. */
  id: RequestId;
  name: string;
  /** The tool's arguments, as sent: an object, or absent. */
  arguments: Record<string, unknown> | undefined;
}

/** A request message's members (the SDK refuses any other); a call's parameters we answer directly. */
const messageKeys = new Set(['jsonrpc', 'id', 'method', 'params']);
const paramKeys = new Set(['name', 'arguments']);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const onlyKeys = (value: Record<string, unknown>, allowed: Set<string>): boolean => Object.keys(value).every((key) => allowed.has(key));

/**
 * The tool call `body` makes, when the request may skip the SDK. The headers are the transport's
 * checks: Accept names both JSON and SSE, the Content-Type is JSON, and MCP-Protocol-Version is
 * absent (2025-03-26) or a 2025-era version the SDK serves (a 2026-07-28 request is the SDK's
 * other path). The message is a request with nothing the SDK would read besides the tool's name
 * and arguments: no `_meta` (a progress token, a 2026-07-28 envelope), no task.
 */
export function directToolCallOf(headers: IncomingHttpHeaders, body: unknown): DirectToolCall | undefined {
  const { accept } = headers;
  if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!isJsonContentType(headers['content-type'] ?? null)) return undefined;
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && (Array.isArray(version) || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call' || !onlyKeys(body, messageKeys)) return undefined;
  const { id, params } = body;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  if (!isPlainObject(params) || typeof params.name !== 'string' || !onlyKeys(params, paramKeys)) return undefined;
  const args = params.arguments;
  if (args !== undefined && !isPlainObject(args)) return undefined;
  return { id: id as RequestId, name: params.name, arguments: args };
}
