import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportSpan } from '../../src/web/report-data.js';
import { apiGet, seedSite } from '../helpers/fixtures.js';
import { createCustomer, type Harness, startHarness, TestClock } from '../helpers/harness.js';
import { authorizationUrl, browse, connectWithOAuth, CookieJar, formFields, modes, pkce, registerClient, signIn } from '../helpers/oauth-client.js';
import { csrfOf, decodeEntities, InjectBrowser } from './browser.js';

/** The part of a page between an element with `id` and the end of its section. */
function section(page: string, id: string): string {
  const start = page.indexOf(`id="${id}"`);
  expect(start, id).toBeGreaterThan(-1);
  return page.slice(start, page.indexOf('</section>', start));
}

const articleTitles = (markup: string): string[] => [...markup.matchAll(/<a href="\/app\/articles\/\d+">([^<]*)<\/a>/g)].map((m) => decodeEntities(m[1]!));

/** The report, revisions, activity, article, connect and OAuth pages say what they show, so that no one misreads them. */
describe('the pages say what they show', () => {
  let h: Harness;
  let alice: Awaited<ReturnType<typeof createCustomer>>;
  let siteId: number;
  let articleIds: number[];
  let browser: InjectBrowser;

  beforeAll(async () => {
    // The 23rd of November: the current month is three weeks old.
    h = await startHarness({ clock: new TestClock(new Date('2026-11-23T12:00:00Z')) });
    alice = await createCustomer(h.services);
    const seeded = await seedSite(h.services, alice.email, {
      name: 'Harbour Bakery',
      website_url: 'https://harbour.example',
      articles: [
        { status: 'published', title: 'Nov published early', published_at: '2026-11-03T09:00:00Z', featured_image_url: 'https://harbour.example/bread.jpg' },
        { status: 'published', title: 'Nov published late', published_at: '2026-11-20T09:00:00Z' },
        { status: 'scheduled', title: 'Nov scheduled', published_at: '2026-11-28T09:00:00Z' },
        { status: 'archived', title: 'Nov archived', published_at: '2026-11-05T09:00:00Z' },
        { status: 'published', title: 'Oct early', published_at: '2026-10-02T09:00:00Z' },
        { status: 'published', title: 'Oct mid', published_at: '2026-10-22T09:00:00Z' },
        { status: 'published', title: 'Oct late', published_at: '2026-10-28T09:00:00Z' },
      ],
      backlinks: [
        { category: 'industry', acquired_at: '2026-11-10T10:00:00Z', source_domain: 'nov.example' },
        { category: 'local', acquired_at: '2026-10-05T10:00:00Z', source_domain: 'oct-early.example' },
        { category: 'industry', acquired_at: '2026-10-25T10:00:00Z', source_domain: 'oct-late.example' },
      ],
    });
    siteId = seeded.siteId;
    articleIds = seeded.articleIds;
    browser = new InjectBrowser(h.app);
    await browser.signIn(alice.email);
  });
  afterAll(async () => {
    await h.close();
  });

  it('report: the articles heading, the status filter and the "Articles published" card agree', async () => {
    const page = (await browser.get(`/app/sites/${siteId}`)).body;
    const articles = section(page, 'articles-h');
    expect(articles).toContain('Articles published in November 2026 so far</h2>');
    expect(articles).toMatch(/<option value="published" selected>/);
    const listed = articleTitles(articles);
    expect(listed.sort()).toEqual(['Nov published early', 'Nov published late']);
    const card = Number(/data-stat-value="articles_published">(\d+)</.exec(page)![1]);
    expect(card).toBe(listed.length);

    // Any other status is one filter away, and the heading says so.
    const scheduled = (await browser.get(`/app/sites/${siteId}?status=scheduled`)).body;
    expect(section(scheduled, 'articles-h')).toContain('Scheduled articles dated in November 2026</h2>');
    expect(articleTitles(section(scheduled, 'articles-h'))).toEqual(['Nov scheduled']);
    const any = section((await browser.get(`/app/sites/${siteId}?status=any`)).body, 'articles-h');
    expect(any).toContain('Articles dated in November 2026, any status</h2>');
    expect(articleTitles(any).sort()).toEqual(['Nov archived', 'Nov published early', 'Nov published late', 'Nov scheduled']);

    // The CSV export holds what the table holds.
    const csv = (await browser.get(`/app/sites/${siteId}/articles.csv`)).body;
    expect(csv).toContain('Nov published late');
    expect(csv).not.toContain('Nov scheduled');
    expect(csv).not.toContain('Nov archived');
  });

  it('report: the current month is to date, compared with the same days of the month before, and says so', async () => {
    // Days as Intl writes them in English, its thin spaces read as spaces.
    const page = (await browser.get(`/app/sites/${siteId}?month=2026-11`)).body.replace(/[\u2009\u202f]/g, ' ');
    expect(page).toContain('Nov 1 – 23, 2026');
    expect(page).not.toContain('Nov 1 – 30');
    expect(page).toContain('November 2026 so far: Nov 1 – 23, 2026, compared with the same days of October 2026 (Oct 1 – 23, 2026).');
    const thisMonth = await apiGet(h.app, `/api/v1/sites/${siteId}/stats?period=this_month`, alice.key);
    const sameDays = await apiGet(h.app, `/api/v1/sites/${siteId}/stats?from=2026-10-01&to=2026-10-23`, alice.key);
    for (const name of ['articles_published', 'backlinks_acquired', 'backlinks_industry', 'backlinks_local'] as const) {
      const tile = new RegExp(`data-stat-value="${name}">(\\d+)<[\\s\\S]*?vs Oct 1 – 23, 2026 \\((\\d+)\\)`).exec(page);
      expect(tile, name).not.toBeNull();
      expect(Number(tile![1]), name).toBe(thisMonth.body.data[name]);
      expect(Number(tile![2]), name).toBe(sameDays.body.data[name]);
    }
    // October 1–23 had 2 articles (the whole month 3) and 1 backlink (the whole month 2).
    expect(sameDays.body.data).toMatchObject({ articles_published: 2, backlinks_acquired: 1 });

    // A past month is whole, against the whole month before.
    const october = (await browser.get(`/app/sites/${siteId}?month=2026-10`)).body.replace(/[\u2009\u202f]/g, ' ');
    expect(october).toContain('Oct 1 – 31, 2026');
    expect(october).toContain('The whole month, compared with the whole of September 2026.');
    expect(october).toContain('data-stat-value="articles_published">3<');
    expect(section(october, 'articles-h')).toContain('Articles published in October 2026</h2>');

    // The stats API keeps its contract: a YYYY-MM period is the whole month.
    const november = await apiGet(h.app, `/api/v1/sites/${siteId}/stats?period=2026-11`, alice.key);
    expect(november.body.data).toMatchObject({ from: '2026-11-01', to: '2026-11-30' });
  });

  it('report: the same days of a shorter month end at its last day', () => {
    expect(reportSpan('2026-03', new Date('2026-03-31T10:00:00Z'))).toEqual({
      from: '2026-03-01',
      to: '2026-03-31',
      previousFrom: '2026-02-01',
      previousTo: '2026-02-28',
      toDate: true,
    });
    expect(reportSpan('2026-02', new Date('2026-03-31T10:00:00Z'))).toMatchObject({ from: '2026-02-01', to: '2026-02-28', previousTo: '2026-01-31', toDate: false });
  });

  it('revisions are numbered per article, 1, 2, 3, not by database id', async () => {
    const [first, second] = articleIds;
    // Interleave the two articles' revisions, so that database ids jump.
    for (const [id, title] of [[first, 'First edit'], [second, 'Other edit'], [first, 'Second edit']] as const) {
      const response = await h.app.inject({
        method: 'PATCH',
        url: `/api/v1/articles/${id}`,
        headers: { authorization: `Bearer ${alice.key}`, 'content-type': 'application/json' },
        payload: { title },
      });
      expect(response.statusCode).toBe(200);
    }
    const revisions = await h.services.revisions.list(first!);
    expect(revisions.map((r) => r.id)).not.toEqual([3, 2, 1]);
    const page = (await browser.get(`/app/articles/${first}/revisions`)).body;
    const numbers = [...page.matchAll(/<td data-revision-number[^>]*>(\d+)/g)].map((m) => Number(m[1]));
    expect(numbers).toEqual([3, 2, 1]);
    for (const revision of revisions) expect(page).not.toContain(`#${revision.id}`);

    const diff = (await browser.get(`/app/articles/${first}/revisions/diff?a=1&b=3`)).body;
    expect(diff).toContain('<title>Compare revisions 1 and 3 · Anchorage</title>');
    expect(diff).toMatch(/Revision 1 <span class="muted thin">\(A, [^)]+\)<\/span> compared with revision 3/);

    const restored = await browser.post(`/app/articles/${first}/revisions/1/restore`, { _csrf: csrfOf(page) });
    expect(restored.statusCode).toBe(303);
    const after = (await browser.get(restored.headers.location as string)).body;
    expect(after).toContain('Revision 1 was restored');
    expect([...after.matchAll(/<td data-revision-number[^>]*>(\d+)/g)].map((m) => Number(m[1]))).toEqual([4, 3, 2, 1]);
  });

  it('the activity log is in exact order, to the second, with MCP handshakes one filter away', async () => {
    const db = h.services.db.kysely;
    const row = (created_at: string, fields: { channel: 'api' | 'mcp'; operation: string; tool?: string; status?: number; path?: string }) => ({
      created_at,
      account_id: alice.accountId,
      user_id: alice.userId,
      api_key_id: null,
      mcp_grant_id: null,
      channel: fields.channel,
      operation: fields.operation,
      method: 'POST',
      path: fields.path ?? '/mcp',
      tool: fields.tool ?? null,
      status: fields.status ?? 200,
      error: (fields.status ?? 200) >= 400 ? 'unauthenticated' : null,
      duration_ms: 3,
      client_ip: '127.0.0.1',
      user_agent: 'test',
      request_id: null,
    });
    // Stored out of time order (a buffered read lands after a write made later), within one minute.
    await db
      .insertInto('activity_log')
      .values([
        row('2026-11-22T08:00:41Z', { channel: 'api', operation: 'readLate', path: '/api/v1/sites/1' }),
        row('2026-11-22T08:00:07Z', { channel: 'api', operation: 'readEarly', path: '/api/v1/sites/2' }),
        row('2026-11-22T08:00:41Z', { channel: 'api', operation: 'readSameSecond', path: '/api/v1/sites/3' }),
        row('2026-11-22T08:00:20Z', { channel: 'mcp', operation: 'initialize' }),
        row('2026-11-22T08:00:21Z', { channel: 'mcp', operation: 'tools/list' }),
        row('2026-11-22T08:00:22Z', { channel: 'mcp', operation: 'notifications/initialized', status: 202 }),
        row('2026-11-22T08:00:23Z', { channel: 'mcp', operation: 'listSites', tool: 'list_sites' }),
        row('2026-11-22T08:00:24Z', { channel: 'mcp', operation: 'initialize', status: 401 }),
      ])
      .execute();
    const shown = (await browser.get('/app/activity?from=2026-11-22&to=2026-11-22')).body;
    const operations = [...shown.matchAll(/<span class="request-op">([^<]+)<\/span>/g)].map((m) => m[1]);
    expect(operations).toEqual(['readSameSecond', 'readLate', 'initialize', 'listSites', 'readEarly']);
    expect(shown).toContain('2026-11-22 08:00:41<span class="tz"> UTC</span>');
    expect(shown).toContain('2026-11-22 08:00:07<span class="tz"> UTC</span>');
    expect(shown).toContain('are hidden unless they failed');
    expect(shown).toContain('href="/app/activity?from=2026-11-22&amp;to=2026-11-22&amp;calls=all"');

    const everything = (await browser.get('/app/activity?from=2026-11-22&to=2026-11-22&calls=all')).body;
    expect([...everything.matchAll(/<span class="request-op">([^<]+)<\/span>/g)].map((m) => m[1])).toEqual([
      'readSameSecond',
      'readLate',
      'initialize',
      'listSites',
      'notifications/initialized',
      'tools/list',
      'initialize',
      'readEarly',
    ]);
    expect(everything).toMatch(/<option value="all" selected>/);
    const csv = (await browser.get('/app/activity.csv?from=2026-11-22&to=2026-11-22')).body;
    expect(csv).not.toContain('tools/list');
    expect((await browser.get('/app/activity.csv?from=2026-11-22&to=2026-11-22&calls=all')).body).toContain('tools/list');
  });

  it('the article page labels its featured image', async () => {
    const page = (await browser.get(`/app/articles/${articleIds[0]}`)).body;
    const figure = /<figure class="featured-figure">[\s\S]*?<\/figure>/.exec(page)?.[0];
    expect(figure).toBeDefined();
    expect(figure).toMatch(/<figcaption[^>]*>Featured image<\/figcaption>/);
    expect(figure).toContain('alt="Featured image of “Nov published early”"');
  });

  it('"API keys and assistants" explains both ways in: an API key over REST and an assistant over MCP, with examples to copy', async () => {
    const page = (await browser.get('/app/connect')).body;
    expect(page).toContain('1. A website or tool: an API key over REST');
    expect(page).toContain('2. An AI assistant: MCP, no key needed');
    expect(decodeEntities(page)).toContain(`curl -H "Authorization: Bearer <your key>" \\\n  ${h.settings.publicUrl}/api/v1/sites`);
    expect(page).toMatch(new RegExp(`<input id="mcp-url"[^>]*value="${h.settings.mcpPublicUrl}"`));
    expect(page).toContain('data-copy="#mcp-url"');
    expect(page).toContain(`claude mcp add --transport http anchorage ${h.settings.mcpPublicUrl}`);
    expect(page).toContain('data-copy="#rest-example"');
  });
});

