import { AppError } from '../core/errors.js';
import type { Actor, Scope } from '../services/actor.js';
import type { Operation, OperationContext, OperationResult, ToolDefinition } from './types.js';

/** The permissions step of every operation and tool, whatever the channel. */
function checkScope(scope: Scope, actor: Actor): void {
  if (actor.scopes.includes(scope)) return;
  throw new AppError(
    'insufficient_scope',
    scope === 'write' ? 'This credential is read-only; it cannot change articles.' : 'This credential cannot read.',
  );
}

/** The one pipeline of an operation: permissions, then the handler. */
export async function runOperation(
  operation: Operation,
  input: Record<string, unknown>,
  ctx: OperationContext,
): Promise<OperationResult<unknown>> {
  checkScope(operation.scope, ctx.actor);
  return operation.handler(input, ctx);
}

/** The same pipeline for an MCP tool. */
export async function runTool(
  tool: ToolDefinition,
  input: Record<string, unknown>,
  ctx: OperationContext,
): Promise<OperationResult<unknown>> {
  checkScope(tool.scope, ctx.actor);
  return tool.run(input, ctx);
}
