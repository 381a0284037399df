import { beforeAll, describe, expect, it } from 'vitest';
import { ImportError } from '../../src/services/import.js';
import { createCustomer, useHarness } from '../helpers/harness.js';

const h = useHarness();
let owner: string;

const site = (article: Record<string, unknown>) => ({
  sites: [
    {
      owner,
      name: 'Import Site',
      website_url: 'https://i.example',
      articles: [{ title: 'T', url: 'https://i.example/t', status: 'draft', body: '<p>x</p>', ...article }],
      backlinks: [],
    },
  ],
});

async function refusal(input: unknown): Promise<ImportError> {
  const error = await h.services.importer.run(input).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportError);
  return error as ImportError;
}

beforeAll(async () => {
  owner = (await createCustomer(h.services)).email;
});

describe('import validation', () => {
  it('refuses U+0000 in text fields with the JSON path, and imports nothing', async () => {
    const before = await h.services.db.kysely.selectFrom('sites').select('id').execute();
    expect((await refusal(site({ title: 'a\u0000b' }))).path).toBe('$.sites[0].articles[0].title');
    expect((await refusal(site({ target_keyword: '\u0000' }))).path).toBe('$.sites[0].articles[0].target_keyword');
    expect(await h.services.db.kysely.selectFrom('sites').select('id').execute()).toEqual(before);
  });

  it('counts the title limit in code points', async () => {
    const result = await h.services.importer.run(site({ title: '😀'.repeat(255) }));
    expect(result.sites[0]!.article_ids).toHaveLength(1);
    expect((await refusal(site({ title: 'x'.repeat(256) }))).path).toBe('$.sites[0].articles[0].title');
  });
});
