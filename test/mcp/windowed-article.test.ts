import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { apiGet, seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { BACKLINK, INTERNAL } from '../helpers/write-fixtures.js';
import { manualGrant } from '../helpers/oauth-client.js';

/**
 * A model-like client: it knows only what tools/list says (names, descriptions, schemas) and
 * reads a 300 KB article window by window with get_article (within 1.3 × its length in result
 * characters), edits three sections with
 * update_article replacements, recovers from a mistyped find with the near_match it is given,
 * and never receives a result over MCP_RESULT_MAX_CHARS (default 40,000 characters of JSON,
 * structuredContent and text counted together).
 */

const BOUND = 40_000;

// Hundreds of calls over real HTTP on a 300 KB article: room on a busy CI machine.
vi.setConfig({ testTimeout: 240_000 });

const harness = useHarness({ listen: true });
let base: string;

beforeAll(async () => {
  base = harness.settings.publicUrl;
});

interface Result {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
}

/** Characters of a result: structuredContent's JSON and its text. */
const sizeOf = (result: Result): number =>
  (result.structuredContent === undefined ? 0 : JSON.stringify(result.structuredContent).length) + result.content.reduce((n, c) => n + c.text.length, 0);

/** A connected client whose every result is measured against the bound. */
async function connect(email: string) {
  const { tokens } = await manualGrant(base, email, { access: 'write' });
  const client = new Client({ name: 'model-like', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), {
      requestInit: { headers: { authorization: `Bearer ${tokens.access_token as string}` } },
    }),
  );
  let largest = 0;
  const call = async (name: string, args: Record<string, unknown>): Promise<Result> => {
    const result = (await client.callTool({ name, arguments: args })) as Result;
    const size = sizeOf(result);
    largest = Math.max(largest, size);
    expect(size, `${name} result size`).toBeLessThanOrEqual(BOUND);
    return result;
  };
  return { client, call, largest: () => largest };
}

const sentence = (section: number) => `Section ${section} explains step ${section} of the routine in plain words for every reader.`;

/** About 2.6 KB a section (300 KB for 120): an <h2>, two <h3> subsections and paragraphs, protected links in a few. */
function bigBody(sections = 120): string {
  let body = '';
  for (let s = 1; s <= sections; s++) {
    const filler = `<p>${'Brushing twice a day keeps teeth healthy and gums strong. '.repeat(20)}</p>`;
    const links = s % 40 === 0 ? `<p>Read the ${BACKLINK} and ${INTERNAL} for more.</p>` : '';
    body += `<h2>Part ${s}: the routine</h2><p>${sentence(s)}</p>${filler}<h3>Tools for part ${s}</h3>${filler}${links}<h3>Notes &amp; tips ${s}</h3><p>Short note ${s}.</p>`;
  }
  return body;
}

