import fc from 'fast-check';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { keyPrefixSql } from '../../src/db/import-keys.js';
import { ImportError, type ImportInput } from '../../src/services/import.js';
import { createCustomer, dialectName, useHarness } from '../helpers/harness.js';

// Import is an idempotent upsert by key, checked whole before it writes.

const h = useHarness();
let owner: string;
let accountId: number;

beforeAll(async () => {
  const customer = await createCustomer(h.services);
  owner = customer.email;
  accountId = customer.accountId;
});

const db = () => h.services.db.kysely;
let sites = 0;
const address = () => `https://upsert-${++sites}.example`;

const protectedLink = '<a href="https://partner.example/" data-service-protected="backlink">partner</a>';
const article = (website: string, i: number, extra: object = {}) => ({
  title: `Article ${i}`,
  url: `${website}/a/${i}`,
  status: 'published',
  published_at: `2026-10-0${1 + (i % 9)}T09:00:00Z`,
  target_keyword: `kw ${i}`,
  body: `<p>Body ${i} ${protectedLink}</p>`,
  ...extra,
});
const backlink = (website: string, i: number, extra: object = {}) => ({
  acquired_at: `2026-09-1${i % 10}T10:00:00Z`,
  source_domain: `src${i}.example`,
  source_url: `https://src${i}.example/post`,
  target_url: `${website}/`,
  anchor_text: `anchor ${i}`,
  anchor_type: 'partial',
  status: 'live',
  category: i % 2 ? 'industry' : 'local',
  ...extra,
});
const siteOf = (website: string, articles: object[], backlinks: object[], extra: object = {}) => ({
  owner,
  name: 'Upsert site',
  website_url: website,
  language: 'en',
  country: 'NZ',
  articles,
  backlinks,
  ...extra,
});

const tables = ['sites', 'articles', 'revisions', 'backlinks', 'backlink_day_counts', 'backlink_month_counts', 'article_day_counts', 'article_month_counts', 'activity_log'] as const;
/** Every row an import may write. */
const snapshot = async () => Promise.all(tables.map(async (t) => (await sql<Record<string, unknown>>`select * from ${sql.table(t)} order by 1, 2, 3`.execute(db())).rows));

const counterTables = ['backlink_day_counts', 'backlink_month_counts', 'article_day_counts', 'article_month_counts'] as const;
const counters = async () => Promise.all(counterTables.map(async (t) => (await sql<Record<string, unknown>>`select * from ${sql.table(t)} order by 1, 2, 3`.execute(db())).rows));
const activity = async () => Number((await db().selectFrom('activity_log').select((eb) => eb.fn.countAll<number>().as('n')).where('channel', '=', 'cli').executeTakeFirstOrThrow()).n);

async function refused(file: ImportInput): Promise<ImportError> {
  const error = await h.services.importer.run(file).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ImportError);
  return error as ImportError;
}

