/**
 * A small program written against the client generated from the served OpenAPI document
 * (openapi-typescript types, openapi-fetch calls). test/rest/openapi-client.test.ts generates the
 * types, compiles this folder with tsc and runs `retitleFirstArticle` against a live service.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from 'anchorage-openapi';

export type ArticleWithBody = components['schemas']['ArticleWithBody'];

export interface Outcome {
  article: ArticleWithBody;
  /** The status of a GET that sent the new ETag back as If-None-Match. */
  revalidated: number;
  /** The Error body of a PATCH with the old, now stale ETag. */
  stale: components['schemas']['Error'];
}

/** Finds the first published article of the first site, gives it a new title, and revalidates it. */
export async function retitleFirstArticle(baseUrl: string, key: string, title: string): Promise<Outcome> {
  const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${key}` } });

  const sites = await client.GET('/api/v1/sites', { params: { query: { per_page: 10 } } });
  if (!sites.data) throw new Error(`listSites: ${sites.error.message}`);
  const siteId: number = sites.data.data[0]!.id;

  const articles = await client.GET('/api/v1/sites/{id}/articles', {
    params: { path: { id: siteId }, query: { status: 'published', page: 1 } },
  });
  if (!articles.data) throw new Error(`listArticles: ${articles.error.message}`);
  const id = articles.data.data[0]!.id;

  const read = await client.GET('/api/v1/articles/{id}', { params: { path: { id } } });
  if (!read.data) throw new Error(`getArticle: ${read.error.message}`);
  const etag = read.response.headers.get('etag') ?? '';

  const patched = await client.PATCH('/api/v1/articles/{id}', {
    params: { path: { id }, header: { 'if-match': etag } },
    body: { title, reason: 'Retitled by the typed client' },
  });
  if (!patched.data) throw new Error(`editArticle: ${patched.error.message}`);
  const newETag = patched.response.headers.get('etag') ?? '';

  const again = await client.GET('/api/v1/articles/{id}', {
    params: { path: { id }, header: { 'if-none-match': newETag } },
  });

  const stale = await client.PATCH('/api/v1/articles/{id}', {
    params: { path: { id }, header: { 'if-match': etag } },
    body: { title: `${title} again` },
  });
  if (!stale.error) throw new Error('editArticle with a stale ETag was accepted');

  return { article: patched.data.data, revalidated: again.response.status, stale: stale.error };
}
