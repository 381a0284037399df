import { type CallToolResult, McpServer, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { AppError, validationFailed } from '../core/errors.js';
import { fieldsOf } from '../http/errors.js';
import { runTool } from '../operations/run.js';
import type { ToolDefinition } from '../operations/types.js';
import type { Actor, RequestInfo } from '../services/actor.js';
import type { Services } from '../services/index.js';
import type { LimitState } from '../services/limits.js';

const instructions =
  'Anchorage keeps the search-optimised articles and acquired backlinks of the signed-in account’s websites. ' +
  'Start with list_sites to learn the site ids; list_articles, list_backlinks and get_stats take a site_id, get_article an article_id. ' +
  'Article bodies contain protected links (data-service-protected) that every edit must keep exactly. ' +
  'Errors come back as results with isError and a JSON body whose `error` names the problem.';

/** What every tool call of one HTTP request shares, for its activity record. */
export interface McpCall {
  actor: Actor;
  services: Services;
  tools: readonly ToolDefinition[];
  request: Pick<RequestInfo, 'id' | 'clientIp' | 'userAgent'>;
  /** A write's daily edit allowance afterwards, for the response headers as over REST. */
  onAllowance(state: LimitState): void;
  onInternalError(error: unknown): void;
}

/**
 * Advertises the tool's JSON Schema but lets every argument through: the tool validates with
 * zod itself, so a bad argument is a `validation_failed` Error body as over REST, not SDK text.
 */
const advertised = (schema: z.ZodObject): StandardSchemaWithJSON => ({
  '~standard': {
    version: 1,
    vendor: 'anchorage',
    validate: (value: unknown) => ({ value }),
    jsonSchema: schema['~standard'].jsonSchema,
  },
});

const textOf = (body: unknown): CallToolResult['content'] => [{ type: 'text', text: JSON.stringify(body) }];

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
    const input = tool.input.safeParse(args ?? {});
    if (!input.success) throw validationFailed(fieldsOf(input.error.issues));
    const { body, allowance } = await runTool(tool, input.data, { actor, services: call.services, preconditions: {} });
    if (allowance) call.onAllowance(allowance);
    // The REST twin serialises through the output schema; so do we, field for field.
    const structured = z.encode(tool.output, body) as Record<string, unknown>;
    result = { structuredContent: structured, content: textOf(structured) };
    outcome = { status: 200, error: null };
  } catch (error) {
    if (!(error instanceof AppError)) call.onInternalError(error);
    const appError =
      error instanceof AppError ? error : new AppError('internal_error', 'Something went wrong on our side; try again later.');
    const body = appError.toBody();
    result = { isError: true, structuredContent: { ...body }, content: textOf(body) };
    outcome = { status: appError.status, error: appError.code };
  }
  // A write stores its record with the change; everything else is logged here.
  if (!info.recorded) call.services.activity.record({ actor, channel: 'mcp', request: info, outcome });
  return result;
}

/** One MCP server per HTTP request (stateless): every tool of the operation list, for one actor. */
export function buildMcpServer(call: McpCall): McpServer {
  const server = new McpServer({ name: 'anchorage', title: 'Anchorage', version: '1.0.0' }, { instructions });
  for (const tool of call.tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: advertised(tool.input),
        outputSchema: tool.output as z.ZodObject,
        annotations: { title: tool.title, ...tool.annotations },
      },
      (args: unknown) => callTool(tool, args, call),
    );
  }
  return server;
}
