import fc from 'fast-check';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { toDay } from '../../src/core/time.js';
import { articleStatuses, backlinkCategories, backlinkStatuses } from '../../src/core/values.js';
import { UNDATED_BLOCK } from '../../src/core/day-pages.js';
import { counters } from '../../src/db/migrations/005_counters.js';
import { undatedBlocks } from '../../src/db/migrations/015_undated_blocks.js';
import { BodyStore } from '../../src/db/body-store.js';
import { migrationContext } from '../../src/db/migrate.js';
import type { Actor } from '../../src/services/actor.js';
import { ArticlesService } from '../../src/services/articles.js';
import { BacklinksService } from '../../src/services/backlinks.js';
import { type Page, SHORT_SKIP } from '../../src/services/pagination.js';
import { apiGet, withImportKeys } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';

const h = useHarness();
let owner: string;
let key: string;
let actor: Actor;

beforeAll(async () => {
  const customer = await createCustomer(h.services);
  owner = customer.email;
  key = customer.key;
  actor = {
    accountId: customer.accountId,
    userId: customer.userId,
    credential: { kind: 'api_key', id: customer.keyId },
    channel: 'api',
    staff: false,
    scopes: ['read'],
    request: null,
  };
});

/** Imports a file built by hand; its rows get import keys of their own. */
const importWithKeys = (file: Parameters<typeof withImportKeys>[0]) => h.services.importer.run(withImportKeys(file));

// Instants at day, month and year boundaries (leap day, the last day the interface can name),
// so that many rows share a day or a second and the id decides their order.
const days = ['2024-02-29', '2024-12-31', '2025-01-01', '2025-01-31', '2025-02-01', '2025-02-28', '2025-03-01', '2025-12-31', '2026-01-01', '2026-01-15', '9999-12-31'];
const timestamp = fc
  .tuple(fc.constantFrom(...days), fc.constantFrom('00:00:00', '00:00:01', '12:30:00', '23:59:59'))
  .map(([day, time]) => `${day}T${time}Z`);
const maybeTimestamp = fc.option(timestamp, { nil: null, freq: 6 });

const importedSite = fc.record({
  articles: fc.array(fc.record({ status: fc.constantFrom(...articleStatuses), published_at: maybeTimestamp }), { maxLength: 30 }),
  backlinks: fc.array(
    fc.record({ category: fc.constantFrom(...backlinkCategories), acquired_at: maybeTimestamp, status: fc.option(fc.constantFrom(...backlinkStatuses), { nil: null }) }),
    { maxLength: 40 },
  ),
});

// Filter days: the data's days and the days either side of them, plus days away from the data.
const filterDay = fc.oneof(
  fc
    .tuple(fc.constantFrom(...days), fc.integer({ min: -1, max: 1 }))
    .map(([day, shift]) => toDay(new Date(Date.parse(`${day}T00:00:00Z`) + shift * 86_400_000)))
    .filter((day) => /^\d{4}-/.test(day)),
  fc.constantFrom('2024-01-01', '2025-06-30', '2027-01-01', '9999-12-01'),
);
const dayFilter = fc
  .tuple(fc.option(filterDay, { nil: undefined, freq: 2 }), fc.option(filterDay, { nil: undefined, freq: 2 }))
  .map(([a, b]) => (a !== undefined && b !== undefined && a > b ? { from: b, to: a } : { from: a, to: b }));

const listRequest = fc.record({
  filter: dayFilter,
  status: fc.option(fc.constantFrom(...articleStatuses), { nil: undefined }),
  // Backlinks: the category (which the counters count by) and the status (which they do not).
  category: fc.option(fc.constantFrom(...backlinkCategories), { nil: undefined }),
  backlinkStatus: fc.option(fc.constantFrom(...backlinkStatuses), { nil: undefined }),
  per_page: fc.integer({ min: 1, max: 7 }),
  // Pages are drawn relative to the last one, so deep pages and pages past the end both come up.
  page: fc.oneof(
    fc.integer({ min: 1, max: 3 }).map((n) => ({ n })),
    fc.integer({ min: -2, max: 2 }).map((fromLast) => ({ fromLast })),
    fc.integer({ min: 100, max: 10_000 }).map((n) => ({ n })),
  ),
});

/**
 * How many rows a page skips by index before seeking by the day counters: 0 always seeks (by
 * day), a few rows seek by month or skip from the top, the service's own value skips from the top.
 */
const shortSkip = fc.constantFrom(0, 2, 5, SHORT_SKIP);

const inDays = (timestamp: string | null, { from, to }: { from?: string; to?: string }): boolean =>
  from === undefined && to === undefined
    ? true
    : timestamp !== null && (from === undefined || timestamp.slice(0, 10) >= from) && (to === undefined || timestamp.slice(0, 10) <= to);

