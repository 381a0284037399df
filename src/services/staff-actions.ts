import { AppError } from '../core/errors.js';
import type { Actor, RequestInfo } from './actor.js';
import type { ActivityEntry } from './activity.js';

/** Staff actions through the UI only (a session, never an API key or MCP grant). */
export function requireStaff(actor: Actor): void {
  if (!actor.staff || actor.credential.kind !== 'session') throw new AppError('forbidden', 'This is for Anchorage staff only.');
}

/** The record of a staff action: the staff member as actor, the UI's request, the action's name. */
export function staffEntry(actor: Actor, operation: string, path: string, status: number): ActivityEntry {
  const request: RequestInfo = actor.request ?? { id: '', operation: null, method: 'POST', path: null, tool: null, clientIp: null, userAgent: null, startedAt: Date.now() };
  return { actor, channel: 'api', request: { ...request, operation, path, recorded: true }, outcome: { status, error: null } };
}
