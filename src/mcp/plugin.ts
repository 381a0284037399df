import cors from '@fastify/cors';
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type McpServerFactory,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../config.js';
import { AppError } from '../core/errors.js';
import '../http/context.js';
import { allowedHeaders, exposedHeaders } from '../http/cors.js';
import { jsonBodyLimit, rateLimited, refusedUnauthenticated, setLimitHeaders } from '../http/limits.js';
import { tools } from '../operations/index.js';
import type { ToolDefinition } from '../operations/types.js';
import type { Outcome } from '../services/activity.js';
import type { Actor, RequestInfo } from '../services/actor.js';
import type { Services } from '../services/index.js';
import { type Listener, oauthUrlsOf, readScope, supportedScopes, writeScope } from '../services/oauth/index.js';
import { directToolCallOf } from './direct-call.js';
import { answerToolCall, buildMcpServer, type McpCall } from './server.js';

export interface AgentInterfaceOptions {
  services: Services;
  settings: Settings;
}

const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Origins a browser may call /mcp from (DNS-rebinding protection): our public addresses and
 * loopback ones, for inspectors running on the user's machine. No Origin (not a browser) is fine.
 */
function originPolicy(settings: Settings): (origin: string) => boolean {
  const ours = new Set([new URL(settings.publicUrl).origin, new URL(settings.mcpPublicUrl).origin]);
  return (origin) => {
    if (ours.has(origin)) return true;
    try {
      const url = new URL(origin);
      return (url.protocol === 'http:' || url.protocol === 'https:') && loopbackHosts.has(url.hostname) && url.origin === origin;
    } catch {
      return false;
    }
  };
}

/** The tool a JSON-RPC body calls, for the activity record of a refused request. */
function calledTool(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const { method, params } = body as { method?: unknown; params?: { name?: unknown } | null };
  return method === 'tools/call' && typeof params?.name === 'string' ? params.name : null;
}

/** The JSON-RPC method of a request body (`initialize`, `tools/list`, …), for its activity record. */
function rpcMethod(body: unknown): string | null {
  const method = typeof body === 'object' && body !== null ? (body as { method?: unknown }).method : undefined;
  return typeof method === 'string' ? method.slice(0, 100) : null;
}

/**
 * JSON-RPC errors as the catalogue's: the SDK answers a request it refuses (an unknown tool or
 * method, arguments not of the protocol's shape) with HTTP 200 and an `error` member.
 */
const rpcErrors: Record<number, Outcome> = {
  [-32700]: { status: 400, error: 'invalid_json' },
  [-32600]: { status: 422, error: 'validation_failed' },
  [-32601]: { status: 404, error: 'not_found' },
  [-32602]: { status: 422, error: 'validation_failed' },
  [-32603]: { status: 500, error: 'internal_error' },
};

/**
 * How a request that no tool logged ended, for its activity record: an HTTP error as such, and the
 * JSON-RPC error an HTTP 200 carries as the catalogue's error. A call of a tool that does not
 * exist is a `not_found`, whatever code the SDK words it with.
 */
async function rpcOutcome(response: Response, unknownTool: boolean): Promise<Outcome> {
  if (response.status >= 400) return { status: response.status, error: 'validation_failed' };
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('application/json')) return { status: response.status, error: null };
  const body: unknown = await response.clone().json().catch(() => undefined);
  const code = (body as { error?: { code?: unknown } } | undefined)?.error?.code;
  if (typeof code !== 'number') return { status: response.status, error: null };
  if (unknownTool) return { status: 404, error: 'not_found' };
  return rpcErrors[code] ?? { status: 422, error: 'validation_failed' };
}

const headerValue = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

const bearerToken = (header: string | undefined): string | undefined => /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '')?.[1];

const hopByHop = new Set(['connection', 'content-length', 'transfer-encoding', 'keep-alive']);

/** Levels of arrays and objects no JSON-RPC message of ours comes near. */
const maxNesting = 1_000;

/** Whether `value` nests arrays and objects deeper than `limit` levels (walked without recursion). */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * The Web Request the SDK serves, without a body: the body travels as `parsedBody`, already parsed
 * by Fastify, and the SDK reads no other (writing it out again and wrapping it in a stream cost
 * about as much as the SDK's own work on a small tool call).
 */
function toWebRequest(request: FastifyRequest, url: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || hopByHop.has(name)) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Request(url, { method: request.method, headers, signal });
}

