import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../src/services/index.js';

/** One article of an import file (the content pipeline's shape). */
export interface ArticleFixture {
  status: 'draft' | 'scheduled' | 'published' | 'archived';
  title?: string | null;
  url?: string | null;
  published_at?: string | null;
  target_keyword?: string | null;
  meta_description?: string | null;
  featured_image_url?: string | null;
  body?: string;
}

/** One backlink of an import file. */
export interface BacklinkFixture {
  category: 'industry' | 'local';
  acquired_at?: string | null;
  source_domain?: string | null;
  source_url?: string | null;
  target_url?: string | null;
  anchor_text?: string | null;
  anchor_type?: 'exact' | 'partial' | 'branded' | 'url' | 'generic' | null;
  status?: 'pending' | 'live' | 'lost' | null;
}

export interface SiteFixture {
  name?: string | null;
  website_url?: string | null;
  language?: string | null;
  country?: string | null;
  geographic_scope?: string | null;
  industry?: string | null;
  articles?: ArticleFixture[];
  backlinks?: BacklinkFixture[];
}

export interface SeededSite {
  siteId: number;
  articleIds: number[];
  backlinkIds: number[];
}

/** A short random token, so that fixtures of one test never match another test's filters. */
export const token = (): string => randomBytes(4).toString('hex');

/** `file` with a made-up import key for each row that has none (a new row each), as tests that build files by hand need. */
export function withImportKeys<T extends { sites: (SiteFixture & { owner: string })[] }>(file: T): T {
  return {
    ...file,
    sites: file.sites.map((site) => {
      const unique = token();
      return {
        ...site,
        website_url: site.website_url ?? `https://site-${unique}.example`,
        articles: site.articles?.map((a, i) => ({ ...a, url: a.url ?? `https://${unique}.example/article-${i}` })),
        backlinks: site.backlinks?.map((b, i) => ({ ...b, source_url: b.source_url ?? `https://source-${unique}.example/${i}`, target_url: b.target_url ?? `https://${unique}.example/` })),
      };
    }),
  };
}

/** Imports one site for `ownerEmail` through the operator path (the content pipeline's import). */
export async function seedSite(services: Services, ownerEmail: string, site: SiteFixture = {}): Promise<SeededSite> {
  const [seeded] = await seedSites(services, ownerEmail, [site]);
  return seeded!;
}

/**
 * Imports several sites for one owner in one import file; results in the given order. The import
 * needs every row's key (a site's `website_url`, an article's `url`, a backlink's `source_url`
 * and `target_url`): rows given without one are imported with a made-up one, which is then
 * cleared, so they are stored as a fixture gives them (as rows stored before import required keys).
 */
export async function seedSites(services: Services, ownerEmail: string, sites: SiteFixture[]): Promise<SeededSite[]> {
  const result = await services.importer.run({
    sites: sites.map((site) => {
      const unique = token();
      return {
        owner: ownerEmail,
        ...site,
        website_url: site.website_url ?? `https://site-${unique}.example`,
        articles: (site.articles ?? []).map((a, i) => ({ body: '', ...a, url: a.url ?? `https://${unique}.example/article-${i}` })),
        backlinks: (site.backlinks ?? []).map((b, i) => ({
          ...b,
          source_url: b.source_url ?? `https://source-${unique}.example/${i}`,
          target_url: b.target_url ?? `https://${unique}.example/`,
        })),
      };
    }),
  });
  const seeded = result.sites.map((s) => ({ siteId: s.id, articleIds: s.article_ids, backlinkIds: s.backlink_ids }));
  const db = services.db.kysely;
  const cleared = async <T>(rows: T[], ids: number[], given: (row: T) => unknown, clear: (ids: number[]) => Promise<unknown>) => {
    const keyless = ids.filter((_, i) => [undefined, null].includes(given(rows[i]!) as null));
    for (let i = 0; i < keyless.length; i += 500) await clear(keyless.slice(i, i + 500));
  };
  await cleared(sites, seeded.map((s) => s.siteId), (s) => s.website_url, (ids) => db.updateTable('sites').set({ website_url: null, website_url_lc: null }).where('id', 'in', ids).execute());
  for (const [i, site] of sites.entries()) {
    const { articleIds, backlinkIds } = seeded[i]!;
    await cleared(site.articles ?? [], articleIds, (a) => a.url, (ids) => db.updateTable('articles').set({ url: null }).where('id', 'in', ids).execute());
    for (const column of ['source_url', 'target_url'] as const) {
      await cleared(site.backlinks ?? [], backlinkIds, (b) => b[column], (ids) => db.updateTable('backlinks').set({ [column]: null }).where('id', 'in', ids).execute());
    }
  }
  return seeded;
}

export interface ApiResponse {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

/** A GET through `app.inject`, with the key as a Bearer token unless other headers are given. */
export async function apiGet(
  app: FastifyInstance,
  url: string,
  key?: string,
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  const response = await app.inject({
    method: 'GET',
    url,
    headers: { ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}), ...headers },
  });
  let body: unknown;
  try {
    body = response.json();
  } catch {
    body = undefined;
  }
  return { status: response.statusCode, body, headers: response.headers, text: response.body };
}

/** Every item of a list endpoint, paging with `per_page` until `last_page`. */
export async function collectPages(
  app: FastifyInstance,
  url: string,
  key: string,
  perPage: number,
): Promise<{ items: { id: number }[]; pages: number }> {
  const items: { id: number }[] = [];
  const sep = url.includes('?') ? '&' : '?';
  let page = 1;
  let lastPage: number;
  do {
    const res = await apiGet(app, `${url}${sep}page=${page}&per_page=${perPage}`, key);
    if (res.status !== 200) throw new Error(`page ${page}: ${res.status} ${res.text}`);
    items.push(...res.body.data);
    lastPage = res.body.meta.last_page;
    page += 1;
  } while (page <= lastPage);
  return { items, pages: lastPage };
}

export const articleFields = [
  'featured_image_url',
  'id',
  'published_at',
  'site_id',
  'status',
  'target_keyword',
  'title',
  'url',
  'word_count',
];
export const articleWithBodyFields = [...articleFields, 'body', 'meta_description', 'protected_links'].sort();
export const backlinkFields = [
  'acquired_at',
  'anchor_text',
  'anchor_type',
  'category',
  'id',
  'source_domain',
  'source_url',
  'status',
  'target_url',
];
export const siteFields = ['country', 'geographic_scope', 'id', 'industry', 'language', 'name', 'website_url'];
export const statsFields = [
  'articles_published',
  'backlinks_acquired',
  'backlinks_industry',
  'backlinks_local',
  'from',
  'site_id',
  'to',
];

/**
 * A new API key for an existing user. Every key has its own 60-requests-a-minute allowance, so
 * tests that make many requests take a fresh key each (`beforeEach`).
 */
export async function freshKey(services: Services, userId: number, options: { readOnly?: boolean } = {}): Promise<string> {
  return (await services.keys.create(userId, { name: `test-${token()}`, readOnly: options.readOnly })).key;
}
