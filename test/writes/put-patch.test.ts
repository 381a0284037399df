import { describe, expect, it } from 'vitest';
import { SANITIZER_VERSION } from '../../src/core/html.js';
import { wordCount } from '../../src/core/protected-anchors.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import {
  articleRow,
  BACKLINK,
  editCount,
  expectUnchanged,
  getArticle,
  INTERNAL,
  patch,
  PROTECTED_BODY,
  put,
  revisionsOf,
  type SeededArticle,
  seedArticle,
  send,
  snapshot,
} from '../helpers/write-fixtures.js';

const h = useHarness();

const FISH_BODY = '<p>one fish two fish red fish blue fish</p><p>A $ sign and (parens) and aaa.</p>';

/** A new customer and article; each test gets its own, so its request allowance is fresh too. */
const fresh = (body: string = PROTECTED_BODY): Promise<SeededArticle> => seedArticle(h.services, { body });

const validation = (fields: string[]) => ({
  error: 'validation_failed',
  message: expect.any(String),
  fields: Object.fromEntries(fields.map((f) => [f, expect.arrayContaining([expect.any(String)])])),
});

describe('updateArticle (PUT)', () => {
  it('replaces body and title, answers ArticleWithBody + meta.sanitized with a new ETag, and stores a full revision', async () => {
    const a = await fresh();
    const before = await getArticle(h, a.articleId, a.customer.key);
    const oldEtag = before.headers.etag;
    expect(oldEtag).toMatch(/^".+"$/);

    const newBody = `<h2>New heading</h2><p>${BACKLINK} and ${INTERNAL} stay.</p>`;
    const res = await put(h, a.articleId, a.customer.key, {
      body: newBody,
      title: 'Brand new title',
      reason: 'Rewrote the intro',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: {
        id: a.articleId,
        site_id: a.siteId,
        title: 'Brand new title',
        url: 'https://site.example/article',
        status: 'published',
        published_at: '2026-10-01T09:00:00Z',
        target_keyword: 'setup guide',
        // "New heading" + "partner page and our setup guide stay." — recomputed, never the client's 9999.
        word_count: 9,
        featured_image_url: 'https://img.example/original.jpg',
        meta_description: 'Original meta.',
        body: newBody,
        protected_links: [
          { type: 'backlink', href: 'https://partner.example/page', text: 'partner page' },
          { type: 'internal', href: '/guides/setup', text: 'our setup guide' },
        ],
      },
      meta: { sanitized: [] },
    });
    const newEtag = res.headers.etag;
    expect(newEtag).toMatch(/^".+"$/);
    expect(newEtag).not.toBe(oldEtag);

    const after = await getArticle(h, a.articleId, a.customer.key);
    expect(after.headers.etag).toBe(newEtag);
    expect(after.body.data).toEqual(res.body.data);

    const row = await articleRow(h, a.articleId);
    expect(row.body).toBe(newBody);
    expect(row.word_count).toBe(9);
    const revisions = await revisionsOf(h, a.articleId);
    expect(revisions).toHaveLength(2);
    expect(revisions[0]!.origin).toBe('rewrite');
    const revision = revisions[1]!;
    expect(revision).toMatchObject({
      article_id: a.articleId,
      account_id: a.customer.accountId,
      title: 'Brand new title',
      body: newBody,
      meta_description: 'Original meta.',
      featured_image_url: 'https://img.example/original.jpg',
      origin: 'api',
      user_id: a.customer.userId,
      api_key_id: a.customer.keyId,
      mcp_grant_id: null,
      reason: 'Rewrote the intro',
    });
    expect(row.current_revision_id).toBe(revision.id);
    expect(await editCount(h, a.customer.accountId)).toBe(1);
  });

  it('keeps the title when none is sent, sanitises the body and lists what it removed', async () => {
    const a = await fresh();
    const res = await put(h, a.articleId, a.customer.key, {
      body: `<p onclick="steal()">Hi ${BACKLINK} ${INTERNAL}</p><script>alert(1)</script><iframe src="https://x.example"></iframe>`,
    });
    expect(res.status).toBe(200);
    expect(res.body.data.title).toBe('Original title');
    expect(res.body.data.body).toBe(`<p>Hi ${BACKLINK} ${INTERNAL}</p>`);
    expect([...res.body.meta.sanitized].sort()).toEqual(['<iframe> element', '<script> element', 'onclick attribute on <p>', 'removed 8 characters of text inside <script>']);
    expect((await articleRow(h, a.articleId)).body).toBe(`<p>Hi ${BACKLINK} ${INTERNAL}</p>`);
    const revisions = await revisionsOf(h, a.articleId);
    expect(revisions).toHaveLength(2);
    expect(revisions[1]!.reason).toBeNull();
  });

  it('refuses a missing body, a 256-character title and a 2001-character reason with 422, saving nothing', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const cases: [unknown, string[]][] = [
      [{ title: 'x' }, ['body']],
      [{ body: PROTECTED_BODY, title: 'x'.repeat(256) }, ['title']],
      [{ body: PROTECTED_BODY, reason: 'r'.repeat(2001) }, ['reason']],
      [{ body: 42 }, ['body']],
    ];
    for (const [payload, fields] of cases) {
      const res = await put(h, a.articleId, a.customer.key, payload);
      expect(res.status, JSON.stringify(payload).slice(0, 80)).toBe(422);
      expect(res.body).toEqual(validation(fields));
    }
    await expectUnchanged(h, a, before);
  });

  it('a PUT of the same body and title is a no-op: 200, no revision, no allowance used', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const etag = (await getArticle(h, a.articleId, a.customer.key)).headers.etag;
    const res = await put(h, a.articleId, a.customer.key, { body: PROTECTED_BODY, title: 'Original title' });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(PROTECTED_BODY);
    expect(res.body.meta).toEqual({ sanitized: [] });
    expect(res.headers.etag).toBe(etag);
    await expectUnchanged(h, a, before);
  });
});

