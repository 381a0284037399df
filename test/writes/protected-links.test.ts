import { describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import {
  articleRow,
  BACKLINK,
  expectUnchanged,
  INTERNAL,
  patch,
  PROTECTED_BODY,
  put,
  revisionsOf,
  type SeededArticle,
  seedArticle,
  snapshot,
} from '../helpers/write-fixtures.js';

const h = useHarness();

const backlink = { type: 'backlink', href: 'https://partner.example/page', text: 'partner page' };
const internal = { type: 'internal', href: '/guides/setup', text: 'our setup guide' };

const fresh = (body: string = PROTECTED_BODY): Promise<SeededArticle> => seedArticle(h.services, { body });

/**
 * A bypass attempt: the backlink anchor as it is stored, and what the client puts in its place.
 * PUT sends the whole body with the anchor swapped; PATCH swaps it with one replacement.
 */
const rewrites: [string, string][] = [
  ['href case changed', '<a href="https://Partner.example/page" data-service-protected="backlink">partner page</a>'],
  ['href path case changed', '<a href="https://partner.example/Page" data-service-protected="backlink">partner page</a>'],
  ['trailing slash added to href', '<a href="https://partner.example/page/" data-service-protected="backlink">partner page</a>'],
  ['entity-encoded href naming another URL', '<a href="&#104;ttps://partner.example/pag&#101;2" data-service-protected="backlink">partner page</a>'],
  ['entity-encoded href with another scheme', '<a href="&#104;ttp://partner.example/page" data-service-protected="backlink">partner page</a>'],
  ['entity-encoded javascript: href', '<a href="&#106;avascript:alert(1)" data-service-protected="backlink">partner page</a>'],
  ['href removed', '<a data-service-protected="backlink">partner page</a>'],
  ['text changed', '<a href="https://partner.example/page" data-service-protected="backlink">partner pages</a>'],
  ['text wrapped in markup', '<a href="https://partner.example/page" data-service-protected="backlink"><strong>partner page</strong></a>'],
  ['rel added', '<a href="https://partner.example/page" data-service-protected="backlink" rel="nofollow">partner page</a>'],
  ['target added', '<a href="https://partner.example/page" data-service-protected="backlink" target="_blank">partner page</a>'],
  ['title added', '<a href="https://partner.example/page" title="x" data-service-protected="backlink">partner page</a>'],
  ['marker removed', '<a href="https://partner.example/page">partner page</a>'],
  ['marker value changed backlink → internal', '<a href="https://partner.example/page" data-service-protected="internal">partner page</a>'],
  ['marker value made invalid', '<a href="https://partner.example/page" data-service-protected="yes">partner page</a>'],
  ['anchor removed, text kept', 'partner page'],
  ['anchor split by an inserted </a><a>', '<a href="https://partner.example/page" data-service-protected="backlink">partner</a><a href="https://evil.example/">page</a>'],
  ['anchor nested inside', '<a href="https://partner.example/page" data-service-protected="backlink">partner <a href="https://evil.example/">page</a></a>'],
  ['anchor hidden in a dropped element', '<noscript><a href="https://partner.example/page" data-service-protected="backlink">partner page</a></noscript>'],
  ['anchor hidden in a comment', '<!--<a href="https://partner.example/page" data-service-protected="backlink">partner page</a>-->'],
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a response body of any shape
async function expectViolation(res: { status: number; body: any }, links: object[] = [backlink]) {
  expect(res.status).toBe(422);
  expect(res.body).toEqual({ error: 'protected_links_violation', message: expect.any(String), protected_links: links });
}

describe('protected-link bypass attempts are refused with 422, the link listed, nothing saved', () => {
  it.each(rewrites)('PUT: %s', async (_name, replacement) => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const body = PROTECTED_BODY.replace(BACKLINK, replacement);
    expect(body).not.toBe(PROTECTED_BODY);
    await expectViolation(await put(h, a.articleId, a.customer.key, { body, title: 'would change' }));
    await expectUnchanged(h, a, before);
  });

  it.each(rewrites)('PATCH: %s', async (_name, replacement) => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const res = await patch(h, a.articleId, a.customer.key, {
      title: 'would change',
      replacements: [{ find: BACKLINK, replace: replacement }],
    });
    await expectViolation(res);
    await expectUnchanged(h, a, before);
  });

  it('PATCH: a replacement that splits the anchor text with </a><a href=…>', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [{ find: 'partner page', replace: 'partner</a><a href="https://evil.example/">page' }],
    });
    await expectViolation(res);
    await expectUnchanged(h, a, before);
  });

  it('PATCH: a replacement that nests an anchor inside the protected one', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [{ find: '>partner page<', replace: '>partner <a href="https://evil.example/">page</a><' }],
    });
    await expectViolation(res);
    await expectUnchanged(h, a, before);
  });

  it('PATCH: a replacement that breaks the anchor’s markup (deletes the `">` of its opening tag)', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const find = 'data-service-protected="backlink">';
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [{ find, replace: 'data-service-protected="backlink' }],
    });
    // The attribute value now runs to the next quote: the markup up to the internal link's
    // href is swallowed, which breaks that link too.
    await expectViolation(res, [backlink, internal]);
    await expectUnchanged(h, a, before);
  });

  it('PATCH: a replacement that removes the closing </a> of the anchor', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [{ find: 'partner page</a>', replace: 'partner page' }],
    });
    await expectViolation(res);
    await expectUnchanged(h, a, before);
  });

  it('PATCH: a replacement that edits the href inside the anchor’s opening tag', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [{ find: 'partner.example/page', replace: 'partner.example/page?ref=me' }],
    });
    await expectViolation(res);
    await expectUnchanged(h, a, before);
  });

  it('removing both protected links lists both, in document order', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    await expectViolation(await put(h, a.articleId, a.customer.key, { body: '<p>All links gone.</p>' }), [backlink, internal]);
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [
        { find: BACKLINK, replace: 'partner page' },
        { find: INTERNAL, replace: 'our setup guide' },
      ],
    });
    await expectViolation(res, [backlink, internal]);
    await expectUnchanged(h, a, before);
  });
});

