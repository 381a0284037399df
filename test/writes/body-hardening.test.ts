import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { articleRow, BACKLINK, getArticle, INTERNAL, patch, PROTECTED_BODY, put, seedArticle, snapshot, expectUnchanged } from '../helpers/write-fixtures.js';

// Through PUT, PATCH and import: bidi controls cannot change how
// a protected link displays, and no container swallows the text after it without a word.

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const CONTROLS_NOTE = 'bidi and formatting control characters (U+202A–U+202E, U+2066–U+206F)';
const BIDI_CONTROLS = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u206A', '\u206F'];

describe('bidi and formatting controls', () => {
  it.each(BIDI_CONTROLS.map((c) => [`U+${c.codePointAt(0)!.toString(16).toUpperCase()}`, c]))(
    'PUT: %s around a protected link is removed, raw or as an entity, and reported',
    async (_name, control) => {
      const a = await seedArticle(h.services);
      const entity = `&#x${control.codePointAt(0)!.toString(16)};`;
      const body = PROTECTED_BODY.replace(BACKLINK, `${control}${BACKLINK}${entity}`);
      const res = await put(h, a.articleId, a.customer.key, { body });
      expect(res.status).toBe(200);
      expect(res.body.data.body).toBe(PROTECTED_BODY);
      expect(res.body.meta.sanitized).toEqual([CONTROLS_NOTE]);
      expect((await articleRow(h, a.articleId)).body).toBe(PROTECTED_BODY);
    },
  );

  it('PUT: keeps the implicit marks, zero-width joiners and the soft hyphen right-to-left text needs', async () => {
    const a = await seedArticle(h.services);
    const text = '<p>\u05e9\u05dc\u05d5\u05dd\u200f (2026) \u200e\u0627\u0644\u0639\u0631\u0628\u064a\u0629\u061c \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \u{1F469}\u200d\u{1F4BB} hy\u00adphen \u200b</p>';
    const res = await put(h, a.articleId, a.customer.key, { body: PROTECTED_BODY + text });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(PROTECTED_BODY + text);
    expect(res.body.meta.sanitized).toEqual([]);
  });

  it('PUT: a control inside a protected link is removed, and the link still passes the guard', async () => {
    const a = await seedArticle(h.services);
    const res = await put(h, a.articleId, a.customer.key, { body: PROTECTED_BODY.replace('partner page', '\u202Epartner page\u202C') });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(PROTECTED_BODY);
    expect(res.body.data.protected_links.map((l: { text: string }) => l.text)).toEqual(['partner page', 'our setup guide']);
  });

  it('PUT: a control cannot disguise a javascript: URL as a relative one', async () => {
    const a = await seedArticle(h.services);
    const res = await put(h, a.articleId, a.customer.key, { body: `${PROTECTED_BODY}<p><a href="java\u202Escript:alert(1)">x</a><a href="java&#x2066;script:alert(1)">y</a></p>` });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(`${PROTECTED_BODY}<p><a>x</a><a>y</a></p>`);
  });

  it('PATCH: a replacement that adds controls next to a protected link has them removed', async () => {
    const a = await seedArticle(h.services);
    const res = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: 'Read the ', replace: 'Read the \u202E\u2067' }] });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(PROTECTED_BODY);
    expect(res.body.meta.sanitized).toEqual([CONTROLS_NOTE]);
  });

  it('a body stored with controls before this rule can still be edited: the guard compares links without them', async () => {
    const a = await seedArticle(h.services);
    const old = PROTECTED_BODY.replace('partner page', 'partner\u202E page');
    await h.services.db.kysely.updateTable('articles').set({ body: old }).where('id', '=', a.articleId).execute();
    const res = await put(h, a.articleId, a.customer.key, { body: `${old}<p>More.</p>` });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(`${PROTECTED_BODY.replace('partner page', 'partner page')}<p>More.</p>`);
    expect(res.body.data.protected_links).toHaveLength(2);
  });

  it('import: controls are removed from bodies (protected markers kept)', async () => {
    const a = await seedArticle(h.services, { body: `<p>\u202E${BACKLINK}\u2069 and ${INTERNAL}</p>` });
    expect((await articleRow(h, a.articleId)).body).toBe(`<p>${BACKLINK} and ${INTERNAL}</p>`);
  });
});

