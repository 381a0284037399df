import fc from 'fast-check';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { replaceOccurrences } from '../../src/core/text-search.js';
import type { Actor } from '../../src/services/actor.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';

// A site-wide replace gives every article the body that replacing in that article alone gives:
// with match_case, the PATCH replacement {find, replace, all: true}; without, the same literal
// replacement of every case-insensitive occurrence, sanitised as any edit.
vi.setConfig({ testTimeout: 180_000 });

const h = useHarness();
let actor: Actor;
let owner: string;

const pieces = ['Call ', 'CALL ', 'call ', '555-0100', ' and ', '<strong>', '</strong>', 'café', 'CAFÉ', '&amp;', '</p><p>'];
const body = fc.array(fc.constantFrom(...pieces), { maxLength: 10 }).map((parts) => `<p>${parts.join('')}</p>`);

beforeAll(async () => {
  const customer = await createCustomer(h.services);
  owner = customer.email;
  actor = { accountId: customer.accountId, userId: customer.userId, credential: { kind: 'session' }, channel: 'editor', staff: false, scopes: ['read', 'write'], request: null };
});

const bodies = async (ids: number[]) => {
  const rows = await h.services.db.kysely.selectFrom('articles').select(['id', 'body']).where('id', 'in', ids).execute();
  return ids.map((id) => rows.find((row) => row.id === id)!.body);
};

describe('replaceInSite against replacing article by article', () => {
  it('gives each article the body a per-article replacement gives', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(body, { minLength: 1, maxLength: 5 }),
        fc.constantFrom('call 555', 'Call', 'café', '555-0100', 'l 5'),
        fc.constantFrom('', 'Ring', 'x<em>y</em>', 'CAFÉ'),
        fc.boolean(),
        async (texts, find, replace, matchCase) => {
          const seeded = async () => (await seedSite(h.services, owner, { articles: texts.map((text) => ({ status: 'draft' as const, body: text })) })).articleIds;
          const [whole, single] = [await seeded(), await seeded()];
          const siteOf = async (id: number) => (await h.services.db.kysely.selectFrom('articles').select('site_id').where('id', '=', id).executeTakeFirstOrThrow()).site_id;
          await h.services.siteReplace.replace(actor, await siteOf(whole[0]!), { find, replace, match_case: matchCase });
          for (const id of single) {
            if (matchCase) {
              await h.services.articleWrites.edit(actor, id, { replacements: [{ find, replace, all: true }] }).catch((error: { code?: string }) => {
                if (error.code !== 'replacement_failed') throw error;
              });
            } else {
              const [current] = await bodies([id]);
              const { text, count } = replaceOccurrences(current!, find, replace, false);
              if (count > 0) await h.services.articleWrites.replace(actor, id, { body: text });
            }
          }
          expect(await bodies(whole)).toEqual(await bodies(single));
        },
      ),
      { numRuns: 30 },
    );
  });
});
