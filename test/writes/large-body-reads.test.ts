import { describe, expect, it } from 'vitest';
import { bodyInParts, bodyPieces, bodyText, bodyUnlessLarge, withLargeBody } from '../../src/db/body-pieces.js';
import { useHarness, testDatabaseUrl } from '../helpers/harness.js';
import { articleRow, getArticle, largeBody, patch, PROTECTED_BODY, revisionsOf, seedArticle } from '../helpers/write-fixtures.js';

const h = useHarness();

const decoded = (parts: Uint8Array[]) => Buffer.concat(parts).toString('utf8');

describe('reads and edits of an article whose stored body is large (PostgreSQL reads it in pieces)', () => {
  it('GET answers the body whole, and a revision reads back whole, characters of every width across every piece boundary', async () => {
    const body = largeBody('read');
    const a = await seedArticle(h.services, { body });
    const res = await getArticle(h, a.articleId, a.customer.key);
    expect(res.status).toBe(200);
    expect((res.body as { data: { body: string } }).data.body).toBe(body);
    const [revision] = await revisionsOf(h, a.articleId);
    expect((await h.services.revisions.get(a.articleId, revision!.id))!.body).toBe(body);
    expect(await h.services.revisions.get(a.articleId, revision!.id + 1_000)).toBeUndefined();
  });

  it('a replacement at the end of a body over 1 MB leaves every other character as it was', async () => {
    const body = largeBody('the end');
    expect(Buffer.byteLength(body)).toBeGreaterThan(1_000_000);
    const a = await seedArticle(h.services, { body });
    const revisions = (await revisionsOf(h, a.articleId)).length;
    const res = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: '<p>the end</p>', replace: '<p>the new end 😀</p>' }] });
    expect(res.status, res.text).toBe(200);
    const expected = body.replace('<p>the end</p>', '<p>the new end 😀</p>');
    expect((await articleRow(h, a.articleId)).body).toBe(expected);
    expect((res.body as { data: { body: string } }).data.body).toBe(expected);
    expect((await revisionsOf(h, a.articleId)).length).toBe(revisions + 1);
  });

  it('an edit that removes a protected link of a large body is refused, nothing saved', async () => {
    const body = largeBody('kept');
    const a = await seedArticle(h.services, { body });
    const before = await articleRow(h, a.articleId);
    const res = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: PROTECTED_BODY, replace: '<p>gone</p>' }] });
    expect(res.status, res.text).toBe(422);
    expect((res.body as { error: string }).error).toBe('protected_links_violation');
    expect(await articleRow(h, a.articleId)).toEqual(before);
  });

  it.skipIf(!testDatabaseUrl)('bodyText: the body at that version, whole; nothing at another version', async () => {
    const body = largeBody('text');
    const a = await seedArticle(h.services, { body });
    const { version } = await articleRow(h, a.articleId);
    expect(await bodyText(h.services.db.kysely, 'articles', a.articleId, version)).toBe(body);
    expect(await bodyText(h.services.db.kysely, 'articles', a.articleId, version + 1)).toBeUndefined();
  });

  it.skipIf(!testDatabaseUrl)('bodyPieces: the body at that version in pieces of whole characters, for a REST answer; nothing at another version', async () => {
    const body = largeBody('pieces');
    const a = await seedArticle(h.services, { body });
    const { version } = await articleRow(h, a.articleId);
    const { pieces } = (await bodyPieces(h.services.db.kysely, a.articleId, version))!;
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.join('') === body).toBe(true);
    for (const piece of pieces) expect(/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(piece)).toBe(false);
    expect(await bodyPieces(h.services.db.kysely, a.articleId, version + 1)).toBeUndefined();
  });

  it('GET of a large body stored without its protected links finds them in the body', async () => {
    const body = largeBody('legacy');
    const a = await seedArticle(h.services, { body });
    const expected = ((await getArticle(h, a.articleId, a.customer.key)).body as { data: { protected_links: unknown[] } }).data.protected_links;
    expect(expected.length).toBeGreaterThan(0);
    await h.services.db.kysely.updateTable('articles').set({ protected_links: null }).where('id', '=', a.articleId).execute();
    const res = await getArticle(h, a.articleId, a.customer.key);
    expect(res.status).toBe(200);
    expect((res.body as { data: { body: string; protected_links: unknown[] } }).data).toMatchObject({ body, protected_links: expected });
  });

  it.skipIf(!testDatabaseUrl)('bodyInParts: the UTF-8 of the body at that version, in parts cut between characters; nothing at another version', async () => {
    const body = largeBody('parts');
    const a = await seedArticle(h.services, { body });
    const { version } = await articleRow(h, a.articleId);
    const parts = (await bodyInParts(h.services.db.kysely, a.articleId, version))!;
    expect(parts.utf8.length).toBeGreaterThan(3);
    expect(decoded(parts.utf8)).toBe(body);
    // Each part is whole characters: decoded on its own, none holds a replacement character.
    for (const part of parts.utf8) expect(Buffer.from(part).toString('utf8')).not.toContain('\ufffd');
    expect(await bodyInParts(h.services.db.kysely, a.articleId, version + 1)).toBeUndefined();
  });

  it.skipIf(!testDatabaseUrl)('withLargeBody: an edit between the row and its pieces makes it read the row again, and answer one version whole', async () => {
    const a = await seedArticle(h.services, { body: largeBody('first') });
    const db = h.services.db.kysely;
    const { version } = await articleRow(h, a.articleId);
    let reads = 0;
    const row = await withLargeBody(
      () => {
        reads += 1;
        return db.selectFrom('articles').select(['version', bodyUnlessLarge.as('body')]).where('id', '=', a.articleId).executeTakeFirst();
      },
      async (read) => {
        if (reads === 1) {
          const res = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: '<p>first</p>', replace: '<p>second</p>' }] });
          expect(res.status, res.text).toBe(200);
        }
        return bodyText(db, 'articles', a.articleId, read.version);
      },
    );
    expect(reads).toBe(2);
    expect(row).toEqual({ version: version + 1, body: largeBody('second') });
  });

  it('withLargeBody: a body read whole is answered as it is, a row not found is none, and pieces are read only for a body left out', async () => {
    type Row = { id: number; body: string | null };
    const pieces: string[] = [];
    const piecesOf = async (row: { id: number }) => (pieces.push(`read ${row.id}`), `pieces of ${row.id}`);
    expect(await withLargeBody(async (): Promise<Row> => ({ id: 1, body: 'small' }), piecesOf)).toEqual({ id: 1, body: 'small' });
    expect(await withLargeBody(async (): Promise<Row | undefined> => undefined, piecesOf)).toBeUndefined();
    expect(await withLargeBody(async (): Promise<Row> => ({ id: 2, body: null }), piecesOf)).toEqual({ id: 2, body: 'pieces of 2' });
    expect(pieces).toEqual(['read 2']);
  });
});