/** The list's order: newest first, rows without a timestamp last, then id descending. */
function listOrder<T extends { id: number }>(timestampOf: (row: T) => string | null) {
  return (a: T, b: T): number => {
    const [x, y] = [timestampOf(a), timestampOf(b)];
    if (x !== y) return x === null ? 1 : y === null ? -1 : x < y ? 1 : -1;
    return b.id - a.id;
  };
}

/** What a list must answer, computed from every row of the site. */
function expectedPage<T>(rows: T[], page: number, perPage: number): Page<T> {
  return {
    data: rows.slice((page - 1) * perPage, page * perPage),
    meta: { page, per_page: perPage, total: rows.length, last_page: Math.max(1, Math.ceil(rows.length / perPage)) },
  };
}

const resolvePage = (page: { n: number } | { fromLast: number }, total: number, perPage: number): number =>
  'n' in page ? page.n : Math.max(1, Math.ceil(total / perPage) + page.fromLast);

async function siteRows(siteId: number) {
  const db = h.services.db.kysely;
  const [articles, backlinks] = await Promise.all([
    db
      .selectFrom('articles')
      .select(['id', 'site_id', 'title', 'url', 'status', 'published_at', 'target_keyword', 'word_count', 'featured_image_url'])
      .where('site_id', '=', siteId)
      .execute(),
    db
      .selectFrom('backlinks')
      .select(['id', 'acquired_at', 'source_domain', 'source_url', 'target_url', 'anchor_text', 'anchor_type', 'status', 'category'])
      .where('site_id', '=', siteId)
      .execute(),
  ]);
  return {
    articles: articles.sort(listOrder((row) => row.published_at)),
    backlinks: backlinks.sort(listOrder((row) => row.acquired_at)),
  };
}

async function counterTables() {
  const db = h.services.db.kysely;
  return Promise.all(
    (['backlink_day_counts', 'backlink_month_counts', 'article_day_counts', 'article_month_counts'] as const).map((table) =>
      sql<Record<string, unknown>>`select * from ${sql.table(table)} order by 1, 2, 3`.execute(db).then((result) => result.rows),
    ),
  );
}

