import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Services } from '../../src/services/index.js';
import { toTimestamp } from '../../src/core/time.js';

export const password = 'correct horse battery';

/** A minimal browser over `app.inject`: keeps the session and CSRF cookies, reads CSRF tokens from pages. */
export class InjectBrowser {
  /** The session cookie's value; its name is `anchorage_session`, or `__Host-anchorage_session` behind https. */
  cookie: string | undefined;
  sessionCookieName = 'anchorage_session';
  /** An anonymous visitor's CSRF cookie (name and value). */
  csrfCookie: string | undefined;
  last: LightMyRequestResponse | undefined;

  /** `remoteAddress`: the client address the app sees (limits keyed by address are shared through Redis). */
  constructor(
    private readonly app: FastifyInstance,
    private readonly remoteAddress?: string,
  ) {}

  private remember(response: LightMyRequestResponse): LightMyRequestResponse {
    const set = response.cookies.find((c) => c.name.endsWith('anchorage_session'));
    if (set) {
      this.sessionCookieName = set.name;
      this.cookie = set.value ? set.value : undefined;
    }
    const csrf = response.cookies.find((c) => c.name.endsWith('anchorage_csrf'));
    if (csrf) this.csrfCookie = csrf.value ? `${csrf.name}=${csrf.value}` : undefined;
    this.last = response;
    return response;
  }

  private headers(): Record<string, string> {
    const cookies = [this.cookie ? `${this.sessionCookieName}=${this.cookie}` : undefined, this.csrfCookie].filter(Boolean);
    return cookies.length > 0 ? { cookie: cookies.join('; ') } : {};
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.remember(await this.app.inject({ method: 'GET', url, headers: this.headers(), remoteAddress: this.remoteAddress }));
  }

  async post(url: string, form: Record<string, string>): Promise<LightMyRequestResponse> {
    return this.remember(
      await this.app.inject({
        method: 'POST',
        url,
        remoteAddress: this.remoteAddress,
        headers: { ...this.headers(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(form).toString(),
      }),
    );
  }

  /** The CSRF token of the page at `url` (of the session this browser holds). */
  async csrf(url = '/app/sign-in'): Promise<string> {
    const response = await this.get(url);
    return csrfOf(response.body);
  }

  async signIn(email: string, pass = password): Promise<LightMyRequestResponse> {
    const token = await this.csrf('/app/sign-in');
    return this.post('/app/sign-in', { _csrf: token, email, password: pass, next: '/app' });
  }
}

export function csrfOf(page: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error('no CSRF token on the page');
  return match[1]!;
}

/** An HTML attribute value as the page holds it, decoded. */
export function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The ETag the editor form carries. */
export function etagOf(page: string): string {
  const match = /name="etag" value="([^"]*)"/.exec(page);
  if (!match) throw new Error('no etag field on the page');
  return decodeEntities(match[1]!);
}

/**
 * The content pipeline rewriting an article (there is no public way to add protected links): a
 * new body and a revision with origin `rewrite`, as the pipeline stores them.
 */
export async function pipelineRewrite(services: Services, articleId: number, body: string): Promise<number> {
  const db = services.db.kysely;
  const article = await db.selectFrom('articles').selectAll().where('id', '=', articleId).executeTakeFirstOrThrow();
  const now = toTimestamp(services.clock.now());
  const revision = await db
    .insertInto('revisions')
    .values({
      article_id: articleId,
      account_id: article.account_id,
      title: article.title,
      body,
      meta_description: article.meta_description,
      featured_image_url: article.featured_image_url,
      origin: 'rewrite',
      reason: 'Backlink inserted by the content pipeline',
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .updateTable('articles')
    .set({ body, current_revision_id: revision.id, version: article.version + 1, updated_at: now })
    .where('id', '=', articleId)
    .execute();
  return revision.id;
}