describe('editArticle (PATCH)', () => {
  it('sets title and meta_description and answers ArticleWithBody with a new ETag and a revision', async () => {
    const a = await fresh();
    const res = await patch(h, a.articleId, a.customer.key, { title: 'Patched', meta_description: 'New meta.', reason: 'SEO' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: a.articleId, title: 'Patched', meta_description: 'New meta.', body: PROTECTED_BODY, word_count: 22 });
    expect(res.body.meta).toEqual({ sanitized: [] });
    const row = await articleRow(h, a.articleId);
    expect(row).toMatchObject({ title: 'Patched', meta_description: 'New meta.', body: PROTECTED_BODY });
    const revisions = await revisionsOf(h, a.articleId);
    expect(revisions).toHaveLength(2);
    expect(revisions[1]).toMatchObject({ title: 'Patched', meta_description: 'New meta.', body: PROTECTED_BODY, origin: 'api', reason: 'SEO', api_key_id: a.customer.keyId, user_id: a.customer.userId });
    expect(res.headers.etag).toBe((await getArticle(h, a.articleId, a.customer.key)).headers.etag);
  });

  it('applies replacements in order (each sees the result of the ones before) and recomputes word_count', async () => {
    const a = await fresh(FISH_BODY);
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [
        { find: 'one fish', replace: 'ONE' },
        // Matches only after the first replacement.
        { find: 'ONE two', replace: 'first and second' },
        { find: 'blue fish', replace: 'blue whale swims' },
      ],
    });
    expect(res.status).toBe(200);
    const expected = '<p>first and second fish red fish blue whale swims</p><p>A $ sign and (parens) and aaa.</p>';
    expect(res.body.data.body).toBe(expected);
    expect(res.body.data.word_count).toBe(16);
    expect((await articleRow(h, a.articleId)).body).toBe(expected);
    expect((await articleRow(h, a.articleId)).word_count).toBe(16);
  });

  it('keeps word_count equal to a count of the whole body along a chain of edits counted around the replacements', async () => {
    const a = await fresh('<p>Alpha beta <em>gam</em>ma delta.</p><p>Epsilon zeta eta theta iota kappa.</p><ul><li>lambda mu</li></ul>');
    const chain = [
      // Apart from each other: made in one pass.
      [{ find: 'Alpha', replace: 'Al pha' }, { find: 'kappa', replace: 'kappa lambda' }],
      // Across the end of an inline element: "gamma delta" becomes one word.
      [{ find: 'ma delta', replace: 'madelta' }],
      // The second item matches only the first one's output: one after another.
      [{ find: 'zeta eta', replace: 'zeta-eta' }, { find: 'zeta-eta', replace: 'z e t a' }],
      // A whole list item's last word, and words up to a paragraph's end.
      [{ find: ' mu' }, { find: 'iota kappa lambda.', replace: 'iota.' }],
    ];
    const counts: number[] = [];
    for (const replacements of chain) {
      const res = await patch(h, a.articleId, a.customer.key, { replacements });
      expect(res.status).toBe(200);
      const row = await articleRow(h, a.articleId);
      // Clean, with stored counts: the next edit is counted from them, not from a parse.
      expect(row.body_sanitizer).toBe(SANITIZER_VERSION);
      expect(row.body).toBe(res.body.data.body);
      expect(res.body.data.word_count).toBe(wordCount(row.body));
      expect(row.word_count).toBe(wordCount(row.body));
      counts.push(row.word_count!);
    }
    expect(counts).toEqual([14, 13, 15, 12]);
  });

  it('counts the words of the whole body when a clean row stores no count (and carries a stored one otherwise)', async () => {
    const a = await fresh(FISH_BODY);
    await h.services.db.kysely.updateTable('articles').set({ word_count: null }).where('id', '=', a.articleId).execute();
    const counted = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: 'red', replace: 'dark red' }] });
    expect(counted.status).toBe(200);
    expect(counted.body.data.word_count).toBe(wordCount(counted.body.data.body));
    // A stored count is the one the next edit starts from: a count that is off stays off by as much.
    await h.services.db.kysely.updateTable('articles').set({ word_count: 100 }).where('id', '=', a.articleId).execute();
    const carried = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: 'blue', replace: 'light blue' }] });
    expect(carried.status).toBe(200);
    expect(carried.body.data.word_count).toBe(101);
  });

  it('all: true replaces every occurrence; replace defaults to ""; $& and $1 are literal; matching is case-sensitive and non-overlapping', async () => {
    const a = await fresh(FISH_BODY);
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [
        { find: 'fish', replace: 'cat', all: true },
        { find: ' red' },
        { find: 'two', replace: '$&-$1-$$' },
        { find: '(parens)', replace: '[$`]' },
        // "aaa" holds one non-overlapping "aa".
        { find: 'aa', replace: 'b' },
      ],
    });
    expect(res.status).toBe(200);
    const expected = '<p>one cat $&amp;-$1-$$ cat cat blue cat</p><p>A $ sign and [$`] and ba.</p>';
    // The replaced body is sanitised like any other body: "&" is printed as "&amp;".
    expect(res.body.data.body).toBe(expected);
    expect((await articleRow(h, a.articleId)).body).toBe(expected);

    const b = await fresh(FISH_BODY);
    const upper = await patch(h, b.articleId, b.customer.key, { replacements: [{ find: 'ONE', replace: 'x' }] });
    expect(upper.status).toBe(409);
    expect(upper.body).toEqual({
      error: 'replacement_failed',
      message: expect.any(String),
      failures: [{ index: 0, matches: 0, near_match: { offset: 3, length: 3, text: 'one', equivalent: true } }],
    });
  });

  it('a replacement may find text in markup as GET returns it', async () => {
    const a = await fresh();
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [{ find: '<p>Closing words here.</p>', replace: '<h2>Summary</h2><p>Closing words.</p>' }],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(PROTECTED_BODY.replace('<p>Closing words here.</p>', '<h2>Summary</h2><p>Closing words.</p>'));
  });

  it('reports EVERY failing replacement (0 and >1 matches) with 409 replacement_failed and saves nothing', async () => {
    const a = await fresh(FISH_BODY);
    const before = await snapshot(h, a);
    const res = await patch(h, a.articleId, a.customer.key, {
      title: 'Must not be saved',
      meta_description: 'Neither this.',
      replacements: [
        { find: 'one', replace: 'uno' },
        { find: 'nowhere' },
        { find: 'fish', replace: 'cat' },
        { find: 'red', replace: 'green', all: true },
        { find: 'aa' , replace: 'x', all: false },
        { find: 'Nothing here either', all: true },
      ],
    });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: 'replacement_failed',
      message: expect.any(String),
      failures: [
        { index: 1, matches: 0 },
        { index: 2, matches: 4, occurrences: expect.arrayContaining([{ offset: 7, before: '<p>uno ', after: expect.stringMatching(/^ two fish/) }]) },
        { index: 5, matches: 0 },
      ],
    });
    await expectUnchanged(h, a, before);
    expect((await articleRow(h, a.articleId)).body).toBe(FISH_BODY);
  });

  it('refuses a PATCH with none of title, meta_description, replacements with 422', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    for (const payload of [{}, { reason: 'just a reason' }]) {
      const res = await patch(h, a.articleId, a.customer.key, payload);
      expect(res.status).toBe(422);
      expect(res.body.error).toBe('validation_failed');
      expect(Object.keys(res.body.fields)).toEqual(['(request)']);
    }
    await expectUnchanged(h, a, before);
  });

  it('enforces the length limits in code points (422, nothing saved) and accepts values at the limit', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const refused: [unknown, string][] = [
      [{ title: 'x'.repeat(256) }, 'title'],
      [{ title: '😀'.repeat(256) }, 'title'],
      [{ meta_description: 'm'.repeat(501) }, 'meta_description'],
      [{ title: 'ok', reason: 'r'.repeat(2001) }, 'reason'],
      [{ replacements: Array.from({ length: 51 }, (_, i) => ({ find: `x${i}` })) }, 'replacements'],
      [{ replacements: [{ find: '', replace: 'x' }] }, 'replacements.0.find'],
      [{ replacements: [{ replace: 'x' }] }, 'replacements.0.find'],
      [{ title: 7 }, 'title'],
    ];
    for (const [payload, field] of refused) {
      const res = await patch(h, a.articleId, a.customer.key, payload);
      expect(res.status, field).toBe(422);
      expect(res.body, field).toEqual(validation([field]));
    }
    await expectUnchanged(h, a, before);

    // 255 astral-plane characters are 510 UTF-16 units: still 255 characters.
    const astral = '😀'.repeat(255);
    expect(astral.length).toBe(510);
    const ok = await patch(h, a.articleId, a.customer.key, { title: astral, meta_description: 'é'.repeat(500), reason: '✓'.repeat(2000) });
    expect(ok.status).toBe(200);
    expect(ok.body.data.title).toBe(astral);
    const row = await articleRow(h, a.articleId);
    expect(row.title).toBe(astral);
    expect(row.meta_description).toBe('é'.repeat(500));
    expect((await revisionsOf(h, a.articleId)).at(-1)!.reason).toBe('✓'.repeat(2000));
    expect((await patch(h, a.articleId, a.customer.key, { title: 'y'.repeat(255) })).status).toBe(200);
  });

  it('accepts exactly 50 replacements', async () => {
    const tokens = Array.from({ length: 50 }, (_, i) => `TOKEN${String(i).padStart(2, '0')}`);
    const a = await fresh(`<p>${tokens.join(' ')}</p>`);
    const res = await patch(h, a.articleId, a.customer.key, { replacements: tokens.map((t) => ({ find: t, replace: t.toLowerCase() })) });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(`<p>${tokens.map((t) => t.toLowerCase()).join(' ')}</p>`);
    expect(await revisionsOf(h, a.articleId)).toHaveLength(2);
  });

  it('a PATCH that changes nothing answers 200 without a revision or allowance use', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const etag = (await getArticle(h, a.articleId, a.customer.key)).headers.etag;
    for (const payload of [
      { title: 'Original title' },
      { meta_description: 'Original meta.' },
      { replacements: [{ find: 'Closing words', replace: 'Closing words' }] },
      { title: 'Original title', replacements: [{ find: 'Intro', replace: 'X' }, { find: 'X', replace: 'Intro' }] },
    ]) {
      const res = await patch(h, a.articleId, a.customer.key, payload);
      expect(res.status).toBe(200);
      expect(res.body.data.title).toBe('Original title');
      expect(res.body.data.body).toBe(PROTECTED_BODY);
      expect(res.headers.etag).toBe(etag);
    }
    await expectUnchanged(h, a, before);
  });
});

