import { beforeAll, describe, expect, it } from 'vitest';
import { ImportError } from '../../src/services/import.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, TestClock, useHarness } from '../helpers/harness.js';
import { csrfOf, decodeEntities, etagOf, InjectBrowser } from './browser.js';

/** In the UI: revision numbers, the report's months, page names, article titles. */

// The 28th of November 2026: November is the current, partial month.
const h = useHarness({ clock: new TestClock(new Date('2026-11-28T12:00:00Z')) });
let alice: Awaited<ReturnType<typeof createCustomer>>;
let siteId: number;
let articleIds: number[];
let browser: InjectBrowser;

beforeAll(async () => {
  alice = await createCustomer(h.services);
  const seeded = await seedSite(h.services, alice.email, {
    name: 'Quay Dental',
    articles: [
      { status: 'published', title: 'First', published_at: '2026-10-03T09:00:00Z', body: '<p>First body.</p>' },
      { status: 'published', title: 'Second', published_at: '2026-11-03T09:00:00Z', body: '<p>Second body.</p>' },
    ],
    backlinks: [
      { category: 'industry', acquired_at: '2026-10-05T10:00:00Z', source_domain: 'oct.example' },
      { category: 'local', acquired_at: '2026-11-05T10:00:00Z', source_domain: 'nov.example' },
    ],
  });
  siteId = seeded.siteId;
  articleIds = seeded.articleIds;
  browser = new InjectBrowser(h.app);
  await browser.signIn(alice.email);
});

/** Saves the editor form of an article with a new title. */
async function saveTitle(articleId: number, title: string) {
  const page = (await browser.get(`/app/articles/${articleId}`)).body;
  const body = decodeEntities(/<textarea id="body"[^>]*>([\s\S]*?)<\/textarea>/.exec(page)![1]!);
  return browser.post(`/app/articles/${articleId}`, { _csrf: csrfOf(page), etag: etagOf(page), title, meta_description: '', body });
}

describe('restoring a revision', () => {
  it('names it by its number in the article everywhere: the reason, the address, the forms, the diff', async () => {
    const [first, second] = articleIds as [number, number];
    // Interleaved with another article's revisions, so that database ids jump past the numbers.
    for (const [id, title] of [[first, 'First, edited'], [second, 'Second, edited'], [first, 'First, edited again']] as const) {
      expect((await saveTitle(id, title)).statusCode).toBe(303);
    }
    const revisions = await h.services.revisions.list(first);
    expect(revisions.map((r) => r.number)).toEqual([3, 2, 1]);
    expect(revisions.map((r) => r.id)).not.toEqual([3, 2, 1]);
    const oldestId = revisions[2]!.id;

    const page = (await browser.get(`/app/articles/${first}/revisions`)).body;
    // Forms restore and compare by number: no revision id is in the page.
    expect([...page.matchAll(/\/revisions\/(\d+)\/restore/g)].map((m) => Number(m[1]))).toEqual([2, 1]);
    expect([...page.matchAll(/name="a" value="(\d+)"/g)].map((m) => Number(m[1]))).toEqual([3, 2, 1]);
    for (const { id } of revisions) if (id > 3) expect(page).not.toContain(`value="${id}"`);

    const diff = await browser.get(`/app/articles/${first}/revisions/diff?a=1&b=3`);
    expect(diff.statusCode).toBe(200);
    expect(diff.body).toContain('<title>Compare revisions 1 and 3 · Anchorage</title>');
    expect(diff.body).toContain('<del>First</del>');
    expect((await browser.get(`/app/articles/${first}/revisions/diff?a=1&b=${oldestId}`)).statusCode).toBe(oldestId > 3 ? 404 : 200);

    const restored = await browser.post(`/app/articles/${first}/revisions/1/restore`, { _csrf: csrfOf(page) });
    expect(restored.statusCode).toBe(303);
    expect(restored.headers.location).toBe(`/app/articles/${first}/revisions?restored=1`);
    const [newest] = await h.services.revisions.list(first);
    expect(newest).toMatchObject({ number: 4, origin: 'editor', reason: 'Restored revision 1' });
    const after = (await browser.get(restored.headers.location as string)).body;
    expect(after).toContain('Revision 1 was restored');
    expect(after).toMatch(/<td class="wrap"[^>]*>Restored revision 1<\/td>/);
    expect((await h.services.articles.visible({ ...actorOf(), staff: false }, first)).title).toBe('First');

    // A number the article does not have restores nothing.
    for (const number of ['5', '0', '99999999999', 'x']) {
      const refused = await browser.post(`/app/articles/${first}/revisions/${number}/restore`, { _csrf: csrfOf(page) });
      expect(refused.statusCode, number).toBe(404);
    }
    expect(await h.services.revisions.list(first)).toHaveLength(4);
  });
});

function actorOf() {
  return { accountId: alice.accountId, userId: alice.userId, credential: { kind: 'session' as const }, channel: 'editor' as const, scopes: ['read' as const, 'write' as const], request: null };
}