describe('import as an upsert', () => {
  it('imports the same file twice: the second time changes nothing but one activity record', async () => {
    const website = address();
    const file = { sites: [siteOf(website, [article(website, 1), article(website, 2)], [backlink(website, 1), backlink(website, 2), backlink(website, 3)])] };
    const first = await h.services.importer.run(file);
    expect(first.sites[0]).toMatchObject({ site: 'created', articles: { created: 2, updated: 0, unchanged: 0 }, backlinks: { created: 3, updated: 0, unchanged: 0 } });
    const before = await snapshot();
    const records = await activity();
    const second = await h.services.importer.run(file);
    expect(second.sites[0]).toEqual({ ...first.sites[0], site: 'unchanged', articles: { created: 0, updated: 0, unchanged: 2 }, backlinks: { created: 0, updated: 0, unchanged: 3 } });
    const after = await snapshot();
    expect(after.slice(0, -1)).toEqual(before.slice(0, -1));
    expect(await activity()).toBe(records + 1);
    const [record] = await db().selectFrom('activity_log').selectAll().where('channel', '=', 'cli').orderBy('id', 'desc').limit(1).execute();
    expect(record).toMatchObject({ account_id: accountId, operation: 'import', status: 200 });
  });

  it('updates what changed: a rewritten body is a revision of origin rewrite, a backlink is lost, the rest stays', async () => {
    const website = address();
    const first = await h.services.importer.run({ sites: [siteOf(website, [article(website, 1), article(website, 2)], [backlink(website, 1), backlink(website, 2)])] });
    const [articleId, otherId] = first.sites[0]!.article_ids;
    const [lostId] = first.sites[0]!.backlink_ids;
    const rewritten = `<p>Rewritten <a href="https://other.example/" data-service-protected="internal">other</a></p>`;
    // Next month: article 1 rewritten, article 3 new, article 2 and backlink 2 not in the file.
    const next = await h.services.importer.run({
      sites: [{ owner, website_url: website, name: 'Renamed', articles: [article(website, 1, { body: rewritten, status: 'archived' }), article(website, 3)], backlinks: [backlink(website, 1, { status: 'lost' })] }],
    });
    expect(next.sites[0]).toMatchObject({ id: first.sites[0]!.id, site: 'updated', articles: { created: 1, updated: 1, unchanged: 0 }, backlinks: { created: 0, updated: 1, unchanged: 0 } });
    expect(next.sites[0]!.article_ids[0]).toBe(articleId);
    const stored = await db().selectFrom('articles').selectAll().where('id', '=', articleId!).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ body: rewritten, status: 'archived', version: 2, title: 'Article 1', target_keyword: 'kw 1', word_count: 2 });
    expect(JSON.parse(stored.protected_links!)).toEqual([expect.objectContaining({ href: 'https://other.example/', type: 'internal' })]);
    const revisions = await db().selectFrom('revisions').selectAll().where('article_id', '=', articleId!).orderBy('id').execute();
    expect(revisions.map((r) => [r.origin, r.body])).toEqual([
      ['rewrite', article(website, 1).body],
      ['rewrite', rewritten],
    ]);
    expect(stored.current_revision_id).toBe(revisions[1]!.id);
    expect((await db().selectFrom('backlinks').select('status').where('id', '=', lostId!).executeTakeFirstOrThrow()).status).toBe('lost');
    // Rows not in the file are left alone.
    expect((await db().selectFrom('articles').select('version').where('id', '=', otherId!).executeTakeFirstOrThrow()).version).toBe(1);
    expect(await db().selectFrom('backlinks').select('id').where('site_id', '=', first.sites[0]!.id).execute()).toHaveLength(2);
    const site = await db().selectFrom('sites').selectAll().where('id', '=', first.sites[0]!.id).executeTakeFirstOrThrow();
    expect([site.name, site.language, site.country]).toEqual(['Renamed', 'en', 'NZ']);
    // Counters follow: the rebuild from the rows gives what the import kept.
    const kept = await counters();
    await h.services.counters.recount();
    expect(await counters()).toEqual(kept);
  });

  it('matches a site only in its owner account: the same address of another account is another site', async () => {
    const website = address();
    const other = await createCustomer(h.services);
    const mine = await h.services.importer.run({ sites: [siteOf(website, [], [])] });
    const theirs = await h.services.importer.run({ sites: [{ ...siteOf(website, [], []), owner: other.email }] });
    expect(theirs.sites[0]!.site).toBe('created');
    expect(theirs.sites[0]!.id).not.toBe(mine.sites[0]!.id);
  });
});

