import type { FastifyInstance } from 'fastify';
import { AppError } from '../../core/errors.js';
import type { DiffLine, LineDiff } from '../../core/line-diff.js';
import type { ArticleRow, RevisionRow } from '../../db/schema.js';
import type { RevisionSummary } from '../../services/revisions.js';
import { badge, csrfField, notice, protectedLinkList, tableWrap, timestamp } from '../components.js';
import { idParam, textField, type UiContext, uiOf, type WebOptions } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import { sendPage } from '../respond.js';
import { refusal, sanitizedNotice } from './article.js';
import { accountContext } from './report.js';

const originLabels: Record<RevisionRow['origin'], string> = {
  api: 'API',
  mcp: 'MCP',
  editor: 'editor',
  rewrite: 'rewrite',
};

/**
 * The number people see for each revision id: 1 for the article's first, counting up, as
 * "version 3" of a document. Pages and their addresses name revisions by it, never by id.
 */
const revisionNumbers = (revisions: readonly RevisionSummary[]): Map<number, number> => new Map(revisions.map((r) => [r.id, r.number]));

/** A revision number from an address: a positive integer, else no revision of the article. */
function revisionNumber(value: string): number {
  if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2_147_483_647) throw new AppError('not_found', 'This article has no revision with this number.');
  return Number(value);
}

/** "Revision 3" for a revision number of the article shown. */
type RevisionName = (number: number) => string;

/** Who made a revision: the user, the API key, the assistant, or the content pipeline. */
function who(revision: RevisionSummary): SafeHtml {
  const parts: SafeHtml[] = [];
  if (revision.user_email) parts.push(html`<span class="who-user">${revision.user_email}</span>`);
  if (revision.key_name) parts.push(html`<span class="who-key">key “${revision.key_name}”</span>`);
  if (revision.client_name) parts.push(html`<span class="who-client">assistant “${revision.client_name}”</span>`);
  else if (revision.mcp_grant_id) parts.push(html`<span class="who-client">assistant connection #${revision.mcp_grant_id}</span>`);
  if (parts.length === 0) return html`<span class="muted">${revision.origin === 'rewrite' ? 'content pipeline' : 'unknown'}</span>`;
  return html`${parts.map((part, i) => html`${i > 0 ? html`<br>` : ''}${part}`)}`;
}

function renderDiff({ lines, notShown }: LineDiff): SafeHtml {
  const rest = notShown > 0 ? html`<span class="diff-line diff-skip">… ${notShown} more lines not shown …</span>` : '';
  return html`<div class="diff" role="region" aria-label="Differences in the body" tabindex="0">${lines.map((line: DiffLine) => {
    switch (line.kind) {
      case 'added':
        return html`<ins class="diff-line"><span class="diff-sign" aria-hidden="true">+</span><span class="visually-hidden">Added: </span>${line.text}</ins>`;
      case 'removed':
        return html`<del class="diff-line"><span class="diff-sign" aria-hidden="true">−</span><span class="visually-hidden">Removed: </span>${line.text}</del>`;
      case 'skipped':
        return html`<span class="diff-line diff-skip">… ${line.text} …</span>`;
      default:
        return html`<span class="diff-line"><span class="diff-sign" aria-hidden="true"> </span>${line.text}</span>`;
    }
  })}${rest}</div>`;
}

/** Two revisions and their bodies' diff (none when it took too long, or they are the same revision). */
type Compared = [RevisionRow, RevisionRow, LineDiff | undefined];

/** The body's part of a comparison: counts and lines, or why there are none. */
function bodyDiff(body: LineDiff | undefined): SafeHtml {
  if (!body) {
    return html`<h3>Body</h3>
<p class="muted">These two bodies differ in too many places to compare line by line in reasonable time. Compare revisions closer to each other.</p>`;
  }
  return html`<h3>Body <span class="muted thin small"><span class="diff-count-added">+${body.added}</span> <span class="diff-count-removed">−${body.removed}</span> lines</span></h3>
${body.added === 0 && body.removed === 0 ? html`<p class="muted">The bodies are identical.</p>` : renderDiff(body)}`;
}

/** Title, meta description and image compared side by side; the body as a line diff. */
function comparison(a: RevisionRow, b: RevisionRow, body: LineDiff | undefined, numberOf: (r: RevisionRow) => number): SafeHtml {
  const field = (label: string, before: string | null, after: string | null) =>
    before === after
      ? html`<tr><th scope="row">${label}</th><td colspan="2" class="muted">unchanged: ${after ?? '—'}</td></tr>`
      : html`<tr class="changed"><th scope="row">${label}</th><td><del>${before ?? '—'}</del></td><td><ins>${after ?? '—'}</ins></td></tr>`;
  return html`<div class="table-wrap"><table class="fields-diff">
<caption class="visually-hidden">Fields of revision ${numberOf(a)} and revision ${numberOf(b)}</caption>
<thead><tr><th scope="col">Field</th><th scope="col">A · revision ${numberOf(a)}</th><th scope="col">B · revision ${numberOf(b)}</th></tr></thead>
<tbody>
${field('Title', a.title, b.title)}
${field('Meta description', a.meta_description, b.meta_description)}
${field('Featured image', a.featured_image_url, b.featured_image_url)}
</tbody></table></div>
${bodyDiff(body)}`;
}