describe('a model-like MCP client on a 300 KB article', () => {
  it('reads it window by window, edits three sections, recovers from a mistyped find, and no result exceeds the bound', async () => {
    const customer = await createCustomer(harness.services);
    const stored = bigBody();
    expect(stored.length).toBeGreaterThan(300_000);
    const { articleIds } = await seedSite(harness.services, customer.email, {
      name: 'Big article site',
      website_url: 'https://big.example',
      articles: [{ title: 'Routine', url: 'https://big.example/routine', status: 'published', published_at: '2026-10-01T09:00:00Z', body: stored }],
    });
    const articleId = articleIds[0]!;
    const { client, call, largest } = await connect(customer.email);

    // All it knows: the listing.
    const { tools } = await client.listTools();
    const getTool = tools.find((t) => t.name === 'get_article')!;
    const updateTool = tools.find((t) => t.name === 'update_article')!;
    expect(Object.keys(getTool.inputSchema.properties ?? {})).toEqual(['article_id', 'body_offset', 'body_length', 'outline']);
    expect(getTool.description).toMatch(/next_offset/);
    expect(getTool.description).toMatch(/outline/);
    expect(getTool.description).toMatch(/replacements/);
    expect(updateTool.description).toMatch(/near_match/);

    // Page through the whole body: the outline and the protected links come with the first
    // window only, and the whole read costs at most 1.3 × the body's length in result characters,
    // in at most ceil(length / 30,000) + 1 calls.
    const windows: string[] = [];
    let outline: { level: number; text: string; offset: number; length: number }[] = [];
    let offset: number | null = 0;
    let total = 0;
    let readChars = 0;
    while (offset !== null) {
      const result = await call('get_article', { article_id: articleId, body_offset: offset });
      expect(result.isError).toBeFalsy();
      readChars += sizeOf(result);
      const { data, meta } = result.structuredContent as { data: { body: string; protected_links: unknown[] }; meta: Record<string, never> };
      expect(meta.body_offset).toBe(offset);
      expect(data.body.length).toBe(meta.body_length);
      if (offset === 0) {
        expect(data.protected_links).toHaveLength(6);
        outline = meta.outline;
      } else {
        expect(data.protected_links).toEqual([]);
        expect(meta.protected_links_total).toBe(6);
        expect(meta.outline).toBeUndefined();
      }
      // The text names where the window is rather than repeating it.
      expect(result.content[0]!.text).not.toContain(data.body.slice(0, 200));
      windows.push(data.body);
      total = meta.body_total_length;
      offset = meta.next_offset;
    }
    expect(windows.length).toBeLessThanOrEqual(Math.ceil(stored.length / 30_000) + 1);
    expect(readChars).toBeLessThanOrEqual(1.3 * stored.length);
    expect(windows.join('')).toBe(stored);
    expect(total).toBe(stored.length);
    expect(outline.filter((e) => e.level === 2)).toHaveLength(120);

    // Three edits in different sections, each found through the outline.
    // Each edit moves the sections after it: the outline is read again before each.
    const sectionOf = async (n: number) => {
      const first = await call('get_article', { article_id: articleId, body_length: 1 });
      const { meta } = first.structuredContent as { meta: { outline: typeof outline } };
      return meta.outline.find((e) => e.text === `Part ${n}: the routine`)!;
    };
    for (const n of [3, 57, 118]) {
      const { offset: at, length } = await sectionOf(n);
      const read = await call('get_article', { article_id: articleId, body_offset: at, body_length: length });
      const section = (read.structuredContent as { data: { body: string } }).data.body;
      expect(section.startsWith(`<h2>Part ${n}: the routine</h2>`)).toBe(true);
      expect(section).toContain(sentence(n));
      const edited = await call('update_article', {
        article_id: articleId,
        replacements: [{ find: sentence(n), replace: `Section ${n} was revised by the assistant.` }],
        reason: `Revise part ${n}`,
      });
      expect(edited.isError, edited.content[0]?.text.slice(0, 300)).toBeFalsy();
      const meta = (edited.structuredContent as { meta: { body_total_length: number; next_offset: number | null; sanitized: string[] } }).meta;
      expect(meta.next_offset).not.toBeNull();
      expect(meta.sanitized).toEqual([]);
    }

    // A mistyped find (a typo, other case and spacing): the error names the passage to use.
    const intended = sentence(80);
    const mistyped = 'section 80  explains stpe 80 of the routine in plain words';
    const failed = await call('update_article', { article_id: articleId, replacements: [{ find: mistyped, replace: 'Changed.' }] });
    expect(failed.isError).toBe(true);
    const error = JSON.parse(failed.content[0]!.text) as { error: string; failures: { index: number; matches: number; near_match: { offset: number; text: string } }[] };
    expect(error.error).toBe('replacement_failed');
    const near = error.failures[0]!.near_match;
    expect(intended.startsWith(near.text)).toBe(true);
    const there = await call('get_article', { article_id: articleId, body_offset: near.offset, body_length: near.text.length });
    expect((there.structuredContent as { data: { body: string } }).data.body).toBe(near.text);
    const fixed = await call('update_article', { article_id: articleId, replacements: [{ find: near.text, replace: 'Section 80 was fixed.' }] });
    expect(fixed.isError, fixed.content[0]?.text.slice(0, 300)).toBeFalsy();

    // The stored body has exactly the four changes, protected links untouched.
    const rest = await apiGet(harness.app, `/api/v1/articles/${articleId}`, customer.key);
    const expected = stored
      .replace(sentence(3), 'Section 3 was revised by the assistant.')
      .replace(sentence(57), 'Section 57 was revised by the assistant.')
      .replace(sentence(118), 'Section 118 was revised by the assistant.')
      .replace(near.text, 'Section 80 was fixed.');
    expect(rest.body.data.body).toBe(expected);
    expect(rest.body.data.protected_links).toHaveLength(6);
    expect(largest()).toBeGreaterThan(BOUND * 0.8);
    await client.close();
  });

  it('finds and fixes one sentence of a 265 KB article in four calls, and recovers from a near miss with its hint', async () => {
    const customer = await createCustomer(harness.services);
    const stored = bigBody(104);
    expect(stored.length).toBeGreaterThan(260_000);
    const { siteId } = await seedSite(harness.services, customer.email, {
      name: 'Round trip site',
      website_url: 'https://trip.example',
      articles: [
        { title: 'Other', url: 'https://trip.example/other', status: 'published', published_at: '2026-09-01T09:00:00Z', body: '<p>Other.</p>' },
        { title: 'Routine', url: 'https://trip.example/routine', status: 'published', published_at: '2026-10-01T09:00:00Z', body: stored },
      ],
    });
    const { call } = await connect(customer.email);
    let calls = 0;
    const counted = async (name: string, args: Record<string, unknown>) => {
      calls += 1;
      const result = await call(name, args);
      expect(result.isError, `${name}: ${result.content[0]?.text.slice(0, 300)}`).toBeFalsy();
      return result.structuredContent as { data: Record<string, unknown> & { body: string }; meta: Record<string, unknown> };
    };

    // The task, as a user words it: in "Routine", part 77, replace this sentence.
    const wrong = sentence(77);
    const right = 'Section 77 shows step 77 of the routine, in plain words.';
    // 1. The article, by its title.
    const listed = (await counted('list_articles', { site_id: siteId })) as unknown as { data: { id: number; title: string }[] };
    const article = listed.data.find((a) => a.title === 'Routine')!;
    // 2. Its outline comes with the first window.
    const first = await counted('get_article', { article_id: article.id, body_length: 1 });
    const part = (first.meta.outline as { text: string; offset: number; length: number }[]).find((e) => e.text === 'Part 77: the routine')!;
    // 3. The edit: the sentence as the user quoted it is the find.
    const edited = await counted('update_article', { article_id: article.id, replacements: [{ find: wrong, replace: right }], reason: 'Reword part 77' });
    expect(edited.meta.body_total_length).toBe(stored.length - wrong.length + right.length);
    // 4. Confirm: the section reads as it should now.
    const section = await counted('get_article', { article_id: article.id, body_offset: part.offset, body_length: part.length });
    expect(section.data.body).toContain(right);
    expect(section.data.body).not.toContain(wrong);
    expect(calls).toBeLessThanOrEqual(4);

    // A near miss (the user misquoted part 78): the error's hint is the text to send instead.
    const misquoted = 'Section 78 explains step 78 of the routine in plain word for every reader.';
    const missed = await call('update_article', { article_id: article.id, replacements: [{ find: misquoted, replace: 'Part 78, reworded.' }] });
    const error = JSON.parse(missed.content[0]!.text) as { error: string; failures: { near_match: { text: string } }[] };
    expect(error.error).toBe('replacement_failed');
    const hinted = error.failures[0]!.near_match.text;
    expect(sentence(78).startsWith(hinted.slice(0, 40))).toBe(true);
    const fixed = await call('update_article', { article_id: article.id, replacements: [{ find: hinted, replace: 'Part 78, reworded.' }] });
    expect(fixed.isError, fixed.content[0]?.text.slice(0, 300)).toBeFalsy();
  });

  it('a list page over the bound names the per_page that fits; an oversized error keeps to the bound', async () => {
    const customer = await createCustomer(harness.services);
    const long = 'a-long-article-address-segment-'.repeat(8);
    const { siteId, articleIds } = await seedSite(harness.services, customer.email, {
      name: 'Many articles',
      website_url: 'https://many.example',
      articles: Array.from({ length: 100 }, (_, i) => ({
        title: `Article ${i} ${'with a long title '.repeat(10)}`.slice(0, 250),
        url: `https://many.example/${long}${i}`,
        status: 'published',
        published_at: '2026-10-01T09:00:00Z',
        body: i === 0 ? `<p>${Array.from({ length: 60 }, (_, k) => `Paragraph ${k} ${'lorem ipsum dolor sit amet '.repeat(40)}`).join('</p><p>')}</p>` : '<p>x</p>',
      })),
    });
    const { call } = await connect(customer.email);
    const refused = await call('list_articles', { site_id: siteId, per_page: 100 });
    expect(refused.isError).toBe(true);
    const message = (JSON.parse(refused.content[0]!.text) as { fields: { per_page: string[] } }).fields.per_page[0]!;
    const fits = Number(/per_page=(\d+)/.exec(message)?.[1]);
    expect(fits).toBeGreaterThan(5);
    expect(fits).toBeLessThan(100);
    const page = await call('list_articles', { site_id: siteId, per_page: fits });
    expect((page.structuredContent as { data: unknown[] }).data).toHaveLength(fits);

    // A window past the end, or of no length, is refused naming the argument.
    const first = await call('get_article', { article_id: articleIds[0]!, body_length: 10 });
    const { meta } = first.structuredContent as { meta: { body_total_length: number; body_length: number; outline: unknown[] } };
    expect(meta.body_length).toBe(10);
    expect(meta.outline).toEqual([]);
    const later = await call('get_article', { article_id: articleIds[0]!, body_offset: 10, body_length: 10 });
    expect((later.structuredContent as { meta: { outline?: unknown[] } }).meta.outline).toBeUndefined();
    const asked = await call('get_article', { article_id: articleIds[0]!, body_offset: 10, body_length: 10, outline: true });
    expect((asked.structuredContent as { meta: { outline?: unknown[] } }).meta.outline).toEqual([]);
    const past = await call('get_article', { article_id: articleIds[0]!, body_offset: meta.body_total_length + 1 });
    expect(JSON.parse(past.content[0]!.text)).toMatchObject({ error: 'validation_failed', fields: { body_offset: [expect.stringContaining(`${meta.body_total_length} characters`)] } });
    const none = await call('get_article', { article_id: articleIds[0]!, body_length: 0 });
    expect(JSON.parse(none.content[0]!.text)).toMatchObject({ error: 'validation_failed', fields: { body_length: [expect.any(String)] } });
    const end = await call('get_article', { article_id: articleIds[0]!, body_offset: meta.body_total_length });
    expect((end.structuredContent as { meta: { next_offset: null; body_length: number } }).meta).toMatchObject({ next_offset: null, body_length: 0 });

    // 50 long finds that each nearly match a paragraph: the hints are cut to fit, and say so.
    const replacements = Array.from({ length: 50 }, (_, k) => ({ find: `paragraph ${k}  ${'lorem ipsum dolor sit amet '.repeat(40)}`.replace('dolor', 'dolour') }));
    const failed = await call('update_article', { article_id: articleIds[0]!, replacements });
    const error = JSON.parse(failed.content[0]!.text) as { error: string; failures: { near_match?: { text: string } }[] };
    expect(error.error).toBe('replacement_failed');
    expect(error.failures).toHaveLength(50);
    expect(error.failures[0]!.near_match?.text).toMatch(/^Paragraph 0 lorem ipsum dolor/);
    expect(error.failures[49]!.near_match).toBeUndefined();
  });
});