describe('no silent loss of text', () => {
  const CONTAINERS = ['svg', 'math', 'template', 'noscript', 'select', 'textarea', 'title', 'xmp', 'iframe', 'style', 'script', 'object', 'noembed'];

  it.each(CONTAINERS)('PUT: a never-closed <%s> keeps the text after it and says where it starts', async (tag) => {
    const a = await seedArticle(h.services);
    const lead = '<p>Lead.</p>';
    const res = await put(h, a.articleId, a.customer.key, { body: `${lead}<${tag}>${PROTECTED_BODY}<p>The rest of the article.</p>` });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(`${lead}${PROTECTED_BODY}<p>The rest of the article.</p>`);
    expect(res.body.meta.sanitized).toContain(`<${tag}> at character ${lead.length + 1} is never closed: closed at its start tag, the text after it kept`);
    expect(res.body.data.protected_links).toHaveLength(2);
  });

  it('PUT: an unclosed <svg> inside a paragraph does not take the paragraph’s text', async () => {
    const a = await seedArticle(h.services);
    const res = await put(h, a.articleId, a.customer.key, { body: `${PROTECTED_BODY}<p>Before <svg><circle r="1"/> after</p><p>Next.</p>` });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(`${PROTECTED_BODY}<p>Before  after</p><p>Next.</p>`);
  });

  it('PUT: a closed container’s text goes, and meta.sanitized says how much', async () => {
    const a = await seedArticle(h.services);
    const script = 'x'.repeat(1234);
    const res = await put(h, a.articleId, a.customer.key, {
      body: `${PROTECTED_BODY}<script>${script}</script><p>kept</p><select><option>one</option><option>two😀</option></select>`,
    });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(`${PROTECTED_BODY}<p>kept</p>`);
    expect([...res.body.meta.sanitized].sort()).toEqual(
      ['<script> element', '<select> element', 'removed 1,234 characters of text inside <script>', 'removed 7 characters of text inside <select>'].sort(),
    );
  });

  it('PATCH: a replacement that opens an unclosed <template> keeps the text after it', async () => {
    const a = await seedArticle(h.services);
    const res = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: '<p>Intro', replace: '<template><p>Intro' }] });
    expect(res.status).toBe(200);
    expect(res.body.data.body).toBe(PROTECTED_BODY);
    expect(res.body.meta.sanitized).toContain('<template> at character 1 is never closed: closed at its start tag, the text after it kept');
  });

  it('PUT: raw-text elements that keep opening more are refused with 422 naming the first and where it starts; nothing saved', async () => {
    const a = await seedArticle(h.services);
    const before = await snapshot(h, a);
    const res = await put(h, a.articleId, a.customer.key, { body: `${PROTECTED_BODY}${'<style>'.repeat(10)}text` });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('validation_failed');
    expect(res.body.fields.body[0]).toMatch(/^<style> at character \d+ is never closed/);
    await expectUnchanged(h, a, before);
  });

  it('import: a never-closed container keeps the text after it', async () => {
    const a = await seedArticle(h.services, { body: `<p>One</p><svg>${PROTECTED_BODY}` });
    const article = await getArticle(h, a.articleId, a.customer.key);
    expect(article.body.data.body).toBe(`<p>One</p>${PROTECTED_BODY}`);
    expect(article.body.data.protected_links).toHaveLength(2);
  });
});

describe('the same rules in the HTML worker pool (every change off the request thread)', () => {
  let pooled: Harness;
  beforeAll(async () => {
    pooled = await startHarness({ env: { HTML_INLINE_BELOW: '1' } });
  });
  afterAll(async () => {
    await pooled?.close();
  });

  it('removes controls, keeps the text after a never-closed container, refuses a raw-text chain with 422', async () => {
    const a = await seedArticle(pooled.services);
    const kept = await put(pooled, a.articleId, a.customer.key, { body: `<p>Lead.</p><svg>\u202E${PROTECTED_BODY}` });
    expect(kept.status).toBe(200);
    expect(kept.body.data.body).toBe(`<p>Lead.</p>${PROTECTED_BODY}`);
    expect(kept.body.meta.sanitized).toContain(CONTROLS_NOTE);
    expect(kept.body.meta.sanitized).toContain('<svg> at character 13 is never closed: closed at its start tag, the text after it kept');

    const before = await snapshot(pooled, a);
    const refused = await put(pooled, a.articleId, a.customer.key, { body: `${PROTECTED_BODY}${'<script>'.repeat(10)}x` });
    expect(refused.status).toBe(422);
    expect(refused.body.fields.body[0]).toMatch(/^<script> at character \d+ is never closed/);
    await expectUnchanged(pooled, a, before);
  });
});
