import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { isSharedText } from '../../src/core/text-parts.js';
import { operations } from '../../src/operations/index.js';
import { useHarness } from '../helpers/harness.js';
import { articleRow, expectUnchanged, getArticle, largeBody, patch, put, PROTECTED_BODY, revisionsOf, seedArticle, snapshot } from '../helpers/write-fixtures.js';

// A PUT of a body of a million characters or more over REST keeps the body as its UTF-8 bytes in
// shared memory from the thread that parses the request to the database and the answer
// (`SharedText`): what is stored and answered must be exactly the body sent, on both databases.

const h = useHarness();

type WriteBody = { data: { body: string; title: string; word_count: number }; meta: { sanitized: string[]; dry_run?: boolean } };

describe('a large PUT over REST (the body kept as shared bytes)', () => {
  it('stores and answers exactly the body sent, as GET and the revision read it back', async () => {
    const a = await seedArticle(h.services);
    const body = largeBody('stored');
    expect(body.length).toBeGreaterThan(1_000_000);
    const nextBody = vi.spyOn(h.services.htmlPool, 'nextBody');
    const res = await put(h, a.articleId, a.customer.key, { body, title: 'Large' });
    expect(res.status, res.text).toBe(200);
    // The pool got the body as shared bytes, not as a string.
    expect(nextBody.mock.calls.some(([, , change]) => 'body' in change && isSharedText(change.body))).toBe(true);
    nextBody.mockRestore();
    const answered = res.body as WriteBody;
    expect(answered.data.body === body).toBe(true);
    expect(answered.data.title).toBe('Large');
    expect(answered.meta.sanitized).toEqual([]);
    expect(answered.data.word_count).toBeGreaterThan(100_000);
    expect((await articleRow(h, a.articleId)).body === body).toBe(true);
    expect(((await getArticle(h, a.articleId, a.customer.key)).body as WriteBody).data.body === body).toBe(true);
    const revisions = await revisionsOf(h, a.articleId);
    expect(revisions).toHaveLength(2);
    expect((await h.services.revisions.get(a.articleId, revisions[1]!.id))!.body === body).toBe(true);
  });

  it('two large PUTs at once, and a PATCH of the same article meanwhile, are all stored (each large write takes its turn whole)', async () => {
    const a = await seedArticle(h.services);
    const b = await seedArticle(h.services);
    const [first, second, patched] = await Promise.all([
      put(h, a.articleId, a.customer.key, { body: largeBody('first') }),
      put(h, b.articleId, b.customer.key, { body: largeBody('second') }),
      patch(h, b.articleId, b.customer.key, { title: 'Patched meanwhile' }),
    ]);
    expect([first.status, second.status, patched.status], first.text + second.text + patched.text).toEqual([200, 200, 200]);
    expect((await articleRow(h, a.articleId)).body === largeBody('first')).toBe(true);
    const row = await articleRow(h, b.articleId);
    expect(row.body === largeBody('second')).toBe(true);
    expect(row.title).toBe('Patched meanwhile');
    expect(await revisionsOf(h, b.articleId)).toHaveLength(3);
  });

  it('the body the article already has changes nothing, and is answered as sent', async () => {
    const body = largeBody('same');
    const a = await seedArticle(h.services, { body });
    const before = await snapshot(h, a);
    const res = await put(h, a.articleId, a.customer.key, { body }, { headers: { 'idempotency-key': 'same-body' } });
    expect(res.status, res.text).toBe(200);
    expect((res.body as WriteBody).data.body === body).toBe(true);
    await expectUnchanged(h, a, before);
    const replay = await put(h, a.articleId, a.customer.key, { body }, { headers: { 'idempotency-key': 'same-body' } });
    expect(replay.text === res.text).toBe(true);
  });

  it('a dry run answers the body sent and saves nothing', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const body = largeBody('dry');
    const res = await put(h, a.articleId, a.customer.key, { body }, { query: '?dry_run=true' });
    expect(res.status, res.text).toBe(200);
    expect((res.body as WriteBody).data.body === body).toBe(true);
    expect((res.body as WriteBody).meta.dry_run).toBe(true);
    await expectUnchanged(h, a, before);
  });

  it('a body the sanitiser changes is stored and answered sanitised', async () => {
    const a = await seedArticle(h.services);
    const body = `${largeBody('sanitised')}<script>alert(1)</script>`;
    const res = await put(h, a.articleId, a.customer.key, { body });
    expect(res.status, res.text).toBe(200);
    const expected = largeBody('sanitised');
    expect((res.body as WriteBody).data.body === expected).toBe(true);
    expect((res.body as WriteBody).meta.sanitized.length).toBeGreaterThan(0);
    expect((await articleRow(h, a.articleId)).body === expected).toBe(true);
  });

  it('the same body sent again with its Idempotency-Key replays the first answer; another body with it is refused', async () => {
    const a = await seedArticle(h.services);
    const body = largeBody('once');
    const headers = { headers: { 'idempotency-key': 'large-put' } };
    const first = await put(h, a.articleId, a.customer.key, { body }, headers);
    expect(first.status, first.text).toBe(200);
    const second = await put(h, a.articleId, a.customer.key, { body }, headers);
    expect(second.status, second.text).toBe(200);
    expect(second.text === first.text).toBe(true);
    expect(await revisionsOf(h, a.articleId)).toHaveLength(2);
    const other = await put(h, a.articleId, a.customer.key, { body: largeBody('twice') }, headers);
    expect(other.status).toBe(422);
    expect((other.body as { error: string }).error).toBe('idempotency_key_reused');
  });

  it('is refused whole, nothing saved: a protected link removed, a field invalid beside it, a field it does not take', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const withoutLinks = largeBody('no links').replace(PROTECTED_BODY, '<p>Links gone.</p>');
    const refusals: [unknown, number, string][] = [
      [{ body: withoutLinks }, 422, 'protected_links_violation'],
      [{ body: largeBody('title'), title: 'x'.repeat(256) }, 422, 'validation_failed'],
      [{ body: largeBody('extra'), extra: true }, 422, 'validation_failed'],
    ];
    for (const [request, status, error] of refusals) {
      const res = await put(h, a.articleId, a.customer.key, request);
      expect(res.status, res.text).toBe(status);
      expect((res.body as { error: string }).error).toBe(error);
    }
    await expectUnchanged(h, a, before);
  });

  it('a large string in a field that is not the body is still validated as itself', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const res = await put(h, a.articleId, a.customer.key, { body: PROTECTED_BODY, title: 't'.repeat(1_200_000) });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ error: 'validation_failed', fields: { title: expect.any(Array) } });
    await expectUnchanged(h, a, before);
  });
});

describe('sharedTextFields', () => {
  it('names only fields that take any string: validation sees them as the empty string', () => {
    const named = operations.flatMap((operation) => (operation.rest.sharedTextFields ?? []).map((field) => [operation.name, field, operation.input.shape[field]] as const));
    expect(named.map(([operation, field]) => `${operation}.${field}`)).toEqual(['updateArticle.body']);
    for (const [, , schema] of named) {
      expect(schema).toBeInstanceOf(z.ZodString);
      // No check of its own (length, format, refinement) that the empty string would pass in its place.
      expect((schema as z.ZodString).def.checks ?? []).toEqual([]);
    }
  });
});
