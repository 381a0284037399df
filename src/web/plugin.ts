import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Settings } from '../config.js';
import { AppError, holdsNul, nulRefused, validationFailed } from '../core/errors.js';
import type { Services } from '../services/index.js';
import { logStorageFailure, toAppError } from '../http/errors.js';
import { html, type SafeHtml } from './html.js';
import { page } from './layout.js';
import { signedInPages } from './pages/index.js';
import { signInRoutes } from './sign-in.js';
import { signUpRoutes } from './sign-up.js';
import { welcomeRoutes } from './welcome.js';
import { connectionsRoutes } from './connections.js';
import { reportShareRoutes } from './pages/report-share.js';
import { formBodyParser } from '../http/json-body.js';

/** Strict CSP for every UI page: our own scripts and styles only, no inline script, no framing. */
export const uiContentSecurityPolicy = {
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'https:', 'data:'],
    connectSrc: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
  },
};

/**
 * The assets live in src/web/assets (tsc copies no files): resolved from the project root, this
 * is the same folder whether the code runs from src/web (tests) or dist/web (npm start).
 */
export const assetsDir = fileURLToPath(new URL('../../src/web/assets/', import.meta.url));

/** Chart.js's browser build, served by us (no CDN), found wherever npm installed it. */
const chartJsFile = join(dirname(createRequire(import.meta.url).resolve('chart.js')), 'chart.umd.min.js');

const errorTitles: Record<number, string> = { 403: 'Not allowed', 404: 'Not found', 429: 'Too many requests' };

/** An error as a page of the UI (with the navigation when someone is signed in). */
function errorPage(error: AppError, request: FastifyRequest): string {
  const fields = Object.entries(error.details.fields ?? {});
  const body: SafeHtml = html`<section class="card narrow error-page">
  <p class="eyebrow">Error ${error.status}</p>
  <h1>${errorTitles[error.status] ?? 'Something went wrong'}</h1>
  <p>${error.message}</p>
  ${fields.length > 0 ? html`<ul>${fields.map(([name, messages]) => html`<li><strong>${name}</strong>: ${messages.join(' ')}</li>`)}</ul>` : ''}
  <p><a class="button" href="/app">Back to your sites</a></p>
</section>`;
  return page({ title: errorTitles[error.status] ?? 'Something went wrong', body, user: request.ui?.user ?? null, csrfToken: request.ui?.session.csrfToken }).value;
}

/**
 * The fields of a form that hold U+0000 anywhere (`holdsNul`). No form of the UI has a use for
 * it: such a form is refused (422) before any handler reads it. Each form
 * checking its own fields missed some (a NUL in the sign-in e-mail, the sign-up form or a share
 * link's name answered 500 on PostgreSQL).
 */
function fieldsWithNul(body: unknown): string[] {
  if (typeof body !== 'object' || body === null) return [];
  return Object.entries(body).flatMap(([name, value]) => ([value].flat().some((text) => typeof text === 'string' && holdsNul(text)) ? [name] : []));
}

/** The web UI under /app, with its assets under /assets; HTML errors instead of JSON. */
export async function webPlugin(app: FastifyInstance, options: { services: Services; settings: Settings }) {
  // UI routes are not part of the API: keep them out of the OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  app.decorateRequest('ui', null);
  formBodyParser(app, options.services.htmlPool);
  app.addHook('preValidation', async (request) => {
    const fields = fieldsWithNul(request.body);
    if (fields.length > 0) throw validationFailed(Object.fromEntries(fields.map((name) => [name, [nulRefused]])));
  });
  await app.register(helmet, { contentSecurityPolicy: uiContentSecurityPolicy });
  await app.register(fastifyStatic, {
    root: assetsDir,
    prefix: '/assets/',
    maxAge: '1h',
  });
  let chartJs: Promise<Buffer> | undefined;
  app.get('/assets/vendor/chart.umd.min.js', async (_request, reply) => {
    chartJs ??= readFile(chartJsFile);
    return reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=86400')
      .send(await chartJs);
  });
  app.setErrorHandler((error, request, reply) => {
    const appError = error instanceof AppError ? error : toAppError(error, request);
    if (appError.code === 'internal_error') request.log.error({ err: error }, 'unhandled error');
    else logStorageFailure(error, request);
    if (appError.retryAfter !== undefined) reply.header('retry-after', appError.retryAfter);
    return reply.code(appError.status).type('text/html; charset=utf-8').send(errorPage(appError, request));
  });
  app.get('/', async (_request, reply) => reply.redirect('/app'));
  await app.register(signInRoutes, options);
  await app.register(signUpRoutes, options);
  await app.register(welcomeRoutes, options);
  await app.register(signedInPages, options);
  await app.register(connectionsRoutes, options);
  await app.register(reportShareRoutes, options);
}
