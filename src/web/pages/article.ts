import type { FastifyInstance } from 'fastify';
import { ARTICLE_TEXT_LIMITS as limits, articleFieldProblems, blankTitle } from '../../core/article-rules.js';
import { AppError } from '../../core/errors.js';
import type { ArticleRow } from '../../db/schema.js';
import { articleETag, type ArticleWithBody, toArticleWithBody } from '../../services/articles.js';
import type { WriteResult } from '../../services/article-states.js';
import { badge, csrfField, day, externalLink, notice, protectedLinkList } from '../components.js';
import { idParam, textField, type UiContext, uiOf, type WebOptions } from '../context.js';
import { escapedInParts, html, type SafeHtml } from '../html.js';
import { featuredImage, previewBody } from '../images.js';
import { sendPage } from '../respond.js';
import { accountContext } from './report.js';

/** What the editor shows in its fields: the stored article, or what the user just submitted. */
export interface EditorValues {
  title: string;
  meta_description: string;
  body: string;
  reason: string;
  etag: string;
}

interface EditorForm {
  title?: unknown;
  meta_description?: unknown;
  body?: unknown;
  reason?: unknown;
  etag?: unknown;
}

/** Browsers submit textarea line breaks as CRLF; stored bodies use LF. */
const lf = (text: string): string => text.replace(/\r\n?/g, '\n');

/** An error of a refused save, said so that the person at the editor knows what to do. */
export function refusal(error: AppError): SafeHtml {
  switch (error.code) {
    case 'protected_links_violation':
      return html`<p><strong>Not saved: your edit removes or changes protected links.</strong> These links were inserted by Anchorage for your backlink network and must stay exactly as they are (you may move them, but not change their address, text or attributes). Put these back:</p>
${protectedLinkList(error.details.protected_links ?? [])}`;
    case 'precondition_failed':
      return html`<p><strong>Not saved: the article was changed elsewhere since you opened it</strong> (through the API, an assistant or another editor). Your text is still in the form below: copy what you need, <a href="">reload the article</a> and apply your change again.</p>`;
    case 'replacement_failed':
      return html`<p><strong>Not saved:</strong> the article changed while you were editing it. Reload it and apply your change again.</p>`;
    case 'validation_failed':
      return html`<p><strong>Not saved:</strong> please check these fields.</p>
<ul>${Object.entries(error.details.fields ?? {}).map(([field, messages]) => html`<li><strong>${field.replace('_', ' ')}</strong>: ${messages.join(' ')}</li>`)}</ul>`;
    default:
      return html`<p><strong>Not saved:</strong> ${error.message}</p>`;
  }
}

/** What the sanitiser took out of a saved body (meta.sanitized of the API). */
export function sanitizedNotice(sanitized: readonly string[]): SafeHtml {
  if (sanitized.length === 0) return html``;
  return notice(
    'warning',
    html`<p><strong>Saved, but some markup was removed</strong> because articles may only contain safe HTML (no scripts, styles, frames, forms or event handlers):</p>
<ul>${sanitized.map((item) => html`<li>${item}</li>`)}</ul>`,
  );
}

function articleHead(article: ArticleWithBody, siteName: string, siteId: number, root: SafeHtml): SafeHtml {
  return html`<nav class="crumbs" aria-label="Breadcrumb">${root} <span aria-hidden="true">/</span> <a href="/app/sites/${siteId}">${siteName}</a> <span aria-hidden="true">/</span> <span aria-current="page">${article.title || `Article ${article.id}`}</span></nav>`;
}

function facts(article: ArticleWithBody): SafeHtml {
  return html`<ul class="facts">
  <li>${badge(article.status)}</li>
  <li>Published ${day(article.published_at)}</li>
  ${article.target_keyword ? html`<li>Keyword <strong>${article.target_keyword}</strong></li>` : ''}
  <li>${article.word_count ?? 0} words</li>
  ${article.url ? html`<li>${externalLink(article.url, 'View on the website')}</li>` : ''}
</ul>`;
}