describe('as many times as before', () => {
  const twice = `<p>First ${BACKLINK}.</p><p>Middle.</p><p>Second ${BACKLINK}.</p>`;

  it('an anchor stored twice must stay twice: removing one copy is refused, listing it once (PUT and PATCH)', async () => {
    const a = await fresh(twice);
    const before = await snapshot(h, a);
    const put1 = await put(h, a.articleId, a.customer.key, { body: `<p>First ${BACKLINK}.</p><p>Middle.</p><p>Second.</p>` });
    await expectViolation(put1, [backlink]);
    const patch1 = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: `Second ${BACKLINK}`, replace: 'Second' }] });
    await expectViolation(patch1, [backlink]);
    await expectUnchanged(h, a, before);
  });

  it('duplicate-then-remove-original: the copy counts like the original, so the net effect is a move and is accepted', async () => {
    const a = await fresh();
    // PATCH: first insert a copy of the anchor elsewhere, then remove the original.
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [
        { find: 'Closing words here.', replace: `Closing words with ${BACKLINK}.` },
        { find: `Read the ${BACKLINK} for the details.`, replace: 'Read the details.' },
      ],
    });
    expect(res.status).toBe(200);
    const moved = '<p>Intro paragraph with some words.</p><p>Read the details.</p>' +
      `<p>Second paragraph mentions ${INTERNAL} once.</p><p>Closing words with ${BACKLINK}.</p>`;
    expect(res.body.data.body).toBe(moved);
    expect(res.body.data.protected_links).toEqual([internal, backlink]);
    expect(res.body.meta.sanitized).toEqual([]);
    expect((await articleRow(h, a.articleId)).body).toBe(moved);

    // PUT: a body that holds the copy elsewhere and not the original.
    const b = await fresh();
    const body = `<p>${INTERNAL}</p><p>Elsewhere: ${BACKLINK}</p>`;
    const putRes = await put(h, b.articleId, b.customer.key, { body });
    expect(putRes.status).toBe(200);
    expect((await articleRow(h, b.articleId)).body).toBe(body);
  });

  it('duplicate-then-change-original: the changed one is a new, unprotected link; the protected one is still there once', async () => {
    const a = await fresh();
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [
        { find: 'Closing words here.', replace: `Closing words with ${BACKLINK}.` },
        { find: `Read the ${BACKLINK}`, replace: 'Read the <a href="https://evil.example/" data-service-protected="backlink">partner page</a>' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.protected_links).toEqual([internal, backlink]);
    expect(res.body.meta.sanitized).toEqual(['data-service-protected attribute on a new link']);
    const row = await articleRow(h, a.articleId);
    expect(row.body).toContain('<a href="https://evil.example/">partner page</a>');
    expect(row.body.split('data-service-protected="backlink"')).toHaveLength(2);
  });

  it('a client cannot multiply a protected link: the extra copy loses its marker (listed in meta.sanitized)', async () => {
    const a = await fresh();
    const body = `${PROTECTED_BODY}<p>Again: ${BACKLINK}</p>`;
    const res = await put(h, a.articleId, a.customer.key, { body });
    expect(res.status).toBe(200);
    expect(res.body.meta.sanitized).toEqual(['data-service-protected attribute on a new link']);
    const stored = `${PROTECTED_BODY}<p>Again: <a href="https://partner.example/page">partner page</a></p>`;
    expect(res.body.data.body).toBe(stored);
    expect(res.body.data.protected_links).toEqual([backlink, internal]);
    expect((await articleRow(h, a.articleId)).body).toBe(stored);
  });
});

