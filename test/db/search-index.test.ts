import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { SearchIndexCatchUp } from '../../src/db/search-index.js';
import { apiGet, seedSite } from '../helpers/fixtures.js';
import { createCustomer, dialectName, type Harness, runElsewhere, useHarness } from '../helpers/harness.js';

// SQLite's search index catches up with written articles in the off-loop thread, after the write
// (src/db/search-index.ts): a search is exact meanwhile, and every writer's articles get indexed.

vi.setConfig({ testTimeout: 30_000 });

const h = useHarness();
let key: string;
let siteId: number;
let articleId: number;

/** The articles noted for indexing (on `node`, this file's harness by default). */
const pending = async (node: Harness = h) =>
  (await sql<{ article_id: number }>`select article_id from article_search_pending`.execute(node.services.db.kysely)).rows.map((row) => row.article_id);
/** The articles the index itself holds `text` for (each of its trigrams), without the notes. */
const indexed = async (text: string, node: Harness = h) =>
  (await sql<{ rowid: number }>`select rowid from article_search where article_search match ${[...Array(text.length - 2).keys()].map((i) => `"${text.slice(i, i + 3)}"`).join(' AND ')}`.execute(node.services.db.kysely)).rows.map((row) => row.rowid);
const found = async (q: string) => (await apiGet(h.app, `/api/v1/sites/${siteId}/search?q=${q}`, key)).body.data.map((hit: { article_id: number }) => hit.article_id);
/** Waits for the node's own looks (every 250 ms) to index every noted article. */
const caughtUp = async () => {
  for (let tries = 0; (await pending()).length > 0; tries += 1) {
    if (tries > 100) throw new Error('the search index did not catch up within 5 s');
    await sleep(50);
  }
};

describe.skipIf(dialectName === 'postgres')('the SQLite search index', () => {
  beforeAll(async () => {
    const customer = await createCustomer(h.services);
    key = customer.key;
    const seeded = await seedSite(h.services, customer.email, { articles: [{ status: 'draft', title: 'Zebra', body: '<p>oldword</p>' }] });
    siteId = seeded.siteId;
    articleId = seeded.articleIds[0]!;
    await caughtUp();
  });

  it('finds a written article by its new text at once, and the index catches up after the write', async () => {
    expect(await indexed('oldword')).toEqual([articleId]);
    const res = await h.app.inject({ method: 'PATCH', url: `/api/v1/articles/${articleId}`, headers: { authorization: `Bearer ${key}` }, payload: { replacements: [{ find: 'oldword', replace: 'newword' }] } });
    expect(res.statusCode).toBe(200);
    // The write noted the article; its search finds it by the new text and no longer by the old.
    expect(await pending()).toEqual([articleId]);
    expect(await found('newword')).toEqual([articleId]);
    expect(await found('oldword')).toEqual([]);
    await caughtUp();
    expect(await indexed('newword')).toEqual([articleId]);
    expect(await indexed('oldword')).toEqual([]);
    expect(await found('newword')).toEqual([articleId]);
  });

  it('indexes articles another process wrote', async () => {
    await runElsewhere(h, `update articles set body = '<p>elsewhere</p>' where id = ${articleId}`);
    expect(await found('elsewhere')).toEqual([articleId]);
    await caughtUp();
    expect(await indexed('elsewhere')).toEqual([articleId]);
    await runElsewhere(h, `delete from revisions where article_id = ${articleId}`);
    await runElsewhere(h, `delete from articles where id = ${articleId}`);
    expect(await indexed('elsewhere')).toEqual([]);
    expect(await found('elsewhere')).toEqual([]);
  });

  it('reports a catch-up refused by another process’s write lock once, and catches up when it is free', async () => {
    const { articleIds } = await seedSite(h.services, (await createCustomer(h.services)).email, { articles: [{ status: 'draft', title: 'Held', body: '<p>start</p>' }] });
    await caughtUp();
    const warnings: string[] = [];
    const catchUp = new SearchIndexCatchUp(h.services.db.offLoop!, (message) => warnings.push(message), 60_000);
    // Another process writes the article and holds the write lock: nothing can index it yet.
    const other = new SQLite(`${h.settings.dataDir}/anchorage.sqlite`);
    try {
      other.exec('begin immediate');
      other.exec(`update articles set body = '<p>heldword</p>' where id = ${articleIds[0]}`);
      await expect(catchUp.catchUp()).resolves.toBeUndefined();
      other.exec('commit');
      other.exec('begin immediate');
      await expect(catchUp.catchUp()).rejects.toThrow();
      await expect(catchUp.catchUp()).rejects.toThrow();
      expect(warnings).toHaveLength(1);
      expect(await indexed('heldword')).toEqual([]);
      other.exec('rollback');
      await catchUp.catchUp();
      expect(await indexed('heldword')).toEqual(articleIds);
      expect(await pending()).toEqual([]);
    } finally {
      other.close();
      await catchUp.close();
    }
  });
});

describe.skipIf(dialectName === 'postgres')('the SQLite search index of a node whose own looks are stopped', () => {
  const node = useHarness();
  beforeAll(async () => {
    await node.runtime.searchIndex!.close();
  });
  const noted = async () => (await pending(node)).length;

  it('catches up in one call, in transactions of at most 100 articles or 1 MB of text (or one larger article)', async () => {
    const word = 'batchword';
    const { articleIds } = await seedSite(node.services, (await createCustomer(node.services)).email, {
      articles: [
        ...Array.from({ length: 150 }, (_, i) => ({ status: 'draft' as const, title: `Small ${i}`, body: `<p>${word} ${i}</p>` })),
        ...[600_000, 600_000, 1_100_000].map((size, i) => ({ status: 'draft' as const, title: `Large ${i}`, body: `<p>${word} ${'x'.repeat(size)}</p>` })),
      ],
    });
    expect(await noted()).toBe(153);
    const offLoop = node.services.db.offLoop!.withoutPlugins();
    const transactions = vi.spyOn(offLoop, 'transaction');
    const catchUp = new SearchIndexCatchUp(offLoop, () => {}, 60_000);
    try {
      await catchUp.catchUp();
    } finally {
      await catchUp.close();
    }
    // 100 small; the other 50 and a 600 KB one; the second 600 KB one; the 1.1 MB one alone.
    expect(transactions).toHaveBeenCalledTimes(4);
    expect(await noted()).toBe(0);
    expect((await indexed(word, node)).sort((a, b) => a - b)).toEqual(articleIds);
  });

  it('hands a search no text of a noted article that cannot hold the query', async () => {
    const customer = await createCustomer(node.services);
    const { siteId: site, articleIds } = await seedSite(node.services, customer.email, {
      articles: [
        { status: 'draft', title: 'Holds it', body: '<p>pinword</p>' },
        { status: 'draft', title: 'Large', body: `<p>${'y'.repeat(2_000_000)}</p>` },
      ],
    });
    expect(await noted()).toBe(2);
    const handed = vi.spyOn(node.services.htmlPool, 'searchTexts');
    try {
      const res = await apiGet(node.app, `/api/v1/sites/${site}/search?q=pinword`, customer.key);
      expect(res.body.data.map((hit: { article_id: number }) => hit.article_id)).toEqual([articleIds[0]]);
      // SQLite checked the large article's text for the query's rarest trigram; none of it reached JavaScript.
      const chars = handed.mock.calls.flatMap(([, task]) => task.texts).reduce((sum, { title, body }) => sum + (title?.length ?? 0) + body.length, 0);
      expect(chars).toBeLessThan(100);
    } finally {
      handed.mockRestore();
    }
  });
});
