import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ARTICLE_TEXT_LIMITS } from '../../core/article-rules.js';
import { AppError } from '../../core/errors.js';
import { type FoundMatch, MAX_QUERY_CHARS, MIN_QUERY_CHARS } from '../../core/text-search.js';
import type { SiteRow } from '../../db/schema.js';
import { replaceInSite, searchArticles } from '../../operations/site-text.js';
import type { SearchHit } from '../../services/search.js';
import type { SiteReplaceResult } from '../../services/site-replace.js';
import { csrfField, notice, pager, protectedLinkList, queryString, tableWrap } from '../components.js';
import { idParam, pageParam, textField, type UiContext, uiOf, type WebOptions } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import { siteHeading } from '../report-view.js';
import { sendPage } from '../respond.js';

/** What the search and replace forms carry. */
interface SearchForm {
  q: string;
  matchCase: boolean;
  replace: string;
  reason: string;
}

const formOf = (fields: Record<string, unknown> | undefined): SearchForm => ({
  q: textField(fields?.q),
  matchCase: textField(fields?.match_case) === 'true',
  replace: textField(fields?.replace),
  reason: textField(fields?.reason),
});

/** The refusal of `q` by the operation's own rules (the API's messages), if any. */
function queryProblem(q: string): string | undefined {
  const parsed = searchArticles.input.shape.q.safeParse(q);
  return parsed.success ? undefined : parsed.error.issues.map((issue) => issue.message).join(' ');
}

const matchLine = (match: FoundMatch): SafeHtml =>
  html`<li><span class="muted">${match.field === 'title' ? 'Title' : `Body, character ${match.offset}`}:</span> <code>…${match.before}<mark>${match.text}</mark>${match.after}…</code></li>`;

const hitRow = (hit: Pick<SearchHit, 'id' | 'title' | 'count' | 'matches'>): SafeHtml =>
  html`<tr data-article-id="${hit.id}"><td><a href="/app/articles/${hit.id}">${hit.title || `Article ${hit.id}`}</a></td><td class="num">${hit.count}</td><td><ul class="plain">${hit.matches.map(matchLine)}</ul></td></tr>`;

const hiddenFields = (ui: UiContext, form: SearchForm): SafeHtml =>
  html`${csrfField(ui.session.csrfToken)}<input type="hidden" name="q" value="${form.q}"><input type="hidden" name="match_case" value="${form.matchCase ? 'true' : 'false'}">`;

function searchBox(site: SiteRow, form: SearchForm): SafeHtml {
  return html`<form class="filters" method="get" action="/app/sites/${site.id}/search" role="search">
  <label for="search-q">Find in articles</label>
  <input id="search-q" name="q" type="search" minlength="${MIN_QUERY_CHARS}" maxlength="${MAX_QUERY_CHARS}" required value="${form.q}">
  <label><input type="checkbox" name="match_case" value="true"${form.matchCase ? html` checked` : ''}> Match case</label>
  <button type="submit" class="button">Search</button>
</form>`;
}

function replaceForm(ui: UiContext, site: SiteRow, form: SearchForm): SafeHtml {
  return html`<section class="card" aria-labelledby="replace-h">
  <h2 id="replace-h">Replace…</h2>
  <p class="muted">Replaces “${form.q}” in the body of every article above (titles stay as they are). You see a preview first; nothing is saved until you confirm. Protected links cannot be changed.</p>
  <form method="post" action="/app/sites/${site.id}/replace/preview" class="stack">
    ${hiddenFields(ui, form)}
    <label for="replace-with">Replace with</label>
    <input id="replace-with" name="replace" type="text" value="${form.replace}">
    <label for="replace-reason">Reason (kept with each revision)</label>
    <input id="replace-reason" name="reason" type="text" maxlength="${ARTICLE_TEXT_LIMITS.reason}" value="${form.reason}">
    <div class="form-actions"><button type="submit" class="primary">Preview replacement</button></div>
  </form>
</section>`;
}

/** A site-wide replace's refusal in words, with the articles a protected link stopped. */
function refusal(error: AppError): SafeHtml {
  const body = error.toBody();
  const articles = body.articles ?? [];
  const fields = Object.values(body.fields ?? {}).flat();
  return notice(
    'error',
    html`${error.message} ${fields.join(' ')}${articles.length > 0 ? html`<ul>${articles.map((article) => html`<li><a href="/app/articles/${article.article_id}">Article ${article.article_id}</a>: ${protectedLinkList(article.protected_links)}</li>`)}</ul>` : ''}`,
  );
}

