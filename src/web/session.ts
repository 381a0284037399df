import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../core/errors.js';
import { randomBase62 } from '../core/secrets.js';
import type { Services } from '../services/index.js';
import type { Session, SessionUser } from '../services/sessions.js';

/**
 * The signed-in session. With https the `__Host-` prefix makes browsers take it only Secure, for
 * Path=/ and without Domain, so no other host (a sibling subdomain included) can set or shadow it;
 * the unprefixed name is then never read.
 */
export const sessionCookie = (secure: boolean): string => (secure ? '__Host-anchorage_session' : 'anchorage_session');

/**
 * An anonymous visitor's CSRF token (double submit: the form must repeat it). With https the
 * `__Host-` prefix keeps any other host, a sibling subdomain included, from setting it.
 */
export const csrfCookie = (secure: boolean): string => (secure ? '__Host-anchorage_csrf' : 'anchorage_csrf');

/** Both cookies' flags: host-only (no Domain), every path, HttpOnly, SameSite=Lax, Secure with https. */
const cookieFlags = (secure: boolean) => ({ path: '/', httpOnly: true, sameSite: 'lax' as const, secure });

/** An anonymous visitor: nothing stored, only the CSRF token in its own cookie. */
export interface AnonymousSession {
  id: undefined;
  csrfToken: string;
  user: null;
}

/** A session stored since sign-in, or an anonymous visitor's. */
export type VisitorSession = Session | AnonymousSession;

function setSessionCookie(reply: FastifyReply, session: Session, secure: boolean): void {
  reply.setCookie(sessionCookie(secure), session.id, { ...cookieFlags(secure), maxAge: 7 * 24 * 3600 });
}

/**
 * The request's stored session, or else an anonymous one: its CSRF token from the cookie, or a
 * new token set as that cookie. Anonymous visitors never get a database row.
 */
export async function loadSession(
  request: FastifyRequest,
  reply: FastifyReply,
  services: Services,
  secure: boolean,
): Promise<VisitorSession> {
  const id = request.cookies[sessionCookie(secure)];
  const existing = id ? await services.sessions.find(id) : undefined;
  if (existing) return existing;
  const token = request.cookies[csrfCookie(secure)];
  if (token !== undefined && /^[0-9A-Za-z]{32}$/.test(token)) return { id: undefined, csrfToken: token, user: null };
  const csrfToken = randomBase62(32);
  reply.setCookie(csrfCookie(secure), csrfToken, cookieFlags(secure));
  return { id: undefined, csrfToken, user: null };
}

/** Signed in: the stored session's cookie replaces the anonymous CSRF cookie. */
export function startSignedIn(reply: FastifyReply, session: Session, secure: boolean): void {
  setSessionCookie(reply, session, secure);
  reply.clearCookie(csrfCookie(secure), cookieFlags(secure));
}

/** Signed out: the session's cookie goes (a `__Host-` one only with the flags it was set with). */
export function endSignedIn(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(sessionCookie(secure), cookieFlags(secure));
}

/** Where to send someone who must sign in first, coming back to `next` afterwards. */
export const signInUrl = (next: string): string => `/app/sign-in?next=${encodeURIComponent(next)}`;

/**
 * Where to go after sign-in: `next` resolved by the WHATWG URL parser against the service's own
 * address, followed only when it keeps that origin (so tabs, newlines, backslashes and encoded
 * forms resolve exactly as a browser would). The answer is the parser's percent-encoded path,
 * query and fragment, safe for a Location header; a path starting `//` would read as another
 * host there, so it goes to /app like anything else.
 */
export function safeNext(next: unknown, publicUrl: string): string {
  if (typeof next !== 'string' || next.length > 4000) return '/app';
  const base = new URL(publicUrl);
  let url: URL;
  try {
    url = new URL(next, base);
  } catch {
    return '/app';
  }
  if (url.origin !== base.origin || url.pathname.startsWith('//') || url.username !== '' || url.password !== '') return '/app';
  return `${url.pathname}${url.search}${url.hash}`;
}

/** Forms carry the session's CSRF token in `_csrf`; anything else is refused. */
export function checkCsrf(session: VisitorSession, submitted: unknown): void {
  if (typeof submitted !== 'string' || submitted !== session.csrfToken) {
    throw new AppError('forbidden', 'The form has expired or did not come from this site. Reload the page and try again.');
  }
}

export type { Session, SessionUser };
