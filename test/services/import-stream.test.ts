import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { ImportError, importFileSchema, type ImportProgress, importResultJson, type ImportedSite, IdList } from '../../src/services/import.js';
import { createCustomer, useHarness } from '../helpers/harness.js';

// Import streams its input, with the same checks, messages and output as reading the whole
// file. It reads the file twice (every problem first, then the
// writes), so a source is a function that opens it.

const h = useHarness();
let owner: string;

beforeAll(async () => {
  owner = (await createCustomer(h.services)).email;
});

const backlink = (i: number) => ({
  acquired_at: `2026-0${1 + (i % 9)}-1${i % 10}T08:00:00Z`,
  source_url: `https://source.example/${i}`,
  target_url: 'https://target.example/',
  anchor_text: `b${i}`,
  category: i % 3 === 0 ? 'local' : 'industry',
});
const article = (i: number) => ({
  title: `A${i} 😀`,
  url: `https://site.example/${i}`,
  status: i % 2 ? 'published' : 'draft',
  published_at: `2026-10-${10 + (i % 20)}T09:00:00Z`,
  body: `<p>Word ${i} <script>x()</script></p>`,
});
let sites = 0;
/** A new site's address each time. */
const address = () => `https://streamed-${++sites}.example`;

/** Text in pieces of `size` bytes: pieces end inside strings, keys and multi-byte characters. */
function* pieces(text: string, size: number): Generator<Buffer> {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

const tables = ['sites', 'articles', 'revisions', 'backlinks', 'backlink_day_counts', 'backlink_month_counts', 'article_day_counts', 'article_month_counts'] as const;

/** Every row the import may write, so a refused import can be shown to have written none. */
const snapshot = async () =>
  Promise.all(tables.map(async (t) => (await sql<Record<string, unknown>>`select * from ${sql.table(t)} order by 1, 2, 3`.execute(h.services.db.kysely)).rows));

async function refusal(source: () => Iterable<Buffer | string> | AsyncIterable<Buffer>): Promise<{ path: string; message: string }> {
  const error = await h.services.importer.importFrom(source).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportError);
  return { path: (error as ImportError).path, message: (error as ImportError).message };
}

const toResult = (sites: ImportedSite[]) => ({
  sites: sites.map((s) => ({ id: s.id, site: s.site, articles: s.articles, backlinks: s.backlinks, article_ids: [...s.articleIds], backlink_ids: [...s.backlinkIds] })),
});

