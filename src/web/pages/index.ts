import type { FastifyInstance } from 'fastify';
import { requireSignedIn, type WebOptions } from '../context.js';
import { activityPages } from './activity.js';
import { articlePages } from './article.js';
import { connectPages } from './connect.js';
import { reportPages } from './report.js';
import { revisionPages } from './revisions.js';
import { searchPages } from './search.js';
import { sitesPages } from './sites.js';
import { staffPages } from './staff.js';
import { staffImportPages } from './staff-imports.js';

/** Every signed-in page of the UI: one hook signs visitors in and checks CSRF on every POST. */
export async function signedInPages(app: FastifyInstance, options: WebOptions) {
  app.addHook('preHandler', requireSignedIn(options));
  await app.register(sitesPages, options);
  await app.register(reportPages, options);
  await app.register(articlePages, options);
  await app.register(revisionPages, options);
  await app.register(searchPages, options);
  await app.register(connectPages, options);
  await app.register(activityPages, options);
  await app.register(staffPages, options);
  await app.register(staffImportPages, options);
}