/** The editor: title, meta description and HTML body, with the protected links locked. */
function editor(ui: UiContext, article: ArticleWithBody, values: EditorValues, body: SafeHtml, canEdit: boolean): SafeHtml {
  const links = JSON.stringify(article.protected_links);
  return html`<section class="card editor" aria-labelledby="editor-h" id="edit">
  <h2 id="editor-h">Edit the article</h2>
  ${
    canEdit
      ? html`<p class="muted">Saving records a new revision (origin <em>editor</em>) with your name and reason. The body is cleaned with the same rules as the API, in the rich-text and the HTML view alike.</p>`
      : html`<p class="notice notice-info">Editing is disabled: staff can read other accounts’ articles but not change them.</p>`
  }
  <form method="post" action="/app/articles/${article.id}" class="stack" id="editor-form">
    ${csrfField(ui.session.csrfToken)}
    <input type="hidden" name="etag" value="${values.etag}">
    <fieldset${canEdit ? '' : html` disabled`}>
      <legend class="visually-hidden">Article content</legend>
      <label for="title">Title</label>
      <input id="title" name="title" type="text" value="${values.title}" maxlength="${limits.title}" required>
      <label for="meta_description">Meta description <span class="muted small" data-counter-for="meta_description">(up to ${limits.meta_description} characters)</span></label>
      <textarea id="meta_description" name="meta_description" rows="3" maxlength="${limits.meta_description}">${values.meta_description}</textarea>
      <label for="body">HTML body</label>
      <p class="hint" id="body-hint"><span class="lock" aria-hidden="true"></span> Protected links are locked: keep every <code>&lt;a … data-service-protected&gt;</code> link exactly as it is. You may move it, but not change its address, text or attributes.</p>
      <div class="guard-status" id="guard-status" role="status" aria-live="polite" hidden></div>
      <textarea id="body" name="body" rows="22" class="code" spellcheck="false" aria-describedby="body-hint" data-protected-links="${links}">
${body}</textarea>
      <label for="reason">Reason for the change <span class="muted small">(optional, shown in the revisions)</span></label>
      <input id="reason" name="reason" type="text" value="${values.reason}" maxlength="${limits.reason}" placeholder="e.g. Updated opening hours">
      <div class="form-actions">
        <button type="submit" class="primary">Save changes</button>
        <a class="button" href="/app/articles/${article.id}/revisions">Revisions</a>
      </div>
    </fieldset>
  </form>
</section>`;
}

/** The whole article page: preview, protected links, editor. */
async function articlePage(
  options: WebOptions,
  ui: UiContext,
  row: ArticleRow,
  extra: { message?: SafeHtml; values?: EditorValues },
): Promise<{ title: string; body: SafeHtml }> {
  const { services } = options;
  const article = toArticleWithBody(row);
  const site = await services.sites.visible(ui.actor, row.site_id);
  const canEdit = row.account_id === ui.user.accountId;
  const values = extra.values ?? {
    title: article.title ?? '',
    meta_description: article.meta_description ?? '',
    body: article.body,
    reason: '',
    etag: articleETag(row),
  };
  const siteName = site.name ?? `Site ${site.id}`;
  const links = article.protected_links;
  const where = await accountContext(options, ui, row.account_id);
  return {
    title: article.title || `Article ${article.id}`,
    body: html`${articleHead(article, siteName, site.id, where.root)}
${where.banner}
<div class="page-head">
  <div>
    <h1>${article.title || html`<span class="muted">Untitled article ${article.id}</span>`}</h1>
    ${facts(article)}
  </div>
  <div class="actions">
    <a class="button" href="/app/articles/${article.id}/revisions">Revisions</a>
    ${canEdit ? html`<a class="button primary" href="#edit">Edit</a>` : ''}
  </div>
</div>
${extra.message ?? ''}
<div class="article-layout">
  <section class="card preview" aria-labelledby="preview-h">
    <h2 id="preview-h" class="eyebrow">Preview</h2>
    ${article.meta_description ? html`<p class="meta-description"><span class="muted small">Meta description</span><br>${article.meta_description}</p>` : ''}
    ${
      article.featured_image_url
        ? html`<figure class="featured-figure">
      <figcaption class="muted small">Featured image</figcaption>
      ${featuredImage(article.featured_image_url, options.settings.publicUrl, `Featured image of “${article.title || `article ${article.id}`}”`)}
    </figure>`
        : ''
    }
    <article class="prose" lang="${site.language ?? 'en'}">
      <h1 class="prose-title">${article.title ?? ''}</h1>
      ${previewBody(article.body, options.settings.publicUrl)}
    </article>
  </section>
  <aside class="card locked" aria-labelledby="locked-h">
    <h2 id="locked-h"><span class="lock" aria-hidden="true"></span> Protected links <span class="count">${links.length}</span></h2>
    ${
      links.length > 0
        ? html`<p class="muted small">Anchorage inserted these links (backlinks for your network and internal links). They are highlighted in the preview and cannot be removed or changed, by you, the API or an assistant.</p>
    ${protectedLinkList(links)}`
        : html`<p class="muted small">This article has no protected links: everything in it can be edited.</p>`
    }
  </aside>
</div>
${editor(ui, article, values, await escapedInParts(values.body), canEdit)}`,
  };
}

