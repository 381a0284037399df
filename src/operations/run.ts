import type { z } from 'zod';
import { AppError, validationFailed } from '../core/errors.js';
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

/**
 * An argument problem as a `validation_failed` field: an argument the tool does not take is
 * named as a field of its own.
 */
function argumentFields(issues: readonly z.core.$ZodIssue[]): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  const add = (path: readonly PropertyKey[], message: string) => (fields[path.map(String).join('.') || '(arguments)'] ??= []).push(message);
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') for (const key of issue.keys) add([...issue.path, key], 'This tool does not take this argument.');
    else add(issue.path, issue.message);
  }
  return fields;
}

/**
 * The same pipeline for an MCP tool: permissions first (a tool the connection may not use is not
 * even listed), then the arguments against the tool's strict input, then the handler.
 */
export async function runTool(tool: ToolDefinition, args: unknown, ctx: OperationContext): Promise<OperationResult<unknown>> {
  // The tool's span; the operation it runs has its own, as a child.
  return inSpan(`tool ${tool.name}`, { 'anchorage.tool': tool.name, 'anchorage.channel': ctx.actor.channel }, async () => {
    checkScope(tool.scope, ctx.actor);
    const input = tool.input.safeParse(args ?? {});
    if (!input.success) throw validationFailed(argumentFields(input.error.issues));
    return tool.run(input.data, ctx);
  });
}
