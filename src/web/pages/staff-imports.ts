import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, validationFailed } from '../../core/errors.js';
import { multipartBodyLimit } from '../../http/limits.js';
import type { ImportUpload, ImportUploadsService, PlannedSite, ReceivedFile } from '../../services/import-uploads.js';
import type { Tally } from '../../services/import.js';
import { csrfField, notice, tableWrap, timestamp } from '../components.js';
import type { UiContext, WebOptions } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import { sendPage } from '../respond.js';
import { staffOnly } from './staff.js';

const mib = +(multipartBodyLimit / 1_048_576).toFixed(1);

const crumbs = (current: string) =>
  html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/app/staff">Accounts</a> <span aria-hidden="true">/</span> ${current === 'Import' ? html`<span aria-current="page">Import</span>` : html`<a href="/app/staff/imports">Import</a> <span aria-hidden="true">/</span> <span aria-current="page">${current}</span>`}</nav>`;

function uploadForm(ui: UiContext, problem?: string): SafeHtml {
  return html`<section class="card" aria-labelledby="upload-h">
  <h2 id="upload-h">Upload an import file</h2>
  ${problem ? notice('error', problem) : ''}
  <form method="post" action="/app/staff/imports" enctype="multipart/form-data" class="stack">
    ${csrfField(ui.session.csrfToken)}
    <label for="im-file">Import file <span class="muted small">(JSON in the import format, at most ${mib} MiB; larger files: <code>anchorage import</code>)</span></label>
    <input id="im-file" name="file" type="file" accept=".json,application/json" required>
    <p class="muted small">The file is checked whole and planned first, as <code>anchorage import --dry-run</code> does: nothing is written until you apply it.</p>
    <div class="form-actions"><button type="submit" class="primary">Check the file</button></div>
  </form>
</section>`;
}

const tallyCells = (tally: Tally) => html`<td class="num">${tally.created}</td><td class="num">${tally.updated}</td><td class="num">${tally.unchanged}</td>`;