/**
 * The MCP endpoint (mounted at /mcp): Origin check, Bearer token, the per-grant request limit,
 * then the SDK, stateless and answering JSON. 2026-07-28 requests go to the SDK's handler;
 * 2025-era ones to a per-request transport in JSON mode (the SDK's own legacy path streams SSE),
 * except the common one, a single tool call, which is answered directly (direct-call.ts).
 */
export async function mcpEndpoint(
  app: FastifyInstance,
  options: AgentInterfaceOptions & {
    tools: readonly ToolDefinition[];
    listener: Listener;
    /** Internal, for the test that compares the two paths: every request goes through the SDK. */
    viaSdk?: boolean;
  },
) {
  const { services, settings } = options;
  const urls = oauthUrlsOf(settings, options.listener);
  const originAllowed = originPolicy(settings);
  const challenge = `Bearer resource_metadata="${urls.resourceMetadataUrl}", scope="${supportedScopes.join(' ')}"`;

  // The SDK hands our AuthInfo object untouched to the factory: it carries the call's actor.
  const calls = new WeakMap<AuthInfo, McpCall>();
  const factory: McpServerFactory = (ctx) => {
    const call = ctx.authInfo ? calls.get(ctx.authInfo) : undefined;
    if (!call) throw new Error('An MCP request reached the server without an authenticated call.');
    return buildMcpServer(call);
  };
  const modern = createMcpHandler(factory, {
    legacy: 'reject',
    responseMode: 'auto',
    onerror: (error) => app.log.warn({ err: error }, 'mcp request failed'),
  });
  app.addHook('onClose', async () => modern.close());

  async function serveLegacy(call: McpCall, webRequest: Request, parsedBody: unknown, authInfo: AuthInfo): Promise<Response> {
    const server = buildMcpServer(call);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(webRequest, { parsedBody, authInfo });
    } finally {
      // JSON mode: the response is complete, nothing streams on.
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    }
  }

  const requestInfo = (request: FastifyRequest): RequestInfo => {
    const tool = calledTool(request.body);
    return {
      id: request.id,
      operation: options.tools.find((t) => t.name === tool)?.operation ?? null,
      method: request.method,
      path: '/mcp',
      tool,
      clientIp: request.ip,
      userAgent: request.headers['user-agent'] ?? null,
      startedAt: Date.now(),
    };
  };

  /** Refused before reaching a tool: logged as one call, answered with the Error body. */
  const refuse = (request: FastifyRequest, reply: FastifyReply, error: AppError, actor: Actor | null = null) => {
    services.activity.record({
      actor,
      channel: 'mcp',
      request: requestInfo(request),
      outcome: { status: error.status, error: error.code },
    });
    if (error.retryAfter !== undefined) reply.header('retry-after', error.retryAfter);
    return reply.code(error.status).send(error.toBody());
  };

  await app.register(cors, {
    origin: (origin, callback) => callback(null, origin === undefined || originAllowed(origin)),
    methods: ['GET', 'POST', 'DELETE'],
    allowedHeaders,
    exposedHeaders,
    maxAge: 86_400,
    // An OPTIONS without the preflight headers gets the policy too, not a plain-text 400 outside the catalogue.
    strictPreflight: false,
  });
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined || originAllowed(origin)) return;
    return refuse(request, reply, new AppError('forbidden', 'Requests from this web origin are not accepted.'));
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = bearerToken(request.headers.authorization);
    const actor = token ? await services.oauth.authenticate(token, urls.resource, null) : undefined;
    if (!token || !actor) {
      reply.header(
        'www-authenticate',
        token ? `${challenge}, error="invalid_token", error_description="The access token is invalid, expired or revoked."` : challenge,
      );
      const message = token
        ? 'The access token is invalid, expired or revoked; sign in again.'
        : 'Connect through OAuth: sign in to Anchorage and allow access.';
      return refuse(request, reply, await refusedUnauthenticated(services, request.ip, new AppError('unauthenticated', message)));
    }
    const connection = `mcp_grant:${actor.credential.kind === 'mcp_grant' ? actor.credential.id : 0}`;
    const limit = await services.requestLimiter.consume(connection);
    setLimitHeaders(reply, limit);
    // A tool call over the limit gets its refusal as the tool's error result, which a model can read.
    const overLimit = limit.allowed ? undefined : rateLimited(limit);
    if (overLimit && (request.method !== 'POST' || calledTool(request.body) === null)) return refuse(request, reply, overLimit, actor);
    if (overLimit?.retryAfter !== undefined) reply.header('retry-after', overLimit.retryAfter);
    if (request.method !== 'POST') {
      // Stateless: no standalone SSE stream and no session to delete.
      return reply
        .code(405)
        .header('allow', 'POST')
        .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
    }

    const call: McpCall = {
      actor,
      services,
      tools: options.tools,
      refusal: overLimit,
      request: { id: request.id, clientIp: request.ip, userAgent: request.headers['user-agent'] ?? null },
      onAllowance: (state) => setLimitHeaders(reply, state, 'edits', 86_400),
      onInternalError: (error) => request.log.error({ err: error }, 'mcp tool failed'),
      resultMaxChars: settings.mcpResultMaxChars,
      protocolVersion: headerValue(request.headers['mcp-protocol-version']),
    };
    const parsedBody: unknown = request.body;
    // JSON.parse takes nesting that the SDK's own walks of a message cannot follow (a stack overflow).
    if (nestedDeeperThan(parsedBody, maxNesting)) {
      return refuse(request, reply, new AppError('invalid_json', 'The JSON-RPC message is nested too deeply.'), actor);
    }
    // One 2025-era call of one of our tools skips the SDK (direct-call.ts): the same callTool and
    // the same answer, without a server, a transport and web Request and Response per call.
    const direct = options.viaSdk ? undefined : directToolCallOf(request.headers, parsedBody);
    const answer = direct && (await answerToolCall(call, direct.id, direct.name, direct.arguments));
    // A Buffer: Fastify would add a charset to a string's content type, which the SDK does not send.
    if (answer !== undefined) return reply.code(200).header('content-type', 'application/json').send(Buffer.from(answer));

    const authInfo: AuthInfo = {
      token,
      // Only carried through the SDK to our factory; it names the connection.
      clientId: connection,
      scopes: actor.scopes.includes('write') ? [readScope, writeScope] : [readScope],
      resource: new URL(urls.resource),
    };
    calls.set(authInfo, call);
    const abort = new AbortController();
    reply.raw.on('close', () => abort.abort());
    const webRequest = toWebRequest(request, new URL(request.url, urls.issuer).href, abort.signal);
    const info = requestInfo(request);
    const response = (await isLegacyRequest(webRequest, parsedBody))
      ? await serveLegacy(call, webRequest, parsedBody, authInfo)
      : await modern.fetch(webRequest, { parsedBody, authInfo });
    // Calls of our tools are logged by the tool pipeline; every other request (discovery,
    // tools/list, an unknown tool, arguments the SDK refused before any tool ran) here.
    if (!call.logged) {
      services.activity.record({
        actor,
        channel: 'mcp',
        request: { ...info, operation: info.operation ?? rpcMethod(parsedBody) },
        outcome: await rpcOutcome(response, info.tool !== null && info.operation === null),
      });
    }
    return reply.send(response);
  };
  // Capped like REST JSON bodies (413 payload_too_large): an inline image (base64) must fit, larger ones go by url.
  app.post('/', { bodyLimit: jsonBodyLimit }, handler);
  app.get('/', handler);
  app.delete('/', handler);
}

/** Keeps the agent interface's routes out of the REST API's OpenAPI document. */
const hidden = (app: FastifyInstance) =>
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });

/**
 * The agent interface on the main listener: MCP at /mcp. The OAuth metadata and authorization
 * server it points clients to are a transport of their own (src/oauth/); src/app.ts registers them.
 */
export async function agentInterfacePlugin(app: FastifyInstance, options: AgentInterfaceOptions) {
  hidden(app);
  await app.register(mcpEndpoint, { ...options, tools, listener: 'main', prefix: '/mcp' });
}