function diffSection([a, b, body]: Compared, numbers: Map<number, number>): SafeHtml {
  const when = (r: RevisionRow) => r.created_at.slice(0, 16).replace('T', ' ');
  const numberOf = (r: RevisionRow) => numbers.get(r.id)!;
  return html`<section class="card" aria-labelledby="diff-h" id="diff">
  <h2 id="diff-h">Revision ${numberOf(a)} <span class="muted thin">(A, ${when(a)})</span> compared with revision ${numberOf(b)} <span class="muted thin">(B, ${when(b)})</span></h2>
  ${a.id === b.id ? html`<p class="muted">You chose the same revision twice; pick two different ones.</p>` : comparison(a, b, body, numberOf)}
</section>`;
}

/** The revisions table: choose A and B to compare, restore any earlier one. */
function revisionTable(ui: UiContext, article: Omit<ArticleRow, 'body'>, revisions: RevisionSummary[], a: number | undefined, b: number | undefined, canEdit: boolean): SafeHtml {
  const currentId = article.current_revision_id ?? revisions[0]?.id;
  return html`<form id="compare" method="get" action="/app/articles/${article.id}/revisions/diff"></form>
${tableWrap(
  'Revisions, newest first, numbered from the first',
  html`<tr><th scope="col">A</th><th scope="col">B</th><th scope="col">Revision</th><th scope="col">Time</th><th scope="col">Origin</th><th scope="col">Who</th><th scope="col">Reason</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>`,
  revisions.map(
    (r) => html`<tr${r.id === currentId ? html` class="current"` : ''}>
  <td><input type="radio" form="compare" name="a" value="${r.number}" aria-label="Compare revision ${r.number} as A"${r.id === a ? html` checked` : ''}></td>
  <td><input type="radio" form="compare" name="b" value="${r.number}" aria-label="Compare revision ${r.number} as B"${r.id === b ? html` checked` : ''}></td>
  <td data-revision-number>${r.number}${r.id === currentId ? html` <span class="badge badge-current">current</span>` : ''}</td>
  <td>${timestamp(r.created_at)}</td>
  <td>${badge(originLabels[r.origin] ?? r.origin, r.origin)}</td>
  <td>${who(r)}</td>
  <td class="wrap">${r.reason ?? html`<span class="muted">—</span>`}</td>
  <td>${
    r.id === currentId
      ? html`<span class="muted small">current content</span>`
      : canEdit
        ? html`<form method="post" action="/app/articles/${article.id}/revisions/${r.number}/restore" data-confirm="Restore revision ${r.number}? This makes its content the current content (as a new revision).">
      ${csrfField(ui.session.csrfToken)}
      <button type="submit" class="small">Restore</button>
    </form>`
        : html`<button type="button" class="small" disabled title="Staff cannot restore other accounts’ articles">Restore</button>`
  }</td>
</tr>`,
  ),
  'This article has no revisions yet.',
)}
<p class="form-actions"><button type="submit" form="compare" class="primary">Compare A with B</button></p>`;
}

