import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { seedSite, type SeededSite } from '../helpers/fixtures.js';
import { createCustomer, dialectName, useHarness } from '../helpers/harness.js';
import { CookieJar, manualGrant } from '../helpers/oauth-client.js';

/**
 * The MCP Inspector's command-line client (`@modelcontextprotocol/inspector-cli`, the `--cli`
 * mode of the Inspector; v1, the line that runs on Node 20) against the real server.
 */
const inspector = join(process.cwd(), 'node_modules', '.bin', 'mcp-inspector-cli');
/**
 * The CLI looks for its own package.json relative to the working directory (a bug of the
 * standalone package: `../package.json` is checked against the cwd, imported against the module),
 * so it runs from its build directory, where both resolve to the same file.
 */
const inspectorCwd = join(process.cwd(), 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build');
const run = promisify(execFile);

const harness = useHarness({ listen: true });
let mcpUrl: string;
let site: SeededSite;
let writeToken: string;
let readToken: string;

beforeAll(async () => {
  const base = harness.settings.publicUrl;
  mcpUrl = `${base}/mcp`;
  const customer = await createCustomer(harness.services);
  site = await seedSite(harness.services, customer.email, {
    name: 'Inspected',
    articles: [{ status: 'published', title: 'Inspected article', published_at: '2026-10-01T09:00:00Z', body: '<p>Hello.</p>' }],
  });
  const jar = new CookieJar();
  writeToken = (await manualGrant(base, customer.email, { jar })).tokens.access_token as string;
  readToken = (await manualGrant(base, customer.email, { jar, access: 'read' })).tokens.access_token as string;
});

/** One Inspector CLI run; its stdout is the JSON result. */
async function inspect(token: string, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(inspector, ['--cli', mcpUrl, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args], {
    cwd: inspectorCwd,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe(`the MCP Inspector CLI (${dialectName})`, () => {
  it('lists the tools the grant allows', async () => {
    const all = (await inspect(writeToken, '--method', 'tools/list')) as { tools: { name: string }[] };
    expect(all.tools.map((t) => t.name)).toEqual([
      'list_sites',
      'list_articles',
      'get_article',
      'list_backlinks',
      'get_stats',
      'search_articles',
      'update_article',
      'replace_featured_image',
      'replace_in_site',
    ]);
    const reading = (await inspect(readToken, '--method', 'tools/list')) as { tools: { name: string }[] };
    expect(reading.tools.map((t) => t.name)).toEqual(['list_sites', 'list_articles', 'get_article', 'list_backlinks', 'get_stats', 'search_articles']);
  });

  it('calls a tool, and gets a refused call as an error result naming the unknown argument', async () => {
    const articleId = site.articleIds[0]!;
    const read = await inspect(writeToken, '--method', 'tools/call', '--tool-name', 'get_article', '--tool-arg', `article_id=${articleId}`);
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toMatchObject({ data: { id: articleId, title: 'Inspected article', body: '<p>Hello.</p>' } });

    const refused = await inspect(
      writeToken,
      '--method',
      'tools/call',
      '--tool-name',
      'update_article',
      '--tool-arg',
      `article_id=${articleId}`,
      'headline=New',
    );
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toBeUndefined();
    const [content] = refused.content as { text: string }[];
    expect(JSON.parse(content!.text)).toMatchObject({ error: 'validation_failed', fields: { headline: [expect.any(String)] } });
  });
});
