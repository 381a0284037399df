import { beforeAll, describe, expect, it } from 'vitest';
import { ImportError } from '../../src/services/import.js';
import { createCustomer, useHarness } from '../helpers/harness.js';

// Import refuses the URLs the API refuses, with the JSON path, and
// imports nothing.

const h = useHarness();
let owner: string;

beforeAll(async () => {
  owner = (await createCustomer(h.services)).email;
});

const file = (site: Record<string, unknown> = {}, article: Record<string, unknown> = {}, backlink: Record<string, unknown> = {}) => ({
  sites: [
    {
      owner,
      name: 'URL site',
      website_url: 'https://site.example',
      ...site,
      articles: [{ title: 'T', url: 'https://site.example/t', status: 'draft', featured_image_url: 'https://img.example/a.jpg', body: '<p>x</p>', ...article }],
      backlinks: [{ source_url: 'https://source.example/p', target_url: 'https://site.example/t', category: 'industry', ...backlink }],
    },
  ],
});

const BAD_URLS = ['javascript:alert(1)', ' javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:x', 'ftp://x.example/a', 'file:///etc/passwd', '/relative/path', 'cover.jpg', ''];

const counts = async () => ({
  sites: (await h.services.db.kysely.selectFrom('sites').select('id').execute()).length,
  articles: (await h.services.db.kysely.selectFrom('articles').select('id').execute()).length,
  backlinks: (await h.services.db.kysely.selectFrom('backlinks').select('id').execute()).length,
});

async function refused(input: unknown): Promise<ImportError> {
  const error = await h.services.importer.run(input).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ImportError);
  return error as ImportError;
}

describe('import URL fields', () => {
  it.each([
    ['featured_image_url', (url: string) => file({}, { featured_image_url: url }), '$.sites[0].articles[0].featured_image_url'],
    ['article url', (url: string) => file({}, { url }), '$.sites[0].articles[0].url'],
    ['source_url', (url: string) => file({}, {}, { source_url: url }), '$.sites[0].backlinks[0].source_url'],
    ['target_url', (url: string) => file({}, {}, { target_url: url }), '$.sites[0].backlinks[0].target_url'],
  ])('%s: anything but an absolute http(s) URL is refused at its path, nothing imported', async (_field, make, path) => {
    const before = await counts();
    for (const url of BAD_URLS) {
      const error = await refused(make(url));
      expect(error.path, url).toBe(path);
      expect(error.message).toContain('Must be an absolute http or https URL.');
    }
    expect(await counts()).toEqual(before);
  });

  it('website_url: only its scheme is checked (it is shown and matched as written)', async () => {
    const before = await counts();
    for (const url of BAD_URLS) {
      expect((await refused(file({ website_url: url }))).path, url).toBe('$.sites[0].website_url');
    }
    expect(await counts()).toEqual(before);
    const result = await h.services.importer.run(file({ website_url: 'https://fifty%off.example' }));
    expect(result.sites).toHaveLength(1);
  });

  it('accepts http and https URLs, and null where a URL is not a key', async () => {
    const result = await h.services.importer.run(file({ website_url: 'http://site.example' }, { url: 'http://site.example/x', featured_image_url: null }, { source_url: 'HTTPS://Source.example/p?q=1' }));
    expect(result.sites[0]!.article_ids).toHaveLength(1);
    expect(result.sites[0]!.backlink_ids).toHaveLength(1);
  });

  it('requires the URLs that are keys, saying why', async () => {
    const keyless = await refused(file({ website_url: null }, { url: undefined }, { source_url: null, target_url: undefined }));
    expect(keyless.problems).toEqual([
      { path: '$.sites[0].website_url', message: 'Required: a site is matched by its owner and website_url.' },
      { path: '$.sites[0].articles[0].url', message: 'Required: an article is matched by its url.' },
      { path: '$.sites[0].backlinks[0].source_url', message: 'Required: a backlink is matched by its source_url and target_url.' },
      { path: '$.sites[0].backlinks[0].target_url', message: 'Required: a backlink is matched by its source_url and target_url.' },
    ]);
  });
});