function sitesTable(caption: string, sites: PlannedSite[]): SafeHtml {
  return tableWrap(
    caption,
    html`<tr><th scope="col" rowspan="2">Site</th><th scope="col" rowspan="2">Site itself</th><th scope="colgroup" colspan="3">Articles</th><th scope="colgroup" colspan="3">Backlinks</th></tr>
<tr><th scope="col" class="num">new</th><th scope="col" class="num">updated</th><th scope="col" class="num">unchanged</th><th scope="col" class="num">new</th><th scope="col" class="num">updated</th><th scope="col" class="num">unchanged</th></tr>`,
    sites.map(
      (site, index) => html`<tr><td>${site.id === null ? html`New site <span class="muted small">(the file's site ${index + 1})</span>` : html`<a href="/app/sites/${site.id}">Site ${site.id}</a>`}</td><td>${site.site}</td>${tallyCells(site.articles)}${tallyCells(site.backlinks)}</tr>`,
    ),
    'The file holds no sites.',
  );
}

/** Rows an apply reads in all: the plan's sites, articles and backlinks. */
function totalOf(sites: PlannedSite[]): { sites: number; articles: number; backlinks: number } {
  const rows = (tally: Tally) => tally.created + tally.updated + tally.unchanged;
  return {
    sites: sites.length,
    articles: sites.reduce((sum, site) => sum + rows(site.articles), 0),
    backlinks: sites.reduce((sum, site) => sum + rows(site.backlinks), 0),
  };
}

/** The progress as the page shows it and the poller reads it. */
function progressOf(upload: ImportUpload) {
  const total = totalOf(upload.plan.sites);
  const done = upload.progress ?? { sites: 0, articles: 0, backlinks: 0 };
  return { state: upload.state, done, total, rows: done.sites + done.articles + done.backlinks, of: total.sites + total.articles + total.backlinks };
}

function uploadBody(ui: UiContext, token: string, upload: ImportUpload): SafeHtml {
  const head = html`<p class="muted">${(upload.size / 1024).toFixed(1)} KiB, uploaded ${timestamp(upload.created_at)}.</p>`;
  const { plan } = upload;
  if (upload.state === 'checking') {
    return html`${head}
<section class="card" aria-labelledby="progress-h" data-import-progress="/app/staff/imports/${token}/progress" data-import-state="checking">
  <h2 id="progress-h">Checking the file…</h2>
  <progress aria-labelledby="progress-h"></progress>
  <p>The file is read whole and planned against the data, as <code>anchorage import --dry-run</code> does; nothing is written.</p>
  <p class="muted small">This page shows the plan once the check is done; without JavaScript, <a href="/app/staff/imports/${token}">reload it</a>.</p>
</section>`;
  }
  if (upload.state === 'refused') {
    return html`${head}
${notice('error', html`The file has ${plan.problems.length + plan.more_problems} ${plan.problems.length + plan.more_problems === 1 ? 'problem' : 'problems'}: nothing can be imported from it. Fix them and upload it again.`)}
<section class="card" aria-labelledby="problems-h">
  <h2 id="problems-h">Problems</h2>
  <ol class="problems" data-problems>${plan.problems.map((problem) => html`<li><code>${problem.path}</code>: ${problem.message}</li>`)}</ol>
  ${plan.more_problems > 0 ? html`<p>… and ${plan.more_problems} more problems.</p>` : ''}
</section>
${uploadForm(ui)}`;
  }
  if (upload.state === 'planned') {
    return html`${head}
${notice('success', 'No problems. Nothing has been written yet: this is what applying the file does.')}
<section class="card" aria-labelledby="plan-h">
  <h2 id="plan-h">Plan</h2>
  ${sitesTable('What the import would do, per site', plan.sites)}
  <form method="post" action="/app/staff/imports/${token}/apply" class="stack">
    ${csrfField(ui.session.csrfToken)}
    <p class="muted small">The file is checked again when applied; if the data changed meanwhile so that it no longer passes, nothing is imported.</p>
    <div class="form-actions"><button type="submit" class="primary">Apply the import</button></div>
  </form>
</section>`;
  }
  if (upload.state === 'applying') {
    const progress = progressOf(upload);
    return html`${head}
<section class="card" aria-labelledby="progress-h" data-import-progress="/app/staff/imports/${token}/progress" data-import-state="applying">
  <h2 id="progress-h">Importing…</h2>
  <progress max="${progress.of}" value="${progress.rows}" aria-labelledby="progress-h"></progress>
  <p data-progress-text>${progress.rows} of ${progress.of} rows written (${progress.done.articles} of ${progress.total.articles} articles, ${progress.done.backlinks} of ${progress.total.backlinks} backlinks).</p>
  <p class="muted small">This page follows the import; without JavaScript, <a href="/app/staff/imports/${token}">reload it</a>.</p>
</section>`;
  }
  const outcome = upload.outcome;
  if (upload.state === 'applied' && outcome && 'sites' in outcome) {
    return html`${head}
${notice('success', 'The file was imported.')}
<section class="card" aria-labelledby="done-h">
  <h2 id="done-h">What the import did</h2>
  ${sitesTable('What the import did, per site', outcome.sites)}
</section>`;
  }
  const failed = outcome && 'error' in outcome ? outcome : { error: 'The import failed; nothing was imported.' as string, problems: undefined, more_problems: undefined };
  return html`${head}
${notice('error', failed.error)}
${failed.problems ? html`<section class="card"><ol class="problems" data-problems>${failed.problems.map((problem) => html`<li><code>${problem.path}</code>: ${problem.message}</li>`)}</ol>${(failed.more_problems ?? 0) > 0 ? html`<p>… and ${failed.more_problems} more problems.</p>` : ''}</section>` : ''}
${uploadForm(ui)}`;
}

type ImportForm = Record<string, string | ReceivedFile>;

/**
 * A multipart form's text fields (the first of each name) and its one file, in the field `file`,
 * streamed to the node's disk as it arrives (`ImportUploadsService.receive`): the event loop never
 * holds the whole file.
 */
async function readForm(request: FastifyRequest, uploads: ImportUploadsService): Promise<ImportForm> {
  const form: ImportForm = {};
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') {
          part.file.resume();
          throw validationFailed({ [part.fieldname]: ['Send the import file in the field file.'] });
        }
        const file = await uploads.receive(part.file);
        form.file = file;
        if (part.file.truncated) throw new request.server.multipartErrors.RequestFileTooLargeError();
      } else if (!Object.hasOwn(form, part.fieldname)) form[part.fieldname] = String(part.value);
    }
  } catch (error) {
    if (typeof form.file === 'object') await uploads.discard(form.file);
    const code = String((error as { code?: unknown }).code ?? '');
    if (code === 'FST_FILES_LIMIT') throw validationFailed({ file: ['Send one file.'] });
    // Limits (FST_*) and our own refusals keep their meaning; the parser's errors mean a malformed body.
    if (error instanceof AppError || code.startsWith('FST_')) throw error;
    throw new AppError('invalid_json', 'The request body is not valid multipart/form-data.');
  }
  return form;
}