/** The article page and its editor (origin `editor`, same sanitiser and guard as the API). */
export async function articlePages(app: FastifyInstance, options: WebOptions) {
  const { services } = options;

  app.get<{ Params: { id: string }; Querystring: { saved?: string } }>('/app/articles/:id', async (request, reply) => {
    const ui = uiOf(request);
    const row = await services.articles.visible(ui.actor, idParam(request.params.id, 'article'));
    const saved = request.query.saved;
    const message =
      saved === '1'
        ? notice('success', html`Saved. A new revision with origin <em>editor</em> was recorded; see <a href="/app/articles/${row.id}/revisions">the revisions</a>.`)
        : saved === '0'
          ? notice('info', 'Nothing changed, so no revision was recorded.')
          : undefined;
    const view = await articlePage(options, ui, row, { message });
    return sendPage(reply, ui, { ...view, active: 'sites', scripts: ['/assets/editor.js', '/assets/rich-editor.js', '/assets/images.js'] });
  });

  app.post<{ Params: { id: string }; Body: EditorForm }>('/app/articles/:id', async (request, reply) => {
    const ui = uiOf(request);
    const articleId = idParam(request.params.id, 'article');
    const current = await services.articles.visible(ui.actor, articleId);
    if (current.account_id !== ui.user.accountId) {
      throw new AppError('forbidden', 'Staff can read other accounts’ articles but not change them.');
    }
    const form = request.body ?? {};
    const values: EditorValues = {
      title: textField(form.title).trim(),
      meta_description: lf(textField(form.meta_description)).trim(),
      body: lf(textField(form.body)),
      reason: textField(form.reason).trim(),
      etag: textField(form.etag),
    };
    const rerender = async (message: SafeHtml, status: number) => {
      const view = await articlePage(options, ui, current, { message, values });
      return sendPage(reply, ui, { ...view, active: 'sites', scripts: ['/assets/editor.js', '/assets/rich-editor.js', '/assets/images.js'] }, status);
    };

    const fields = articleFieldProblems(values);
    if (fields.title?.[0] === blankTitle) fields.title[0] = 'Give the article a title.';
    if (Object.keys(fields).length > 0) {
      return rerender(notice('error', refusal(new AppError('validation_failed', 'Invalid.', { fields }))), 422);
    }

    const changes: { title?: string; meta_description?: string } = {};
    if (values.title !== (current.title ?? '')) changes.title = values.title;
    if (values.meta_description !== (current.meta_description ?? '')) changes.meta_description = values.meta_description;
    const bodyChanged = values.body !== lf(current.body);
    if (!bodyChanged && changes.title === undefined && changes.meta_description === undefined) {
      return reply.redirect(`/app/articles/${articleId}?saved=0`, 303);
    }

    const reason = values.reason || undefined;
    const ifMatch = values.etag || undefined;
    let result: WriteResult;
    try {
      // One save, one revision: title, meta description and the whole body (PUT rules), under If-Match.
      result = await services.articleWrites.replace(
        ui.actor,
        articleId,
        { ...changes, body: bodyChanged ? values.body : current.body, reason },
        { ifMatch },
      );
    } catch (error) {
      if (error instanceof AppError && error.status < 500 && error.status !== 403 && error.status !== 404) {
        return rerender(notice('error', refusal(error)), error.status);
      }
      throw error;
    }
    if (result.sanitized.length > 0) {
      const saved = await services.articles.visible(ui.actor, articleId);
      const view = await articlePage(options, ui, saved, { message: sanitizedNotice(result.sanitized) });
      return sendPage(reply, ui, { ...view, active: 'sites', scripts: ['/assets/editor.js', '/assets/rich-editor.js', '/assets/images.js'] });
    }
    return reply.redirect(`/app/articles/${articleId}?saved=${result.changed ? 1 : 0}`, 303);
  });
}