describe('U+0000 (valid JSON, not storable in PostgreSQL text)', () => {
  it('is dropped from bodies (PUT and PATCH) and refused in title, meta_description and reason — never a 500', async () => {
    const a = await fresh();
    const viaPut = await put(h, a.articleId, a.customer.key, { body: `${PROTECTED_BODY}<p>nu\u0000ll</p>` });
    expect(viaPut.status).toBe(200);
    expect((await articleRow(h, a.articleId)).body).toBe(`${PROTECTED_BODY}<p>null</p>`);
    const viaPatch = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: 'null', replace: 'ze\u0000ro' }] });
    expect(viaPatch.status).toBe(200);
    expect((await articleRow(h, a.articleId)).body).toBe(`${PROTECTED_BODY}<p>zero</p>`);

    const before = await snapshot(h, a);
    for (const [payload, field] of [
      [{ title: 'a\u0000b' }, 'title'],
      [{ meta_description: 'a\u0000b' }, 'meta_description'],
      [{ title: 'ok', reason: 'a\u0000b' }, 'reason'],
    ] as const) {
      const res = await patch(h, a.articleId, a.customer.key, payload);
      expect(res.status, field).toBe(422);
      expect(res.body, field).toEqual(validation([field]));
    }
    await expectUnchanged(h, a, before);
  });
});

