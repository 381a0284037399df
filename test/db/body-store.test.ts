import { sql, type Transaction } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { TextPieces, Utf8Text } from '../../src/core/text-parts.js';
import { type BodyForm, BodyStore, largeBodyChars } from '../../src/db/body-store.js';
import type { Database } from '../../src/db/schema.js';
import { useHarness } from '../helpers/harness.js';
import { articleRow, largeBody, PLAIN_BODY, revisionsOf, seedArticle } from '../helpers/write-fixtures.js';

const h = useHarness();

const store = () => new BodyStore(h.services.db);

/** A body read in any form, as one string. */
const textOf = (body: string | TextPieces | Uint8Array | Utf8Text): string => {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  if ('pieces' in body) return body.pieces.join('');
  return Buffer.concat(body.utf8).toString('utf8');
};

const retitle = (trx: Transaction<Database>, articleId: number, title: string) =>
  trx.updateTable('articles').set({ title }).where('id', '=', articleId).execute();

const forms: BodyForm[] = ['text', 'pieces', 'utf8'];

describe('BodyStore: where bodies are read and stored (both databases)', () => {
  it.each(forms)('reads a small and a large article whole in the form %s, with every other column as stored', async (form) => {
    for (const body of [PLAIN_BODY, largeBody(`store ${form}`)]) {
      const a = await seedArticle(h.services, { body });
      const { body: _stored, ...columns } = await articleRow(h, a.articleId);
      const row = (await store().article(a.articleId, undefined, form))!;
      expect(textOf(row.body) === body).toBe(true);
      expect(row).toMatchObject(columns);
      if (form === 'text') expect(typeof row.body).toBe('string');
    }
  });

  it.each(forms)('reads within an account: another account’s article, small or large, is none (form %s)', async (form) => {
    for (const body of [PLAIN_BODY, largeBody('not yours')]) {
      const a = await seedArticle(h.services, { body });
      expect(await store().article(a.articleId, a.customer.accountId + 1_000, form)).toBeUndefined();
      expect(textOf((await store().article(a.articleId, a.customer.accountId, form))!.body) === body).toBe(true);
    }
    expect(await store().article(2_000_000_000, undefined, form)).toBeUndefined();
  });

  it('reads a revision whole by its article and id, and none under another article', async () => {
    const body = largeBody('revision');
    const a = await seedArticle(h.services, { body });
    const [revision] = await revisionsOf(h, a.articleId);
    expect((await store().revision(a.articleId, revision!.id))!.body === body).toBe(true);
    expect(await store().revision(a.articleId + 1, revision!.id)).toBeUndefined();
  });

  it.each([0, largeBodyChars, Infinity])('a transaction for bodies of %s characters commits what it wrote, and rolls all of it back on a throw', async (bodyChars) => {
    const a = await seedArticle(h.services);
    await store().transaction(bodyChars, (trx) => retitle(trx, a.articleId, 'committed'));
    expect((await articleRow(h, a.articleId)).title).toBe('committed');
    const failed = store().transaction(bodyChars, async (trx) => {
      await retitle(trx, a.articleId, 'rolled back');
      throw new Error('refused');
    });
    await expect(failed).rejects.toThrow('refused');
    expect((await articleRow(h, a.articleId)).title).toBe('committed');
  });

  it('a read of many rows answers what the same query answers on the event loop’s connection', async () => {
    const a = await seedArticle(h.services, { body: largeBody('many') });
    const query = sql<{ id: number; bytes: number }>`select id, octet_length(body) as bytes from articles where id = ${a.articleId}`.compile(h.services.db.kysely);
    const { rows } = await store().readMany(query);
    expect(rows.map((row) => ({ id: row.id, bytes: Number(row.bytes) }))).toEqual([{ id: a.articleId, bytes: Buffer.byteLength(largeBody('many')) }]);
  });
});
