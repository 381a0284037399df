import fc from 'fast-check';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { occurrences } from '../../src/core/text-search.js';
import type { Actor } from '../../src/services/actor.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';

// The index only narrows: after any edits, made by SQL beside the service or through it, a
// search finds exactly the articles (and counts) a scan of every article of the site finds,
// whether the SQLite index has caught up with the edits (db/search-index.ts) or not.
vi.setConfig({ testTimeout: 180_000 });

const h = useHarness();
let actor: Actor;
let siteId: number;
let otherSite: number;
let ids: number[];

const words = ['Phone', 'PHONE', 'phone', 'café', 'CAFÉ', 'Σίσυφος', 'σίσυφος', 'ǅemal', '\u212aelvin', 'kelvin', '😀', '<a href="x">', '</a>', '"q"', 'OR', '%_', ' ', '555-0100'];
const text = fc.array(fc.constantFrom(...words), { maxLength: 12 }).map((parts) => parts.join(''));
const query = fc.oneof(
  fc.constantFrom('phone', 'PHONE', 'café', 'ÉSI', 'σίσυ', 'ΣΊΣΥ', 'ǆem', 'ǅEM', 'kel', '\u212aEL', '555-', '"q"', 'OR %', 'ne<a', '😀ph'),
  fc.array(fc.constantFrom(...[...words.join('')]), { minLength: 3, maxLength: 6 }).map((chars) => chars.join('')),
);

beforeAll(async () => {
  const customer = await createCustomer(h.services);
  actor = { accountId: customer.accountId, userId: customer.userId, credential: { kind: 'api_key', id: customer.keyId }, channel: 'api', staff: false, scopes: ['read', 'write'], request: null };
  ({ siteId, articleIds: ids } = await seedSite(h.services, customer.email, {
    articles: Array.from({ length: 12 }, (_, i) => ({ status: 'published' as const, title: `Article ${i}`, published_at: `2026-10-0${(i % 9) + 1}T09:00:00Z`, body: '<p>start</p>' })),
  }));
  // Another site of the account holding every word: never in the results.
  otherSite = (await seedSite(h.services, customer.email, { articles: [{ status: 'draft', title: words.join(''), body: words.join(' ') }] })).siteId;
});

describe('searchArticles against a scan', () => {
  it('finds exactly what a scan finds after random edits', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(ids.length - 1), text, fc.option(text, { nil: undefined })), { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(query, fc.boolean()), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        async (edits, queries, caughtUp) => {
          for (const [at, body, title] of edits) {
            await h.services.db.kysely.updateTable('articles').set({ body, ...(title === undefined ? {} : { title }) }).where('id', '=', ids[at]!).execute();
          }
          if (caughtUp) await h.runtime.searchIndex?.catchUp();
          const rows = await h.services.db.kysely.selectFrom('articles').select(['id', 'title', 'body']).where('site_id', '=', siteId).execute();
          for (const [q, matchCase] of queries) {
            const expected = new Map(
              rows
                .map((row) => [row.id, occurrences(row.title ?? '', q, matchCase).length + occurrences(row.body, q, matchCase).length] as const)
                .filter(([, count]) => count > 0),
            );
            const found = await h.services.search.search(actor, siteId, { q, match_case: matchCase, page: 1, per_page: 100 });
            expect(new Map(found.data.map((hit) => [hit.id, hit.count])), `${q} ${matchCase}`).toEqual(expected);
            expect(found.meta.total).toBe(expected.size);
            const counts = found.data.map((hit) => hit.count);
            expect(counts).toEqual([...counts].sort((a, b) => b - a));
          }
        },
      ),
      { numRuns: 40 },
    );
    expect(otherSite).toBeGreaterThan(siteId);
  });
});