describe('an assistant connecting: the sign-in names it, the consent page keeps the user on the decision', () => {
  let h: Harness;
  let base: string;

  beforeAll(async () => {
    h = await startHarness({ listen: true });
    base = h.settings.publicUrl;
  });
  afterAll(async () => {
    await h.close();
  });

  it('names the waiting application on the sign-in page, escaped, and only for a valid request', async () => {
    const customer = await createCustomer(h.services);
    const client = await registerClient(base, { client_name: 'Quill <b>Writer</b>' });
    const jar = new CookieJar();
    const start = await browse(jar, authorizationUrl(base, client, pkce().challenge));
    expect(start.status).toBe(302);
    const signInLocation = start.headers.get('location')!;
    const signInPage = await (await browse(jar, new URL(signInLocation, base))).text();
    expect(signInPage).toContain('<strong>Quill &lt;b&gt;Writer&lt;/b&gt;</strong> wants to connect to your Anchorage account.');

    // A wrong password keeps the hint.
    const fields = formFields(signInPage, '/app/sign-in');
    const wrong = await browse(jar, new URL('/app/sign-in', base), { ...fields, email: customer.email, password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('Quill &lt;b&gt;Writer&lt;/b&gt;</strong> wants to connect');

    // Plain sign-in, and a next that is no valid authorization request, name nobody.
    expect(await (await browse(new CookieJar(), new URL('/app/sign-in', base))).text()).not.toContain('data-waiting-app');
    const forged = new URL('/oauth/authorize?client_id=made-up&redirect_uri=http://127.0.0.1:7777/callback', base);
    const forgedPage = await (await browse(new CookieJar(), new URL(`/app/sign-in?next=${encodeURIComponent(forged.pathname + forged.search)}`, base))).text();
    expect(forgedPage).not.toContain('data-waiting-app');
    const repeated = authorizationUrl(base, client, pkce().challenge);
    repeated.searchParams.append('client_id', client.clientId);
    const repeatedPage = await (await browse(new CookieJar(), new URL(`/app/sign-in?next=${encodeURIComponent(repeated.pathname + repeated.search)}`, base))).text();
    expect(repeatedPage).not.toContain('data-waiting-app');

    // Signed in, the consent page has no navigation and no way off it but Allow or Deny.
    const next = await signIn(base, jar, signInLocation, customer.email);
    const consent = await browse(jar, new URL(next, base));
    expect(consent.status).toBe(200);
    const markup = await consent.text();
    expect(markup).toContain('Allow <span class="client-name">Quill &lt;b&gt;Writer&lt;/b&gt;</span> to use Anchorage?');
    expect(markup).not.toContain('<nav');
    expect(markup).not.toContain('Sign out');
    const links = [...markup.matchAll(/<a [^>]*href="([^"]*)"/g)].map((m) => m[1]);
    expect(links).toEqual(['#main']);
    expect(markup).toContain('value="allow"');
    expect(markup).toContain('value="deny"');
  });

  it('the activity log shows an assistant’s tool calls and hides its handshakes, one filter away (official MCP client)', async () => {
    const customer = await createCustomer(h.services);
    const { client, transport } = await connectWithOAuth(base, customer.email, modes[0]!.negotiation);
    await client.listTools();
    await client.callTool({ name: 'list_sites', arguments: {} });
    await transport.close();
    await h.services.activity.flush();
    const browser = new InjectBrowser(h.app);
    await browser.signIn(customer.email);
    const operations = (page: string) => [...page.matchAll(/<span class="request-op">([^<]+)<\/span>/g)].map((m) => m[1]);
    const shown = operations((await browser.get('/app/activity?channel=mcp')).body);
    expect(shown).toEqual(['listSites']);
    const everything = operations((await browser.get('/app/activity?channel=mcp&calls=all')).body);
    expect(everything).toContain('initialize');
    expect(everything).toContain('tools/list');
    expect(everything).toContain('listSites');
  });

  it('the pages the user already knows keep their navigation', async () => {
    const customer = await createCustomer(h.services);
    const browser = new InjectBrowser(h.app);
    await browser.signIn(customer.email);
    const page = (await browser.get('/app')).body;
    expect(page).toContain('<nav aria-label="Main">');
    expect(page).toContain('href="/docs"');
  });
});