describe('the report’s months', () => {
  const report = (query = '') => browser.get(`/app/sites/${siteId}${query}`);

  it('stops at the current month, which it marks "so far"', async () => {
    const current = await report();
    expect(current.statusCode).toBe(200);
    expect(current.body).toContain('<title>Quay Dental · November 2026 so far · Anchorage</title>');
    expect(current.body).toMatch(/<h1>Quay Dental <span class="muted thin">· November 2026 <span class="badge badge-partial" data-partial-month>so far<\/span><\/span><\/h1>/);
    expect(current.body).not.toContain('rel="next"');
    expect(current.body).toContain('max="2026-11"');
    expect(current.body).toContain(`href="/app/sites/${siteId}?month=2026-10" rel="prev"`);
    expect((await report('?month=2026-11')).body).not.toContain('rel="next"');

    const october = await report('?month=2026-10');
    expect(october.statusCode).toBe(200);
    expect(october.body).toContain(`href="/app/sites/${siteId}?month=2026-11" rel="next"`);
    expect(october.body).not.toContain('data-partial-month');
    expect(october.body).toContain('The whole month, compared with the whole of September 2026.');
  });

  it('answers a month that has not begun, or is no month, with a 422 saying so, never another month', async () => {
    for (const [month, message] of [
      ['2026-12', 'December 2026 has not begun yet: the latest report is November 2026, so far.'],
      ['2027-01', 'January 2027 has not begun yet: the latest report is November 2026, so far.'],
      ['2026-13', '“2026-13” is not a month: give one as YYYY-MM, such as 2026-11.'],
      ['bogus', '“bogus” is not a month: give one as YYYY-MM, such as 2026-11.'],
      ['2026-1', '“2026-1” is not a month: give one as YYYY-MM, such as 2026-11.'],
    ]) {
      const response = await report(`?month=${month}`);
      expect(response.statusCode, month).toBe(422);
      expect(decodeEntities(response.body), month).toContain(message);
      expect(response.body, month).toContain(`<a href="/app/sites/${siteId}">Show November 2026 so far</a>`);
      // No numbers of any month are shown for it.
      expect(response.body, month).not.toContain('data-stat-value');
      for (const download of ['report.pdf', 'articles.csv', 'backlinks.csv']) {
        const refused = await browser.get(`/app/sites/${siteId}/${download}?month=${month}`);
        expect(refused.statusCode, `${download} ${month}`).toBe(422);
        expect(decodeEntities(refused.body), `${download} ${month}`).toContain(message);
      }
    }
  });

  it('opens the next month once the service clock reaches it', async () => {
    h.clock.set('2026-12-01T00:00:00Z');
    try {
      const december = await report('?month=2026-12');
      expect(december.statusCode).toBe(200);
      expect(december.body).toContain('data-partial-month');
      expect((await report('?month=2026-11')).body).toContain(`href="/app/sites/${siteId}?month=2026-12" rel="next"`);
    } finally {
      h.clock.set('2026-11-28T12:00:00Z');
    }
  });
});

describe('names', () => {
  it('call the keys page what it is, from the sites page, the menu and the page itself', async () => {
    const sites = (await browser.get('/app')).body;
    expect(sites).toContain('<a class="button" href="/app/connect">API keys and assistants</a>');
    expect(sites).toContain('<a href="/app/connect">API keys &amp; assistants</a>');
    const page = (await browser.get('/app/connect')).body;
    expect(page).toContain('<title>API keys and assistants · Anchorage</title>');
    expect(page).toContain('<h1>API keys and assistants</h1>');
    expect(page).toContain('<a href="/app/connect" aria-current="page">API keys &amp; assistants</a>');
    for (const body of [sites, page]) expect(body).not.toMatch(/Connect a site/i);
  });
});

describe('an article’s title', () => {
  it('cannot be blanked in the editor, and nothing is saved', async () => {
    const articleId = articleIds[1]!;
    const before = await h.services.revisions.list(articleId);
    for (const title of ['', '   ', '\u00a0\t']) {
      const refused = await saveTitle(articleId, title);
      expect(refused.statusCode, JSON.stringify(title)).toBe(422);
      expect(refused.body).toContain('Give the article a title.');
    }
    expect(await h.services.revisions.list(articleId)).toHaveLength(before.length);
  });

  it('cannot come back blank by a restore of a revision saved before the rule', async () => {
    const articleId = articleIds[1]!;
    const [oldest] = (await h.services.revisions.list(articleId)).slice(-1);
    await h.services.db.kysely.updateTable('revisions').set({ title: ' ' }).where('id', '=', oldest!.id).execute();
    const before = await h.services.revisions.list(articleId);
    const page = (await browser.get(`/app/articles/${articleId}/revisions`)).body;
    const refused = await browser.post(`/app/articles/${articleId}/revisions/1/restore`, { _csrf: csrfOf(page) });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('<li><strong>title</strong>: Must not be empty or only white space.</li>');
    expect(await h.services.revisions.list(articleId)).toHaveLength(before.length);
  });

  it('cannot be blank in an import file: the file is refused at the title’s path and nothing is written', async () => {
    const sitesBefore = (await h.services.sites.list({ ...actorOf(), staff: false }, { page: 1, per_page: 100 })).meta.total;
    for (const title of ['', ' \n ']) {
      const file = { sites: [{ owner: alice.email, name: 'Blank', website_url: 'https://blank.example', articles: [{ status: 'draft' as const, url: 'https://blank.example/a', title, body: '<p>x</p>' }] }] };
      await expect(h.services.importer.run(file)).rejects.toThrow(ImportError);
      await expect(h.services.importer.run(file)).rejects.toThrow('$.sites[0].articles[0].title: Must not be empty or only white space.');
    }
    expect((await h.services.sites.list({ ...actorOf(), staff: false }, { page: 1, per_page: 100 })).meta.total).toBe(sitesBefore);
    // An article without a title (absent or null) is still the pipeline's to send.
    const untitled = await seedSite(h.services, alice.email, { name: 'Untitled', articles: [{ status: 'draft', title: null, body: '<p>x</p>' }] });
    expect(untitled.articleIds).toHaveLength(1);
  });
});
