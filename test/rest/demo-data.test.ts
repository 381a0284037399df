import { beforeAll, describe, expect, it } from 'vitest';
import { fittingSources } from '../../src/demo/data.js';
import { useHarness } from '../helpers/harness.js';

/**
 * The demo data set as a newcomer meets it over the API: every image it names is served by the
 * service, and every backlink comes from a source that fits the site's trade or area.
 */
const harness = useHarness();
let staffUserId: number;

beforeAll(async () => {
  await harness.services.demo.load();
  staffUserId = (await harness.services.users.byEmail('staff@anchorage.test'))!.id;
}, 120_000);

/** An admin key (reads every account), renewed every 50 requests to stay under the 60-per-minute limit. */
let uses = 0;
let key: string | undefined;
async function adminKey(): Promise<string> {
  if (!key || uses >= 50) {
    key = (await harness.services.keys.create(staffUserId, { name: `demo check ${Date.now()}` })).key;
    uses = 0;
  }
  uses += 1;
  return key;
}

async function get<T>(url: string): Promise<T> {
  const response = await harness.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${await adminKey()}` } });
  expect(response.statusCode, url).toBe(200);
  return response.json() as T;
}

/** Every item of a paginated list. */
async function all<T>(path: string): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; ; page++) {
    const { data, meta } = await get<{ data: T[]; meta: { last_page: number } }>(`${path}${path.includes('?') ? '&' : '?'}per_page=100&page=${page}`);
    items.push(...data);
    if (page >= meta.last_page) return items;
  }
}

interface Site {
  id: number;
  name: string;
  website_url: string;
  industry: string;
}

describe('demo data', () => {
  it('names only images the service serves itself, and each answers 200 image/*', async () => {
    const sites = await all<Site>('/api/v1/sites');
    expect(sites.length).toBeGreaterThanOrEqual(10);
    const images = new Set<string>();
    for (const site of sites) {
      const articles = await all<{ id: number; featured_image_url: string | null }>(`/api/v1/sites/${site.id}/articles`);
      for (const article of articles) if (article.featured_image_url) images.add(article.featured_image_url);
      // The body's images: one article per site is enough, the bodies share the trade's images.
      const { data } = await get<{ data: { body: string } }>(`/api/v1/articles/${articles[0]!.id}`);
      for (const [, src] of data.body.matchAll(/<img [^>]*src="([^"]+)"/g)) images.add(src!);
    }
    expect(images.size).toBeGreaterThanOrEqual(7);
    for (const image of images) {
      const url = new URL(image);
      expect(url.origin, image).toBe(harness.settings.publicUrl);
      const response = await harness.app.inject({ method: 'GET', url: url.pathname });
      expect(response.statusCode, image).toBe(200);
      expect(response.headers['content-type'], image).toMatch(/^image\//);
      expect(response.rawPayload.length, image).toBeGreaterThan(500);
    }
  }, 120_000);

  it('gives every site backlinks from sources of its own trade (industry) or area (local)', async () => {
    const sites = await all<Site>('/api/v1/sites');
    let checked = 0;
    for (const site of sites) {
      const fitting = fittingSources(site.website_url);
      expect(fitting.industry.length, site.name).toBeGreaterThan(0);
      const backlinks = await all<{ source_domain: string; category: 'industry' | 'local' }>(`/api/v1/sites/${site.id}/backlinks`);
      expect(backlinks.length, site.name).toBeGreaterThan(0);
      for (const backlink of backlinks) {
        expect(fitting[backlink.category], `${site.name} (${site.industry}): ${backlink.category} backlink from ${backlink.source_domain}`).toContain(
          backlink.source_domain,
        );
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(2000);
  }, 120_000);
});