describe('what is allowed', () => {
  it('moving a protected link to another paragraph is accepted (PUT and PATCH), with a revision', async () => {
    const a = await fresh();
    const body =
      `<p>Intro paragraph with some words and ${BACKLINK}.</p><p>Read the details.</p>` +
      `<p>Second paragraph mentions ${INTERNAL} once.</p><p>Closing words here.</p>`;
    const res = await put(h, a.articleId, a.customer.key, { body });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(body);
    expect(res.body.data.protected_links).toEqual([backlink, internal]);

    const patched = await patch(h, a.articleId, a.customer.key, {
      replacements: [
        { find: ` and ${BACKLINK}.`, replace: '.' },
        { find: 'Closing words here.', replace: `Closing ${BACKLINK} here.` },
      ],
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.protected_links).toEqual([internal, backlink]);
    expect(await revisionsOf(h, a.articleId)).toHaveLength(3);
  });

  it('text around and other links may change freely', async () => {
    const a = await fresh();
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [
        { find: 'Read the ', replace: 'Please read the ' },
        { find: ' for the details.', replace: ' <a href="https://other.example/">for details</a>.' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.protected_links).toEqual([backlink, internal]);
  });

  it('an entity-encoded spelling of the same href reads as the same link: accepted as a no-op', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const same = '<a href="&#104;ttps://partner.example/&#x70;age" data-service-protected="backlink">partner &#112;age</a>';
    const res = await put(h, a.articleId, a.customer.key, { body: PROTECTED_BODY.replace(BACKLINK, same) });
    expect(res.status).toBe(200);
    // The sanitiser prints the decoded href: the stored body is byte-identical, nothing to save.
    expect(res.body.data.body).toBe(PROTECTED_BODY);
    await expectUnchanged(h, a, before);
  });

  it('wrapping the anchor in an outer link drops the outer link (a browser ends it where the inner starts); the anchor survives', async () => {
    const a = await fresh();
    const before = await snapshot(h, a);
    const wrapped = `<a href="https://evil.example/">${BACKLINK}</a>`;
    const viaPut = await put(h, a.articleId, a.customer.key, { body: PROTECTED_BODY.replace(BACKLINK, wrapped) });
    expect(viaPut.status).toBe(200);
    expect(viaPut.body.meta.sanitized).toEqual(['<a> element around another link']);
    expect(viaPut.body.data.body).toBe(PROTECTED_BODY);
    const viaPatch = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: BACKLINK, replace: wrapped }] });
    expect(viaPatch.status).toBe(200);
    expect(viaPatch.body.data.body).toBe(PROTECTED_BODY);
    await expectUnchanged(h, a, before);
  });

  it('data-service-protected on a new link is stripped (listed in meta.sanitized) and the link kept without the marker', async () => {
    const a = await fresh();
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [{ find: 'Closing words here.', replace: 'Closing <a href="https://mine.example/" data-service-protected="backlink">my link</a>.' }],
    });
    expect(res.status).toBe(200);
    expect(res.body.meta.sanitized).toEqual(['data-service-protected attribute on a new link']);
    expect(res.body.data.protected_links).toEqual([backlink, internal]);
    const stored = PROTECTED_BODY.replace('Closing words here.', 'Closing <a href="https://mine.example/">my link</a>.');
    expect(res.body.data.body).toBe(stored);
    expect((await articleRow(h, a.articleId)).body).toBe(stored);

    const b = await fresh();
    const put1 = await put(h, b.articleId, b.customer.key, {
      body: `${PROTECTED_BODY}<p><a href="/new" data-service-protected="internal">new</a></p>`,
    });
    expect(put1.status).toBe(200);
    expect(put1.body.meta.sanitized).toEqual(['data-service-protected attribute on a new link']);
    expect(put1.body.data.body).toBe(`${PROTECTED_BODY}<p><a href="/new">new</a></p>`);
    expect(put1.body.data.protected_links).toEqual([backlink, internal]);
  });
});