describe('streaming import', () => {
  it('reads a file given a few bytes at a time as the whole file, past several batches, with exact counters', async () => {
    const file = {
      sites: [
        { owner, name: 'Streamed', website_url: address(), articles: Array.from({ length: 450 }, (_, i) => article(i)), backlinks: Array.from({ length: 1000 }, (_, i) => backlink(i)) },
        { owner: owner.toUpperCase(), name: 'Second ✓', website_url: address(), articles: [], backlinks: [backlink(1)] },
      ],
    };
    const progress: ImportProgress[] = [];
    const sites = await h.services.importer.importFrom(() => pieces(JSON.stringify(file), 7), (p) => progress.push(p));
    const result = toResult(sites);
    expect(result.sites.map((s) => [s.article_ids.length, s.backlink_ids.length])).toEqual([[450, 1000], [0, 1]]);
    expect(result.sites[1]!.id!).toBeGreaterThan(result.sites[0]!.id!);
    for (const s of result.sites) for (const ids of [s.article_ids, s.backlink_ids]) expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(progress.at(-1)).toEqual({ sites: 2, articles: 450, backlinks: 1001 });
    expect(progress.filter((p) => p.sites === 0).length).toBeGreaterThanOrEqual(3);

    const db = h.services.db.kysely;
    const stored = await db.selectFrom('backlinks').select(['id', 'anchor_text']).where('site_id', '=', result.sites[0]!.id).orderBy('id').execute();
    expect(stored.map((b) => b.anchor_text)).toEqual(file.sites[0]!.backlinks.map((b) => b.anchor_text));
    const first = await db.selectFrom('articles').selectAll().where('id', '=', result.sites[0]!.article_ids[0]!).executeTakeFirstOrThrow();
    expect([first.title, first.body, first.word_count]).toEqual(['A0 😀', '<p>Word 0 </p>', 2]);
    const revision = await db.selectFrom('revisions').selectAll().where('id', '=', first.current_revision_id!).executeTakeFirstOrThrow();
    expect([revision.article_id, revision.origin, revision.body]).toEqual([first.id, 'rewrite', '<p>Word 0 </p>']);
    // The counters the import kept are what a rebuild from the rows gives; the rebuild moves only
    // each site's counts_version.
    const [siteRows, ...kept] = await snapshot();
    await h.services.counters.recount();
    const [rebuiltSites, ...rebuilt] = await snapshot();
    expect(rebuilt).toEqual(kept);
    expect(rebuiltSites).toEqual(siteRows!.map((site) => ({ ...site, counts_version: Number(site.counts_version) + 1 })));
  });

  it('takes the members of a site in any order: fields after the rows, the owner last', async () => {
    const text = `{"sites":[{"backlinks":[${JSON.stringify(backlink(2))}],"articles":[${JSON.stringify(article(3))}],"name":"Late","website_url":"https://Late.example","owner":${JSON.stringify(owner)}}]}`;
    const [site] = await h.services.importer.importFrom(() => [text]);
    const row = await h.services.db.kysely.selectFrom('sites').selectAll().where('id', '=', site!.id).executeTakeFirstOrThrow();
    expect([row.name, row.website_url, row.website_url_lc]).toEqual(['Late', 'https://Late.example', 'https://late.example']);
    expect([site!.articleIds.size, site!.backlinkIds.size]).toEqual([1, 1]);
  });

  it('refuses a problem after batches were written, and has written nothing', async () => {
    const before = await snapshot();
    const backlinks = Array.from({ length: 1001 }, (_, i) => backlink(i));
    backlinks.push({ ...backlink(1001), category: 'national' });
    const file = { sites: [{ owner, name: 'Half', website_url: address(), articles: [article(1)], backlinks }] };
    const error = await refusal(() => pieces(JSON.stringify(file), 4096));
    expect(error.path).toBe('$.sites[0].backlinks[1001].category');
    expect(error.message).toBe('$.sites[0].backlinks[1001].category: Must be one of "industry", "local".');
    const ghost = await refusal(() => [JSON.stringify({ sites: [file.sites[0]!, { ...file.sites[0]!, owner: 'ghost@nowhere.test' }] }).replaceAll('"national"', '"local"')]);
    expect(ghost).toEqual({ path: '$.sites[1].owner', message: '$.sites[1].owner: No user with e-mail ghost@nowhere.test; create it first (anchorage user create).' });
    expect(await snapshot()).toEqual(before);
  });

  it('names the same path and message as checking the whole file, for each kind of problem', async () => {
    const site = {
      owner,
      name: 'S',
      website_url: 'https://s.example',
      articles: [{ status: 'draft', url: 'https://s.example/a', body: '' }],
      backlinks: [{ category: 'local', source_url: 'https://a.example/', target_url: 'https://s.example/' }],
    };
    const bad: unknown[] = [
      [],
      5,
      null,
      {},
      { sites: {} },
      { sites: 'x' },
      { sites: [], extra: 1 },
      { sites: [], extra: 1, more: { deep: [1, 2] } },
      { sites: [7] },
      { sites: [[site]] },
      { sites: [{ ...site, owner: 'not an e-mail' }] },
      { sites: [{ ...site, owner: undefined }] },
      { sites: [{ ...site, name: { nested: { deep: true } } }] },
      { sites: [{ ...site, name: ['a'] }] },
      { sites: [{ ...site, language: 5 }] },
      { sites: [{ ...site, articles: 'none' }] },
      { sites: [{ ...site, backlinks: null }] },
      { sites: [{ ...site, colour: 'red', size: 2 }] },
      { sites: [site, { ...site, articles: [5] }] },
      { sites: [{ ...site, articles: [{ status: 'draft', url: 'https://s.example/a' }] }] },
      { sites: [{ ...site, articles: [{ status: 'draft', url: 'https://s.example/a', body: '', extra: [1] }] }] },
      { sites: [{ ...site, backlinks: [{ ...site.backlinks[0], acquired_at: '2026-10-01' }] }] },
      { sites: [{ ...site, backlinks: [{ ...site.backlinks[0], source_url: 'javascript:alert(1)' }] }] },
    ];
    const before = await snapshot();
    for (const file of bad) {
      const issue = importFileSchema.safeParse(file).error!.issues[0]!;
      const path = issue.path.reduce<string>((p, s) => (typeof s === 'number' ? `${p}[${s}]` : `${p}.${String(s)}`), '$');
      const error = await h.services.importer.importFrom(() => pieces(JSON.stringify(file), 3)).catch((e: unknown) => e);
      expect((error as ImportError).problems, JSON.stringify(file)).toContainEqual({ path, message: issue.message });
    }
    expect(await snapshot()).toEqual(before);
  });

  it('refuses text that is not one JSON value, and a member given twice', async () => {
    for (const text of ['', '{"sites": [', '{"sites": []} x', '{"sites": []}{"sites": []}', '{"sites": [{"owner": "a@b.c",}]}']) {
      const error = await refusal(() => [text]);
      expect(error.path, text).toBe('$');
      expect(error.message, text).toMatch(/^\$: Not valid JSON \(.+\)\.$/);
    }
    const site = `{"owner":${JSON.stringify(owner)},"website_url":"https://twice.example","backlinks":[]}`;
    expect(await refusal(() => [`{"sites":[],"sites":[${site}]}`])).toEqual({ path: '$.sites', message: '$.sites: Given more than once.' });
    expect(await refusal(() => [`{"sites":[{"owner":${JSON.stringify(owner)},"website_url":"https://twice.example","backlinks":[],"backlinks":[]}]}`])).toEqual({ path: '$.sites[0].backlinks', message: '$.sites[0].backlinks: Given more than once.' });
    expect(await refusal(() => [`{"sites":[{"owner":${JSON.stringify(owner)},"website_url":"https://twice.example","name":"a","name":"b"}]}`])).toEqual({ path: '$.sites[0].name', message: '$.sites[0].name: Given more than once.' });
  });
});

describe('import output', () => {
  it('is JSON.stringify of the result, written in pieces', () => {
    const list = (...ids: number[]) => {
      const l = new IdList();
      for (const id of ids) l.add(id);
      return l;
    };
    const many = Array.from({ length: 20_000 }, (_, i) => i + 5);
    const tally = { created: 1, updated: 2, unchanged: 3 };
    const sites: ImportedSite[] = [
      { id: 3, site: 'created', articles: tally, backlinks: tally, articleIds: list(), backlinkIds: list(9) },
      { id: 4, site: 'unchanged', articles: tally, backlinks: tally, articleIds: list(1, 2, 3, 7, 8, 20, 19), backlinkIds: list(...many) },
    ];
    const pieces = [...importResultJson(sites)];
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.join('')).toBe(JSON.stringify(toResult(sites)));
    expect(JSON.parse(pieces.join('')).sites[1].article_ids).toEqual([1, 2, 3, 7, 8, 20, 19]);
    expect([...importResultJson([])].join('')).toBe('{"sites":[]}');
  });
});