/** The site's search page and its site-wide replace, with a dry-run preview before anything is saved. */
export async function searchPages(app: FastifyInstance, options: WebOptions) {
  const { services } = options;

  async function render(ui: UiContext, site: SiteRow, form: SearchForm, page: number, extra: { message?: SafeHtml; preview?: SiteReplaceResult } = {}) {
    const problem = form.q === '' ? undefined : queryProblem(form.q);
    const found = form.q === '' || problem ? undefined : await services.search.search(ui.actor, site.id, { q: form.q, match_case: form.matchCase, page, per_page: 25 });
    const owned = site.account_id === ui.user.accountId;
    return {
      title: `Search · ${site.name ?? `Site ${site.id}`}`,
      active: 'sites' as const,
      body: html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/app">Sites</a> <span aria-hidden="true">/</span> <a href="/app/sites/${site.id}">${siteHeading(site)}</a> <span aria-hidden="true">/</span> <span aria-current="page">Search</span></nav>
<div class="page-head"><div><h1>Search the articles of ${siteHeading(site)}</h1></div></div>
${extra.message ?? ''}
${problem ? notice('error', problem) : ''}
<section class="card">${searchBox(site, form)}</section>
${extra.preview ? previewSection(ui, site, form, extra.preview) : ''}
${found
  ? html`<section class="card" aria-labelledby="results-h">
  <h2 id="results-h">${found.meta.total} article${found.meta.total === 1 ? '' : 's'} with “${form.q}”</h2>
  ${tableWrap('Search results', html`<tr><th scope="col">Article</th><th scope="col">Matches</th><th scope="col">Where</th></tr>`, found.data.map(hitRow), 'No article holds this text.')}
  ${pager(found.meta, (p) => `/app/sites/${site.id}/search${queryString({ q: form.q, match_case: form.matchCase ? 'true' : undefined, page: p })}`, 'Search results')}
</section>
${owned && found.meta.total > 0 && !extra.preview ? replaceForm(ui, site, form) : ''}`
  : ''}`,
    };
  }

  function previewSection(ui: UiContext, site: SiteRow, form: SearchForm, preview: SiteReplaceResult): SafeHtml {
    const rows = preview.data.map((item) => hitRow({ id: item.article_id, title: null, count: item.occurrences, matches: item.matches ?? [] }));
    return html`<section class="card" aria-labelledby="preview-h" data-replace-preview>
  <h2 id="preview-h">Preview: ${preview.meta.occurrences} occurrence${preview.meta.occurrences === 1 ? '' : 's'} in ${preview.meta.articles} article${preview.meta.articles === 1 ? '' : 's'} become “${form.replace}”</h2>
  ${tableWrap('Replacement preview', html`<tr><th scope="col">Article</th><th scope="col">Occurrences</th><th scope="col">First ones</th></tr>`, rows, 'No article body holds this text.')}
  <form method="post" action="/app/sites/${site.id}/replace" class="form-actions">
    ${hiddenFields(ui, form)}<input type="hidden" name="replace" value="${form.replace}"><input type="hidden" name="reason" value="${form.reason}">
    <button type="submit" class="primary danger">Replace in ${preview.meta.articles} article${preview.meta.articles === 1 ? '' : 's'}</button>
    <a class="button" href="/app/sites/${site.id}/search${queryString({ q: form.q, match_case: form.matchCase ? 'true' : undefined })}">Cancel</a>
  </form>
</section>`;
  }

  const siteOf = (ui: UiContext, id: string) => services.sites.visible(ui.actor, idParam(id, 'site'));

  app.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>('/app/sites/:id/search', async (request, reply) => {
    const ui = uiOf(request);
    const site = await siteOf(ui, request.params.id);
    const form = formOf(request.query);
    const replaced = textField(request.query.replaced);
    const message = /^\d+$/.test(replaced) ? notice('success', `Replaced in ${replaced} article${replaced === '1' ? '' : 's'}; each has a new revision.`) : undefined;
    const page = await render(ui, site, form, pageParam(request.query.page), { message });
    return sendPage(reply, ui, page, form.q !== '' && queryProblem(form.q) ? 422 : 200);
  });

  /** Runs the replace (or its dry run); a refusal is shown on the page, with nothing saved. */
  async function replaceFrom(request: FastifyRequest<{ Params: { id: string }; Body: Record<string, unknown> }>, dryRun: boolean) {
    const ui = uiOf(request);
    const site = await siteOf(ui, request.params.id);
    const form = formOf(request.body);
    const input = replaceInSite.input.omit({ site_id: true, dry_run: true }).safeParse({ find: form.q, replace: form.replace, match_case: form.matchCase, ...(form.reason ? { reason: form.reason } : {}) });
    if (!input.success) return { ui, site, form, error: new AppError('validation_failed', input.error.issues.map((issue) => issue.message).join(' ')) };
    try {
      const result = await services.siteReplace.replace(ui.actor, site.id, { ...input.data, match_case: form.matchCase }, { dryRun });
      return { ui, site, form, result };
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      return { ui, site, form, error };
    }
  }

  app.post<{ Params: { id: string }; Body: Record<string, unknown> }>('/app/sites/:id/replace/preview', async (request, reply) => {
    const { ui, site, form, result, error } = await replaceFrom(request, true);
    if (error) return sendPage(reply, ui, await render(ui, site, form, 1, { message: refusal(error) }), error.status);
    return sendPage(reply, ui, await render(ui, site, form, 1, { preview: result }));
  });

  app.post<{ Params: { id: string }; Body: Record<string, unknown> }>('/app/sites/:id/replace', async (request, reply) => {
    const { ui, site, form, result, error } = await replaceFrom(request, false);
    if (error) return sendPage(reply, ui, await render(ui, site, form, 1, { message: refusal(error) }), error.status);
    // POST-redirect-GET: a reload never replaces twice.
    return reply.redirect(`/app/sites/${site.id}/search${queryString({ q: form.q, match_case: form.matchCase ? 'true' : undefined, replaced: result!.meta.articles })}`, 303);
  });
}