/** Revisions of an article: list, diff of any two, restore. */
export async function revisionPages(app: FastifyInstance, options: WebOptions) {
  const { services } = options;

  /** The page; the message may name revisions by their numbers, known once the list is read. */
  /** Two revisions with their bodies' diff, computed off the event loop unless they are small. */
  const compared = async (ui: UiContext, a: RevisionRow, b: RevisionRow): Promise<Compared> => [
    a,
    b,
    a.id === b.id ? undefined : await services.htmlPool.lineDiff(ui.actor.accountId, a.body, b.body),
  ];

  async function view(ui: UiContext, article: Omit<ArticleRow, 'body'>, extra: { message?: (name: RevisionName) => SafeHtml; compare?: Compared }) {
    const site = await services.sites.visible(ui.actor, article.site_id);
    const revisions = await services.revisions.list(article.id);
    const numbers = revisionNumbers(revisions);
    const name: RevisionName = (number) => (number >= 1 && number <= revisions.length ? `Revision ${number}` : 'The revision');
    const canEdit = article.account_id === ui.user.accountId;
    const a = extra.compare?.[0].id ?? revisions[1]?.id;
    const b = extra.compare?.[1].id ?? revisions[0]?.id;
    const title = article.title || `Article ${article.id}`;
    const where = await accountContext(options, ui, article.account_id);
    return {
      title: extra.compare ? `Compare revisions ${numbers.get(extra.compare[0].id)!} and ${numbers.get(extra.compare[1].id)!}` : `Revisions of ${title}`,
      active: 'sites' as const,
      scripts: ['/assets/copy.js'],
      body: html`<nav class="crumbs" aria-label="Breadcrumb">${where.root} <span aria-hidden="true">/</span> <a href="/app/sites/${site.id}">${site.name ?? `Site ${site.id}`}</a> <span aria-hidden="true">/</span> <a href="/app/articles/${article.id}">${title}</a> <span aria-hidden="true">/</span> <span aria-current="page">Revisions</span></nav>
${where.banner}
<div class="page-head">
  <div>
    <h1>Revisions <span class="muted thin">· ${title}</span></h1>
    <p class="muted">Every change is kept, with who made it, from where and why. Compare any two, or restore an earlier one: restoring adds a new revision with origin <em>editor</em>.</p>
  </div>
  <div class="actions"><a class="button" href="/app/articles/${article.id}">Back to the article</a></div>
</div>
${extra.message?.(name) ?? ''}
${extra.compare ? diffSection(extra.compare, numbers) : ''}
<section class="card" aria-labelledby="list-h">
  <h2 id="list-h">All revisions <span class="count">${revisions.length}</span></h2>
  ${revisionTable(ui, article, revisions, a, b, canEdit)}
</section>`,
    };
  }

  app.get<{ Params: { id: string }; Querystring: { restored?: string } }>('/app/articles/:id/revisions', async (request, reply) => {
    const ui = uiOf(request);
    const article = await services.articles.visibleWithoutBody(ui.actor, idParam(request.params.id, 'article'));
    const restored = textField(request.query.restored);
    const message = /^\d+$/.test(restored)
      ? (name: RevisionName) =>
          notice('success', html`${name(Number(restored))} was restored: its content is now the current content, recorded as a new revision with origin <em>editor</em>.`)
      : restored === 'same'
        ? () => notice('info', 'That revision has the same content as the current one; nothing changed.')
        : undefined;
    return sendPage(reply, ui, await view(ui, article, { message }));
  });

  app.get<{ Params: { id: string }; Querystring: { a?: string; b?: string } }>('/app/articles/:id/revisions/diff', async (request, reply) => {
    const ui = uiOf(request);
    const article = await services.articles.visibleWithoutBody(ui.actor, idParam(request.params.id, 'article'));
    const aText = textField(request.query.a);
    const bText = textField(request.query.b);
    if (!aText || !bText) {
      const message = () => notice('error', 'Choose two revisions to compare: one in column A and one in column B.');
      return sendPage(reply, ui, await view(ui, article, { message }), 422);
    }
    const aNumber = revisionNumber(aText);
    const bNumber = revisionNumber(bText);
    // One after the other: two 5 MB bodies read at once could be joined in one turn of the loop.
    const a = await services.revisions.byNumber(article.id, aNumber);
    const b = await services.revisions.byNumber(article.id, bNumber);
    if (!a || !b) throw new AppError('not_found', 'This article has no revision with this number.');
    return sendPage(reply, ui, await view(ui, article, { compare: await compared(ui, a, b) }));
  });

  app.post<{ Params: { id: string; number: string } }>('/app/articles/:id/revisions/:number/restore', async (request, reply) => {
    const ui = uiOf(request);
    const articleId = idParam(request.params.id, 'article');
    const number = revisionNumber(request.params.number);
    const article = await services.articles.visibleWithoutBody(ui.actor, articleId);
    if (article.account_id !== ui.user.accountId) {
      throw new AppError('forbidden', 'Staff can read other accounts’ articles but not restore their revisions.');
    }
    try {
      const result = await services.articleWrites.restore(ui.actor, articleId, number);
      if (result.sanitized.length > 0) {
        const message = (name: RevisionName) => html`${notice('success', `${name(number)} was restored.`)}${sanitizedNotice(result.sanitized)}`;
        return sendPage(reply, ui, await view(ui, await services.articles.visibleWithoutBody(ui.actor, articleId), { message }));
      }
      return reply.redirect(`/app/articles/${articleId}/revisions?restored=${result.changed ? number : 'same'}`, 303);
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500 || error.status === 403) throw error;
      const message = (name: RevisionName) =>
        error.code === 'protected_links_violation'
          ? notice(
              'error',
              html`<p><strong>${name(number)} was not restored.</strong> Anchorage inserted protected links after that revision was made, and restoring it would remove them. Protected links keep your backlink network intact, so they cannot be dropped — not even by a restore. The links concerned:</p>
${protectedLinkList(error.details.protected_links ?? [])}
<p>To bring back that revision’s wording, compare it with the current revision below, and copy the parts you want into <a href="/app/articles/${articleId}#edit">the editor</a>, keeping the protected links.</p>`,
            )
          : notice('error', refusal(error));
      // Show the refused revision against the current one, so its wording can be copied over.
      const currentId = article.current_revision_id;
      const a = await services.revisions.byNumber(articleId, number);
      const b = currentId ? await services.revisions.get(articleId, currentId) : undefined;
      return sendPage(reply, ui, await view(ui, article, { message, compare: a && b ? await compared(ui, a, b) : undefined }), error.status);
    }
  });
}