describe('who may write', () => {
  it('a read-only key gets 403 insufficient_scope on PUT, PATCH and featured-image; nothing saved', async () => {
    const a = await fresh();
    const readOnly = await h.services.keys.create(a.customer.userId, { name: 'ro', readOnly: true });
    const before = await snapshot(h, a);
    const responses = [
      await put(h, a.articleId, readOnly.key, { body: '<p>x</p>' }),
      await patch(h, a.articleId, readOnly.key, { title: 'x' }),
      await send(h.app, 'POST', `/api/v1/articles/${a.articleId}/featured-image`, readOnly.key, { url: 'https://img.example/x.jpg' }),
    ];
    for (const res of responses) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'insufficient_scope', message: expect.any(String) });
    }
    // The key still reads.
    expect((await getArticle(h, a.articleId, readOnly.key)).status).toBe(200);
    await expectUnchanged(h, a, before);
  });

  it('another account’s article is 404 not_found, exactly like a nonexistent one; nothing saved', async () => {
    const a = await fresh();
    const intruder = await createCustomer(h.services);
    const before = await snapshot(h, a);
    const missing = 2_000_000_000;
    const attempts: [string, (id: number) => Promise<{ status: number; body: unknown }>][] = [
      ['PUT', (id) => put(h, id, intruder.key, { body: '<p>x</p>' })],
      ['PATCH', (id) => patch(h, id, intruder.key, { title: 'x' })],
      ['featured-image', (id) => send(h.app, 'POST', `/api/v1/articles/${id}/featured-image`, intruder.key, { url: 'https://img.example/x.jpg' })],
    ];
    for (const [name, attempt] of attempts) {
      const other = await attempt(a.articleId);
      const none = await attempt(missing);
      expect(other.status, name).toBe(404);
      expect(other.body, name).toEqual({ error: 'not_found', message: expect.any(String) });
      expect(other.body, name).toEqual(none.body);
      expect(none.status, name).toBe(404);
    }
    await expectUnchanged(h, a, before);
  });

  it('an admin (staff) key reads another account’s article but writing it is 403 forbidden; its own article it may write', async () => {
    const a = await fresh();
    const admin = await createCustomer(h.services, { staff: true });
    const before = await snapshot(h, a);
    expect((await getArticle(h, a.articleId, admin.key)).status).toBe(200);
    const responses = [
      await put(h, a.articleId, admin.key, { body: PROTECTED_BODY, title: 'admin' }),
      await patch(h, a.articleId, admin.key, { title: 'admin' }),
      await send(h.app, 'POST', `/api/v1/articles/${a.articleId}/featured-image`, admin.key, { url: 'https://img.example/x.jpg' }),
    ];
    for (const res of responses) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', message: expect.any(String) });
    }
    await expectUnchanged(h, a, before);

    const own = await seedArticle(h.services, {}, admin);
    const res = await patch(h, own.articleId, admin.key, { title: 'admin' });
    expect(res.status).toBe(200);
    expect((await articleRow(h, own.articleId)).title).toBe('admin');
  });
});

