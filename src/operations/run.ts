import { AppError } from '../core/errors.js';
import type { Operation, OperationContext, OperationResult } from './types.js';

/** The one pipeline of every operation, whatever the channel: permissions, then the handler. */
export async function runOperation(
  operation: Operation,
  input: Record<string, unknown>,
  ctx: OperationContext,
): Promise<OperationResult<unknown>> {
  if (!ctx.actor.scopes.includes(operation.scope)) {
    throw new AppError(
      'insufficient_scope',
      operation.scope === 'write' ? 'This credential is read-only; it cannot change articles.' : 'This credential cannot read.',
    );
  }
  return operation.handler(input, ctx);
}