describe('import checks the whole file first', () => {
  it('names every problem, two rows with one key among them, and writes nothing', async () => {
    const website = address();
    const before = await snapshot();
    const error = await refused({
      sites: [
        siteOf(website, [article(website, 1), article(website, 1, { title: 'Again' }), article(website, 2, { status: 'gone' })], [backlink(website, 1), backlink(website, 1, { status: 'lost' })]),
        siteOf(website, [], []),
      ],
    } as ImportInput);
    expect(error.problems).toEqual([
      { path: '$.sites[0].articles[1]', message: 'Same key as $.sites[0].articles[0]: an article is matched by its url, so give each once.' },
      { path: '$.sites[0].articles[2].status', message: 'Must be one of "draft", "scheduled", "published", "archived".' },
      { path: '$.sites[0].backlinks[1]', message: 'Same key as $.sites[0].backlinks[0]: a backlink is matched by its source_url and target_url, so give each once.' },
      { path: '$.sites[1].website_url', message: "Same owner's account and website_url as $.sites[0]: a site is matched by them, so give each once." },
    ]);
    expect(await snapshot()).toEqual(before);
  });

  it('names at most 100 problems and counts the rest', async () => {
    const website = address();
    const error = await refused({ sites: [siteOf(website, [], Array.from({ length: 250 }, (_, i) => backlink(website, i, { category: 'nope' })))] } as ImportInput);
    expect(error.problems).toHaveLength(100);
    expect(error.more).toBe(150);
    expect(error.problems[99]!.path).toBe('$.sites[0].backlinks[99].category');
  });

  it('a dry run gives the plan the import then follows, and writes nothing', async () => {
    const website = address();
    await h.services.importer.run({ sites: [siteOf(website, [article(website, 1)], [backlink(website, 1)])] });
    const file = { sites: [siteOf(website, [article(website, 1, { title: 'New title' }), article(website, 2)], [backlink(website, 1)]), siteOf(address(), [], [backlink(website, 9)])] };
    const text = JSON.stringify(file);
    const before = await snapshot();
    const plan = await h.services.importer.dryRun(() => [text]);
    expect(await snapshot()).toEqual(before);
    expect(plan.problems).toEqual([]);
    const planned = plan.sites.map((s) => ({ site: s.site, articles: s.articles, backlinks: s.backlinks }));
    expect(planned).toEqual([
      { site: 'unchanged', articles: { created: 1, updated: 1, unchanged: 0 }, backlinks: { created: 0, updated: 0, unchanged: 1 } },
      { site: 'created', articles: { created: 0, updated: 0, unchanged: 0 }, backlinks: { created: 1, updated: 0, unchanged: 0 } },
    ]);
    expect(plan.sites[1]!.id).toBeNull();
    const done = await h.services.importer.run(file);
    expect(done.sites.map((s) => ({ site: s.site, articles: s.articles, backlinks: s.backlinks }))).toEqual(planned);
    const problems = await h.services.importer.dryRun(() => ['{"sites":[{"owner":"nobody@nowhere.test","website_url":"https://x.example"}]}']);
    expect(problems).toEqual({ problems: [{ path: '$.sites[0].owner', message: 'No user with e-mail nobody@nowhere.test; create it first (anchorage user create).' }], more: 0, sites: [] });
  });

  it('undoes every change when a write fails part-way, batches already committed included', async () => {
    const website = address();
    const first = await h.services.importer.run({ sites: [siteOf(website, [article(website, 1)], Array.from({ length: 500 }, (_, i) => backlink(website, i)))] });
    const before = await snapshot();
    // A row the database refuses, after many batches of updates and new rows.
    if (dialectName === 'postgres') {
      await sql`create function refuse_boom() returns trigger language plpgsql as $$ begin raise exception 'boom'; end $$`.execute(db());
      await sql`create trigger refuse_boom before insert on backlinks for each row when (new.anchor_text = 'boom') execute function refuse_boom()`.execute(db());
    } else {
      await sql`create trigger refuse_boom before insert on backlinks when new.anchor_text = 'boom' begin select raise(abort, 'boom'); end`.execute(db());
    }
    try {
      const backlinks = [...Array.from({ length: 500 }, (_, i) => backlink(website, i, { status: 'lost', category: 'industry' })), ...Array.from({ length: 900 }, (_, i) => backlink(website, 1000 + i))];
      backlinks.push(backlink(website, 5000, { anchor_text: 'boom' }));
      const file = { sites: [siteOf(website, [article(website, 1, { body: '<p>changed</p>' }), article(website, 2)], backlinks, { name: 'Changed' }), siteOf(address(), [article(website, 3)], [])] };
      // Read slowly the second time (the writes): on SQLite the batches before the pause commit.
      const text = JSON.stringify(file);
      let reads = 0;
      async function* slowly(): AsyncGenerator<string> {
        yield text.slice(0, text.length / 2);
        await new Promise((resolve) => setTimeout(resolve, 300));
        yield text.slice(text.length / 2);
      }
      const error = await h.services.importer.importFrom(() => (++reads === 1 ? [text] : slowly())).catch((e: unknown) => e);
      expect(String(error)).toContain('boom');
    } finally {
      await sql`drop trigger refuse_boom${dialectName === 'postgres' ? sql` on backlinks` : sql``}`.execute(db());
      if (dialectName === 'postgres') await sql`drop function refuse_boom()`.execute(db());
    }
    const after = await snapshot();
    // Counters rebuilt by the undo move counts_version; nothing else differs.
    const withoutVersion = (rows: Record<string, unknown>[]) => rows.map(({ counts_version: _, ...row }) => row);
    expect(withoutVersion(after[0]!)).toEqual(withoutVersion(before[0]!));
    expect(after.slice(1)).toEqual(before.slice(1));
    expect(first.sites[0]!.id).toBeGreaterThan(0);
  });
});