/**
 * Staff's import in the UI: upload a file, follow its check, see its dry run (every problem, the
 * plan), apply it, follow its progress. The upload is multipart, with the API's multipart limits.
 */
export async function staffImportPages(app: FastifyInstance, options: WebOptions) {
  const { services } = options;
  await app.register(multipart, { limits: { fileSize: multipartBodyLimit, files: 1, fields: 10, parts: 12 } });
  // The form is read before the sign-in and CSRF check, which takes `_csrf` from the body.
  app.addHook('preValidation', async (request) => {
    if (request.isMultipart()) request.body = await readForm(request, services.importUploads);
  });
  // A received file no upload took (the request was refused, or failed) is deleted.
  app.addHook('onResponse', async (request) => {
    const file = (request.body as ImportForm | undefined)?.file;
    if (typeof file === 'object') await services.importUploads.discard(file);
  });

  const importPage = (ui: UiContext, problem?: string) => ({
    title: 'Import',
    active: 'staff' as const,
    body: html`${crumbs('Import')}
<div class="page-head"><div><h1>Import</h1><p class="muted">The content pipeline's delivery: sites, articles and backlinks, created or updated by their keys (docs/operations.md, "Import").</p></div></div>
${uploadForm(ui, problem)}`,
  });

  app.get('/app/staff/imports', async (request, reply) => {
    const ui = staffOnly(request);
    return sendPage(reply, ui, importPage(ui));
  });

  app.post<{ Body: Record<string, unknown> | undefined }>('/app/staff/imports', { bodyLimit: multipartBodyLimit }, async (request, reply) => {
    const ui = staffOnly(request);
    const file = request.body?.file as ReceivedFile | string | undefined;
    if (typeof file !== 'object' || file.size === 0) return sendPage(reply, ui, importPage(ui, 'Choose an import file (a JSON file in the import format).'), 422);
    const token = await services.importUploads.upload(ui.actor, ui.session.id, file);
    return reply.redirect(`/app/staff/imports/${token}`, 303);
  });

  app.get<{ Params: { token: string } }>('/app/staff/imports/:token', async (request, reply) => {
    const ui = staffOnly(request);
    const upload = await services.importUploads.get(ui.actor, ui.session.id, request.params.token);
    return sendPage(reply, ui, {
      title: 'Import',
      active: 'staff' as const,
      scripts: upload.state === 'checking' || upload.state === 'applying' ? ['/assets/import-progress.js'] : [],
      body: html`${crumbs('File')}
<div class="page-head"><div><h1>Import file</h1></div></div>
${uploadBody(ui, request.params.token, upload)}`,
    });
  });

  app.get<{ Params: { token: string } }>('/app/staff/imports/:token/progress', async (request, reply) => {
    const ui = staffOnly(request);
    const upload = await services.importUploads.get(ui.actor, ui.session.id, request.params.token);
    return reply.header('cache-control', 'no-store').send(progressOf(upload));
  });

  app.post<{ Params: { token: string } }>('/app/staff/imports/:token/apply', async (request, reply) => {
    const ui = staffOnly(request);
    await services.importUploads.apply(ui.actor, ui.session.id, request.params.token);
    return reply.redirect(`/app/staff/imports/${request.params.token}`, 303);
  });
}