describe('counters against the rows', () => {
  it('give the same totals, pages and stats as counting and skipping the rows', { timeout: 25_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(importedSite, fc.array(listRequest, { minLength: 6, maxLength: 6 }), fc.array(dayFilter, { minLength: 4, maxLength: 4 }), shortSkip, async (site, requests, periods, skip) => {
        const { db, sites, counters: counts } = h.services;
        const lists = { backlinks: new BacklinksService(db.kysely, sites, counts, skip), articles: new ArticlesService(db.kysely, sites, counts, new BodyStore(db), db.watchArticleChanges(), skip) };
        const imported = await importWithKeys({
          sites: [
            {
              owner,
              name: 'Property',
              articles: site.articles.map((a, i) => ({ ...a, title: `A${i}`, body: '<p>x</p>' })),
              backlinks: site.backlinks.map((b, i) => ({ ...b, anchor_text: `B${i}` })),
            },
          ],
        });
        const siteId = imported.sites[0]!.id;
        const rows = await siteRows(siteId);
        for (const { filter, status, category, backlinkStatus, per_page, page } of requests) {
          const backlinks = rows.backlinks.filter(
            (b) => inDays(b.acquired_at, filter) && (category === undefined || b.category === category) && (backlinkStatus === undefined || b.status === backlinkStatus),
          );
          const backlinkPage = resolvePage(page, backlinks.length, per_page);
          expect(await lists.backlinks.list(actor, siteId, { ...filter, category, status: backlinkStatus, page: backlinkPage, per_page })).toEqual(
            expectedPage(backlinks, backlinkPage, per_page),
          );
          const articles = rows.articles.filter((a) => inDays(a.published_at, filter) && (status === undefined || a.status === status));
          const articlePage = resolvePage(page, articles.length, per_page);
          expect(await lists.articles.list(actor, siteId, { ...filter, status, page: articlePage, per_page })).toEqual(
            expectedPage(articles, articlePage, per_page),
          );
        }
        for (const period of periods) {
          const range = { from: period.from ?? '2024-01-01', to: period.to ?? '9999-12-31' };
          const backlinks = rows.backlinks.filter((b) => inDays(b.acquired_at, range));
          const industry = backlinks.filter((b) => b.category === 'industry').length;
          expect(await h.services.stats.get(actor, siteId, range)).toEqual({
            site_id: siteId,
            ...range,
            articles_published: rows.articles.filter((a) => a.status === 'published' && inDays(a.published_at, range)).length,
            backlinks_acquired: backlinks.length,
            backlinks_industry: industry,
            backlinks_local: backlinks.length - industry,
          });
        }
      }),
      { numRuns: 40 },
    );
  });

  it('page through the API across months, into the undated rows, deep and past the end', async () => {
    const acquired = ['2026-10-31T23:59:59Z', '2026-11-01T00:00:00Z', '2026-09-15T08:00:00Z', null, '2026-11-01T00:00:00Z', null, '2025-12-31T23:59:59Z'];
    const imported = await importWithKeys({
      sites: [{ owner, name: 'Paging', backlinks: acquired.map((at) => ({ category: 'local', acquired_at: at })) }],
    });
    const [siteId, ids] = [imported.sites[0]!.id, imported.sites[0]!.backlink_ids];
    const list = async (query: string) => {
      const response = await apiGet(h.app, `/api/v1/sites/${siteId}/backlinks?${query}`, key);
      expect(response.status).toBe(200);
      return { ids: response.body.data.map((b: { id: number }) => b.id), meta: response.body.meta };
    };
    // Newest first, equal instants by id descending, undated last.
    const ordered = [ids[4], ids[1], ids[0], ids[2], ids[6], ids[5], ids[3]];
    expect(await list('per_page=4&page=2')).toEqual({ ids: ordered.slice(4), meta: { page: 2, per_page: 4, total: 7, last_page: 2 } });
    expect(await list('per_page=2&page=3')).toEqual({ ids: ordered.slice(4, 6), meta: { page: 3, per_page: 2, total: 7, last_page: 4 } });
    expect(await list('per_page=2&page=5')).toEqual({ ids: [], meta: { page: 5, per_page: 2, total: 7, last_page: 4 } });
    expect(await list('per_page=1&page=2&from=2026-10-31&to=2026-11-01')).toEqual({ ids: [ids[1]], meta: { page: 2, per_page: 1, total: 3, last_page: 3 } });
    expect(await list('to=2026-10-31')).toEqual({ ids: [ids[0], ids[2], ids[6]], meta: { page: 1, per_page: 25, total: 3, last_page: 1 } });
    const refused = await apiGet(h.app, `/api/v1/sites/${siteId}/backlinks?from=2026-11-02&to=2026-11-01`, key);
    expect(refused.status).toBe(422);
    expect(refused.body.error).toBe('validation_failed');
  });

  it('page deep among thousands of rows without a timestamp by block of ids, exactly', { timeout: 60_000 }, async () => {
    // More undated rows than a block holds (their ids cross a block's end), between dated ones, and
    // a status filter that keeps some.
    const count = UNDATED_BLOCK + 300;
    const imported = await importWithKeys({
      sites: [
        {
          owner,
          name: 'Undated',
          articles: Array.from({ length: count }, (_, i) => ({
            title: `U${i}`,
            body: '<p>x</p>',
            status: articleStatuses[i % articleStatuses.length]!,
            published_at: i % 10 === 0 ? `2026-0${1 + (i % 9)}-15T12:00:00Z` : null,
          })),
          backlinks: Array.from({ length: count }, (_, i) => ({ category: backlinkCategories[i % 2]!, acquired_at: i % 10 === 0 ? '2026-03-01T00:00:00Z' : null })),
        },
      ],
    });
    const siteId = imported.sites[0]!.id;
    const rows = await siteRows(siteId);
    const { db, sites, counters: counts } = h.services;
    for (const skip of [0, SHORT_SKIP]) {
      const lists = { backlinks: new BacklinksService(db.kysely, sites, counts, skip), articles: new ArticlesService(db.kysely, sites, counts, new BodyStore(db), db.watchArticleChanges(), skip) };
      for (const per_page of [25, 7]) {
        const last = Math.ceil(count / per_page);
        // Into the undated rows, across each block's end, the last page and past it.
        const pages = [2, Math.ceil((count / 10) / per_page) + 1, ...Array.from({ length: 12 }, (_, i) => Math.ceil(((i + 1) * count) / 12 / per_page)), last, last + 1];
        for (const page of pages) {
          expect(await lists.backlinks.list(actor, siteId, { page, per_page })).toEqual(expectedPage(rows.backlinks, page, per_page));
          expect(await lists.articles.list(actor, siteId, { page, per_page })).toEqual(expectedPage(rows.articles, page, per_page));
          const drafts = rows.articles.filter((a) => a.status === 'draft');
          const draftPage = Math.min(page, Math.ceil(drafts.length / per_page) + 1);
          expect(await lists.articles.list(actor, siteId, { status: 'draft', page: draftPage, per_page })).toEqual(expectedPage(drafts, draftPage, per_page));
        }
      }
    }
    // The undated rows span more than one block of ids, or the test says little.
    const undatedBlockCount = await sql<{ n: number | string }>`select count(*) as n from backlink_day_counts where site_id = ${siteId} and day like 'u%'`.execute(db.kysely);
    expect(Number(undatedBlockCount.rows[0]!.n)).toBeGreaterThanOrEqual(2);
  });

  it('are kept by the node that read them, and read again once anchorage recount rebuilds them', { timeout: 30_000 }, async () => {
    // Months of rows, then rows without a timestamp: the API's pages go deep by the counters.
    const count = 3 * SHORT_SKIP;
    const imported = await importWithKeys({
      sites: [
        {
          owner,
          name: 'Kept',
          backlinks: Array.from({ length: count }, (_, i) => ({
            category: backlinkCategories[i % 2]!,
            acquired_at: i % 5 === 0 ? null : `2026-0${1 + (i % 6)}-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00Z`,
          })),
        },
      ],
    });
    const siteId = imported.sites[0]!.id;
    const db = h.services.db.kysely;
    const perPage = 25;
    const list = async (page: number, query = '') => {
      const response = await apiGet(h.app, `/api/v1/sites/${siteId}/backlinks?page=${page}&per_page=${perPage}${query}`, key);
      expect(response.status).toBe(200);
      return response.body;
    };
    // Each list's first page after the rebuild is read by the path under test: the unfiltered
    // list's by the day counters, the month's from the top.
    const pages = async () => {
      const rows = (await siteRows(siteId)).backlinks;
      const last = Math.ceil(rows.length / perPage);
      for (const page of [45, 30, last, last - 1, last + 1, 3, 1]) expect(await list(page)).toEqual(expectedPage(rows, page, perPage));
      const march = rows.filter((b) => inDays(b.acquired_at, { from: '2026-03-01', to: '2026-03-31' }));
      for (const page of [2, 1]) expect(await list(page, '&from=2026-03-01&to=2026-03-31')).toEqual(expectedPage(march, page, perPage));
    };
    await pages();
    const listed = h.services.counters.list('backlinks', siteId, {});
    await listed.spans();
    expect(listed.unchanged()?.parameters).toEqual([siteId, 0]);

    // Rows no write path adds (none changes a site's rows after its import): the counters and
    // what the node kept of them are behind until the counters are rebuilt.
    const added = ['2026-07-01T00:00:00Z', '2026-03-15T10:00:00Z', '2026-01-01T00:00:00Z', null, null];
    await db
      .insertInto('backlinks')
      .values(added.map((acquired_at) => ({ site_id: siteId, account_id: actor.accountId, acquired_at, category: 'local' as const })))
      .execute();
    await h.services.counters.recount();
    await pages();
    const after = h.services.counters.list('backlinks', siteId, {});
    await after.spans();
    expect(after.unchanged()?.parameters).toEqual([siteId, 1]);

    // A list that read its spans at one version does not take a month's days kept at a newer one
    // (another request's, after another rebuild): it reads them too, and checks nothing it kept.
    const bounds = { from: '2026-01-01' };
    const mixed = h.services.counters.list('backlinks', siteId, bounds);
    await mixed.spans();
    await h.services.counters.recount();
    const other = h.services.counters.list('backlinks', siteId, bounds);
    await other.daysOf('2026-03');
    await mixed.daysOf('2026-03');
    expect(mixed.unchanged()).toBeUndefined();
    expect(other.unchanged()).toBeUndefined();
    const keptAfter = h.services.counters.list('backlinks', siteId, bounds);
    await keptAfter.daysOf('2026-03');
    expect(keptAfter.unchanged()?.parameters).toEqual([siteId, 2]);
  });

  it('are what a rebuild from the rows gives (anchorage recount), and what migrations 005 and 015 fill in', async () => {
    const incremental = await counterTables();
    expect(incremental.every((table) => table.length > 0)).toBe(true);
    const db = h.services.db.kysely;
    const [backlinks, articles] = await Promise.all([
      db.selectFrom('backlinks').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
      db.selectFrom('articles').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    await sql`update backlink_day_counts set n = n + 1`.execute(db);
    await sql`delete from article_month_counts`.execute(db);
    expect(await h.services.counters.recount()).toEqual({ backlinks: Number(backlinks.n), articles: Number(articles.n) });
    expect(await counterTables()).toEqual(incremental);

    for (const table of ['backlink_day_counts', 'backlink_month_counts', 'article_day_counts', 'article_month_counts']) {
      await sql`drop table ${sql.table(table)}`.execute(db);
    }
    await counters.up(migrationContext(db, h.services.db.dialect));
    await undatedBlocks.up(migrationContext(db, h.services.db.dialect));
    expect(await counterTables()).toEqual(incremental);
  });
});