describe.skipIf(dialectName !== 'postgres')('PostgreSQL: a large import leaves the planner current statistics', () => {
  const lastAnalyzed = async () =>
    (await sql<{ last_analyze: Date | null }>`select last_analyze from pg_stat_user_tables where schemaname = current_schema() and relname = 'backlinks'`.execute(db())).rows[0]?.last_analyze ?? null;

  it('analyses the tables after an import that created 10,000 rows, so the next import reads the key index', async () => {
    const website = address();
    const small = await lastAnalyzed();
    await h.services.importer.run({ sites: [siteOf(website, [], Array.from({ length: 50 }, (_, i) => backlink(website, i)))] });
    expect(await lastAnalyzed()).toEqual(small);
    const many = Array.from({ length: 10_000 }, (_, i) => backlink(website, 100 + i));
    await h.services.importer.run({ sites: [siteOf(website, [], many)] });
    await expect.poll(lastAnalyzed, { timeout: 10_000 }).not.toEqual(small);
    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain select * from backlinks where site_id = (select id from sites where website_url = ${website}) and ${keyPrefixSql('source_url')} in ('https://src5.example/post')`.execute(db());
    expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('backlinks_site_source');
  });
});

describe('counters stay exact', () => {
  it('anchorage recount equals the counts kept after any sequence of imports', { timeout: 120_000 }, async () => {
    const website = address();
    const row = fc.record({
      i: fc.integer({ min: 0, max: 7 }),
      day: fc.constantFrom(null, '2026-01-31T23:59:59Z', '2026-02-01T00:00:00Z', '2026-02-14T12:00:00Z', '2025-12-31T10:00:00Z'),
      status: fc.constantFrom('draft', 'published', 'archived'),
      category: fc.constantFrom('industry', 'local'),
      given: fc.boolean(),
    });
    const fileOf = (rows: { i: number; day: string | null; status: string; category: string; given: boolean }[]) => {
      // One row per key: the last of each index.
      const byKey = new Map(rows.map((r) => [r.i, r]));
      return {
        sites: [
          siteOf(
            website,
            [...byKey.values()].map((r) => article(website, r.i, { status: r.status, ...(r.given ? { published_at: r.day } : { published_at: undefined }) })),
            [...byKey.values()].map((r) => backlink(website, r.i, { category: r.category, ...(r.given ? { acquired_at: r.day } : { acquired_at: undefined }) })),
          ),
        ],
      };
    };
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(row, { maxLength: 8 }), { minLength: 1, maxLength: 4 }), async (imports) => {
        for (const rows of imports) await h.services.importer.run(fileOf(rows));
        const kept = await counters();
        await h.services.counters.recount();
        expect(await counters()).toEqual(kept);
      }),
      { numRuns: 15 },
    );
  });
});
