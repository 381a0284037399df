import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';
import { textParts } from '../core/text-parts.js';
import type { UiContext } from './context.js';
import type { SafeHtml } from './html.js';
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
    .send(inParts(page({ ...options, user: ui?.user ?? null, csrfToken: ui?.session.csrfToken })));
}

/** A page this long (characters) is sent in parts. */
const largePage = 1_000_000;

/**
 * A large page (an article with a body of megabytes) as a stream of UTF-8 parts, one encoded per
 * turn of the event loop, cut from the parts the page was built in (never joined: see `SafeHtml`):
 * encoding megabytes at once would hold the loop.
 */
function inParts({ parts }: SafeHtml): string | Readable {
  if (parts.reduce((length, part) => length + part.length, 0) < largePage) return parts.join('');
  return Readable.from(
    (async function* () {
      for (const part of parts) {
        for (const piece of textParts(part, 256 * 1024)) {
          await nextTurn();
          yield Buffer.from(piece);
        }
      }
    })(),
  );
}