describe('dry_run', () => {
  it('PATCH ?dry_run=true answers the would-be article with meta.dry_run and saves nothing', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const res = await patch(
      h,
      a.articleId,
      a.customer.key,
      { title: 'Dry title', meta_description: 'Dry meta', replacements: [{ find: 'Intro paragraph', replace: 'Opening <b onclick="x()">bold</b>' }] },
      { query: '?dry_run=true' },
    );
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ sanitized: ['onclick attribute on <b>'], dry_run: true });
    expect(res.body.data).toMatchObject({
      id: a.articleId,
      title: 'Dry title',
      meta_description: 'Dry meta',
      body: PROTECTED_BODY.replace('Intro paragraph', 'Opening <b>bold</b>'),
      word_count: 22,
    });
    await expectUnchanged(h, a, before);
  });

  it('PUT ?dry_run=true answers the would-be article and saves nothing', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const body = `<p>Only ${BACKLINK} and ${INTERNAL}.</p>`;
    const res = await put(h, a.articleId, a.customer.key, { body, title: 'Dry' }, { query: '?dry_run=true' });
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ sanitized: [], dry_run: true });
    expect(res.body.data).toMatchObject({ title: 'Dry', body, word_count: 7 });
    await expectUnchanged(h, a, before);
  });

  it('a dry run with a violation answers the error (422 / 409) and saves nothing', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const violation = await put(h, a.articleId, a.customer.key, { body: '<p>links gone</p>' }, { query: '?dry_run=true' });
    expect(violation.status).toBe(422);
    expect(violation.body.error).toBe('protected_links_violation');
    expect(violation.body.protected_links).toHaveLength(2);
    const tooLong = await patch(h, a.articleId, a.customer.key, { title: 'x'.repeat(256) }, { query: '?dry_run=true' });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.error).toBe('validation_failed');
    const failed = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: 'absent' }] }, { query: '?dry_run=true' });
    expect(failed.status).toBe(409);
    expect(failed.body.failures).toEqual([{ index: 0, matches: 0 }]);
    const bad = await patch(h, a.articleId, a.customer.key, { title: 'x' }, { query: '?dry_run=yes' });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe('validation_failed');
    await expectUnchanged(h, a, before);
  });

  it('dry_run=false saves as usual, without meta.dry_run', async () => {
    const a = await fresh();
    const res = await patch(h, a.articleId, a.customer.key, { title: 'Wet' }, { query: '?dry_run=false' });
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ sanitized: [] });
    expect((await articleRow(h, a.articleId)).title).toBe('Wet');
    expect(await revisionsOf(h, a.articleId)).toHaveLength(2);
  });
});
