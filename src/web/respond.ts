import type { FastifyReply } from 'fastify';
import type { UiContext } from './context.js';
import { page, type PageOptions } from './layout.js';

/** Sends one page of the signed-in UI: the frame with the user's navigation and CSRF token. */
export function sendPage(
  reply: FastifyReply,
  ui: UiContext | null,
  options: Omit<PageOptions, 'user' | 'csrfToken'>,
  status = 200,
): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(page({ ...options, user: ui?.user ?? null, csrfToken: ui?.session.csrfToken }));
}
