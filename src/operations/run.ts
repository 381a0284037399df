import type { z } from 'zod';
import { AppError, type FieldWords, issueFields, validationFailed } from '../core/errors.js';
import type { Actor, Scope } from '../services/actor.js';
import { inSpan } from '../telemetry.js';
import type { Operation, OperationContext, OperationResult, ToolDefinition } from './types.js';

/** The permissions step of every operation and tool, whatever the channel. */
function checkScope(scope: Scope, actor: Actor): void {
  if (actor.scopes.includes(scope)) return;
  throw new AppError(
    'insufficient_scope',
    scope === 'write' ? 'This credential is read-only; it cannot change articles.' : 'This credential cannot read.',
  );
}

/** The one pipeline of an operation: permissions, then the handler (in the operation's span). */
export async function runOperation<Input extends z.ZodObject, Output extends z.ZodType>(
  operation: Operation<Input, Output>,
  input: z.output<Input>,
  ctx: OperationContext,
): Promise<OperationResult<z.input<Output>>> {
  return inSpan(`operation ${operation.name}`, { 'anchorage.operation': operation.name, 'anchorage.channel': ctx.actor.channel }, async () => {
    checkScope(operation.scope, ctx.actor);
    return operation.handler(input, ctx);
  });
}

/** An argument the tool does not take is named as a field of its own. */
const argumentWords: FieldWords = { whole: '(arguments)', notTaken: 'This tool does not take this argument.' };

/**
 * The same pipeline for an MCP tool: permissions first (a tool the connection may not use is not
 * even listed), then the arguments against the tool's strict input, then the handler.
 */
export async function runTool(tool: ToolDefinition, args: unknown, ctx: OperationContext): Promise<OperationResult<unknown>> {
  // The tool's span; the operation it runs has its own, as a child.
  return inSpan(`tool ${tool.name}`, { 'anchorage.tool': tool.name, 'anchorage.channel': ctx.actor.channel }, async () => {
    checkScope(tool.scope, ctx.actor);
    const input = tool.input.safeParse(args ?? {});
    if (!input.success) throw validationFailed(issueFields(input.error.issues, argumentWords));
    return tool.run(input.data, ctx);
  });
}
