import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../config.js';
import { AppError } from '../core/errors.js';
import type { Actor } from '../services/actor.js';
import type { Services } from '../services/index.js';
import { checkCsrf, loadSession, type Session, type SessionUser, signInUrl } from './session.js';

/** The signed-in person behind a UI request, and the Actor the services see. */
export interface UiContext {
  session: Session;
  user: SessionUser;
  /** Channel `editor`, credential `session`: staff read every account, write only their own. */
  actor: Actor;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set for the signed-in pages of the UI (by `requireSignedIn`). */
    ui: UiContext | null;
  }
}

export interface WebOptions {
  services: Services;
  settings: Settings;
}

/** Session cookies are Secure whenever the public address is https. */
export const secureCookies = (settings: Settings): boolean => settings.publicUrl.startsWith('https://');

export function uiActor(user: SessionUser, request: FastifyRequest): Actor {
  return {
    accountId: user.accountId,
    userId: user.userId,
    credential: { kind: 'session' },
    channel: 'editor',
    staff: user.staff,
    scopes: ['read', 'write'],
    request: request.info,
  };
}

/**
 * preHandler of every signed-in page: a visitor without a session is sent to sign in (and back
 * afterwards); every POST must carry the session's CSRF token.
 */
export function requireSignedIn(options: WebOptions) {
  const secure = secureCookies(options.settings);
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const session = await loadSession(request, reply, options.services, secure);
    if (!session.user) {
      return reply.redirect(request.method === 'GET' ? signInUrl(request.url) : '/app/sign-in', 303);
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      checkCsrf(session, (request.body as { _csrf?: unknown } | undefined)?._csrf);
    }
    request.ui = { session, user: session.user, actor: uiActor(session.user, request) };
    return undefined;
  };
}

/** The UI context of a signed-in page (set by `requireSignedIn`). */
export function uiOf(request: FastifyRequest): UiContext {
  if (!request.ui) throw new AppError('unauthenticated', 'Sign in first.');
  return request.ui;
}

/** A positive integer path id, or a 404 for anything else (as the API treats ids). */
export function idParam(value: string, what: 'site' | 'article' | 'revision' | 'key' | 'account' | 'user'): number {
  // Ids are 32-bit integers on PostgreSQL; anything larger names nothing.
  if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2_147_483_647) {
    throw new AppError('not_found', `No ${what} with this id.`);
  }
  return Number(value);
}

/** A page number from a query string; anything odd is page 1. */
export function pageParam(value: unknown): number {
  return typeof value === 'string' && /^[1-9]\d{0,6}$/.test(value) ? Number(value) : 1;
}

/** A single text field of a form or query (repeated fields take the first value). */
export function textField(value: unknown): string {
  if (Array.isArray(value)) return textField(value[0]);
  return typeof value === 'string' ? value : '';
}
