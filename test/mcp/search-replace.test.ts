import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { BACKLINK } from '../helpers/write-fixtures.js';
import { manualGrant } from '../helpers/oauth-client.js';

/**
 * An assistant's "find every article with our old number and fix it", through the official MCP
 * client: search_articles, a dry run of replace_in_site, the refusal it recovers from with
 * article_ids, then the replace itself.
 */

// Results of at most 4,000 characters of JSON (half the bound), so that 100 articles pass it.
const harness = useHarness({ listen: true, env: { MCP_RESULT_MAX_CHARS: '8000' } });
let base: string;

beforeAll(async () => {
  base = harness.settings.publicUrl;
});

interface Result {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
}

async function connect(email: string, access: 'read' | 'write') {
  const { tokens } = await manualGrant(base, email, { access });
  const client = new Client({ name: 'search-replace', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), {
      requestInit: { headers: { authorization: `Bearer ${tokens.access_token as string}` } },
    }),
  );
  return client;
}

describe('search_articles and replace_in_site over MCP', () => {
  it('finds, previews, recovers from a protected link and replaces', async () => {
    const customer = await createCustomer(harness.services);
    const { siteId, articleIds } = await seedSite(harness.services, customer.email, {
      articles: [
        { status: 'published', title: 'Contact', published_at: '2026-10-01T09:00:00Z', body: '<p>Ring 555-0100 now.</p>' },
        { status: 'published', title: 'Partner', published_at: '2026-10-02T09:00:00Z', body: `<p>${BACKLINK} and 555-0100</p>` },
      ],
    });
    const client = await connect(customer.email, 'write');
    const { tools } = await client.listTools();
    const search = tools.find((tool) => tool.name === 'search_articles')!;
    const replace = tools.find((tool) => tool.name === 'replace_in_site')!;
    expect(search.annotations?.readOnlyHint).toBe(true);
    expect(replace.annotations?.destructiveHint).toBe(true);
    for (const tool of [search, replace]) expect(tool.description!.length).toBeLessThanOrEqual(420);

    const found = (await client.callTool({ name: 'search_articles', arguments: { site_id: siteId, q: '555-0100', per_page: 1 } })) as Result;
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent).toMatchObject({ meta: { total: 2, last_page: 2 } });

    const short = (await client.callTool({ name: 'search_articles', arguments: { site_id: siteId, q: '55' } })) as Result;
    expect(short.isError).toBe(true);
    expect(JSON.parse(short.content[0]!.text).fields.q[0]).toMatch(/At least 3 characters/);

    const refused = (await client.callTool({ name: 'replace_in_site', arguments: { site_id: siteId, find: 'partner page', replace: 'x', dry_run: true } })) as Result;
    expect(refused.isError).toBe(true);
    const error = JSON.parse(refused.content[0]!.text);
    expect(error.error).toBe('protected_links_violation');
    expect(error.articles.map((item: { article_id: number }) => item.article_id)).toEqual([articleIds[1]]);

    const preview = (await client.callTool({ name: 'replace_in_site', arguments: { site_id: siteId, find: '555-0100', replace: '555-0199', dry_run: true } })) as Result;
    expect(preview.structuredContent).toMatchObject({ meta: { articles: 2, occurrences: 2, dry_run: true } });

    const done = (await client.callTool({ name: 'replace_in_site', arguments: { site_id: siteId, find: '555-0100', replace: '555-0199', reason: 'New number' } })) as Result;
    expect(done.isError).toBeFalsy();
    expect(done.structuredContent).toMatchObject({ meta: { articles: 2, occurrences: 2 } });
    const revision = await harness.services.db.kysely.selectFrom('revisions').select(['origin', 'reason']).where('article_id', '=', articleIds[0]!).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(revision).toEqual({ origin: 'mcp', reason: 'New number' });
    await client.close();
  });

  it('keeps every answer within the result bound, refusing a replace that would not fit before saving anything', async () => {
    const customer = await createCustomer(harness.services);
    const { siteId, articleIds } = await seedSite(harness.services, customer.email, {
      articles: Array.from({ length: 100 }, () => ({ status: 'draft' as const, body: '<p>bulk text here</p>' })),
    });
    const client = await connect(customer.email, 'write');
    const preview = (await client.callTool({ name: 'replace_in_site', arguments: { site_id: siteId, find: 'bulk text', replace: 'some text', dry_run: true } })) as Result;
    expect(preview.isError).toBeFalsy();
    expect(preview.structuredContent).toMatchObject({ meta: { articles: 100, occurrences: 100, dry_run: true } });
    const tooMany = (await client.callTool({ name: 'replace_in_site', arguments: { site_id: siteId, find: 'bulk text', replace: 'some text' } })) as Result;
    expect(tooMany.isError).toBe(true);
    expect(JSON.parse(tooMany.content[0]!.text).fields.article_ids[0]).toMatch(/send article_ids .* with at most \d+ at a time/);
    const revisions = await harness.services.db.kysely.selectFrom('revisions').select('id').where('article_id', 'in', articleIds).execute();
    expect(revisions).toHaveLength(100);
    const half = (await client.callTool({ name: 'replace_in_site', arguments: { site_id: siteId, find: 'bulk text', replace: 'some text', article_ids: articleIds.slice(0, 50) } })) as Result;
    expect(half.isError).toBeFalsy();
    expect(half.structuredContent).toMatchObject({ meta: { articles: 50, occurrences: 50 } });
    await client.close();
  });

  it('does not offer replace_in_site to a read-only connection', async () => {
    const customer = await createCustomer(harness.services);
    const client = await connect(customer.email, 'read');
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('search_articles');
    expect(names).not.toContain('replace_in_site');
    await client.close();
  });
});
