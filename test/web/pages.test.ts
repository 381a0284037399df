import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiGet, seedSite } from '../helpers/fixtures.js';
import { createCustomer, type Harness, startHarness, TestClock } from '../helpers/harness.js';
import { csrfOf, decodeEntities, etagOf, InjectBrowser, pipelineRewrite } from './browser.js';

const protectedLink = '<a href="https://partner.example/guide" data-service-protected="backlink">partner guide</a>';
const body = `<p>First paragraph.</p>\n<p>Read the ${protectedLink} today.</p>\n<p>Last paragraph.</p>`;
const xss = '<script>alert("x")</script>';

/** Parses our CSV (RFC 4180, BOM, CRLF) into rows of cells. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  const input = text.replace(/^\uFEFF/, '');
  for (let i = 0; i < input.length; i += 1) {
    const c = input[i]!;
    if (quoted) {
      if (c === '"' && input[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && input[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i += 1;
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

describe('UI pages', () => {
  let h: Harness;
  let alice: Awaited<ReturnType<typeof createCustomer>>;
  let site: { siteId: number; articleIds: number[]; backlinkIds: number[] };
  let browser: InjectBrowser;

  beforeAll(async () => {
    // November is a whole past month here (the current month is reported to date: page-wording.test.ts).
    h = await startHarness({ clock: new TestClock(new Date('2026-12-15T12:00:00Z')) });
    alice = await createCustomer(h.services);
    site = await seedSite(h.services, alice.email, {
      name: `Bakery ${xss}`,
      website_url: 'https://bakery.example',
      articles: [
        { status: 'published', title: 'Editable article', published_at: '2026-11-02T09:00:00Z', body, meta_description: 'Old meta' },
        { status: 'published', title: `Title ${xss}`, published_at: '2026-11-05T09:00:00Z', body: '<p>x</p>' },
        { status: 'published', title: '=HYPERLINK("http://evil.example")', published_at: '2026-11-06T09:00:00Z', target_keyword: 'a, "quoted" keyword' },
        { status: 'published', title: '+plus', published_at: '2026-11-07T09:00:00Z', target_keyword: '-minus' },
        { status: 'draft', title: '@at', published_at: null },
        { status: 'scheduled', title: 'Next month', published_at: '2026-12-01T09:00:00Z' },
        { status: 'published', title: 'October one', published_at: '2026-10-10T09:00:00Z' },
        { status: 'archived', title: 'Archived in November', published_at: '2026-11-09T09:00:00Z' },
      ],
      backlinks: [
        { category: 'industry', acquired_at: '2026-11-03T10:00:00Z', source_domain: 'news.example', anchor_text: '=cmd|calc' },
        { category: 'local', acquired_at: '2026-11-04T10:00:00Z', source_domain: 'city.example', anchor_text: '@SUM(A1)' },
        { category: 'local', acquired_at: '2026-11-30T23:59:59Z', source_domain: 'late.example', anchor_text: `line\nbreak, ${xss}` },
        { category: 'industry', acquired_at: '2026-10-31T10:00:00Z', source_domain: 'october.example' },
        { category: 'industry', acquired_at: '2025-12-15T10:00:00Z', source_domain: 'last-year.example' },
      ],
    });
    browser = new InjectBrowser(h.app);
    await browser.signIn(alice.email);
  });
  afterAll(async () => {
    await h.close();
  });

  it('redirects / to the UI and serves the assets, chart.js included', async () => {
    const root = await h.app.inject({ method: 'GET', url: '/' });
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/app');
    for (const [url, type] of [
      ['/assets/app.css', /text\/css/],
      ['/assets/report.js', /javascript/],
      ['/assets/editor.js', /javascript/],
      ['/assets/copy.js', /javascript/],
      ['/assets/anchor.svg', /image\/svg\+xml/],
      ['/assets/lock.svg', /image\/svg\+xml/],
      ['/assets/vendor/chart.umd.min.js', /javascript/],
    ] as const) {
      const response = await h.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type'], url).toMatch(type);
    }
    const chart = await h.app.inject({ method: 'GET', url: '/assets/vendor/chart.umd.min.js' });
    expect(chart.body).toContain('Chart');
  });

  it('keeps UI routes out of the OpenAPI document', async () => {
    const doc = await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    const paths = Object.keys((doc.json() as { paths: Record<string, unknown> }).paths);
    expect(paths.some((path) => path.startsWith('/app') || path.startsWith('/assets'))).toBe(false);
  });

  it('lists the account’s sites', async () => {
    const response = await browser.get('/app');
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain(`href="/app/sites/${site.siteId}"`);
    expect(response.body).toContain('https://bakery.example');
  });

  it('reports a month with the numbers of the API, the previous month and 12 months of series', async () => {
    const response = await browser.get(`/app/sites/${site.siteId}?month=2026-11`);
    expect(response.statusCode).toBe(200);
    const api = await apiGet(h.app, `/api/v1/sites/${site.siteId}/stats?period=2026-11`, alice.key);
    expect(api.status).toBe(200);
    for (const name of ['articles_published', 'backlinks_acquired', 'backlinks_industry', 'backlinks_local'] as const) {
      const match = new RegExp(`data-stat-value="${name}">(\\d+)<`).exec(response.body);
      expect(Number(match?.[1]), name).toBe(api.body.data[name]);
    }
    expect(api.body.data).toMatchObject({ articles_published: 4, backlinks_acquired: 3, backlinks_industry: 1, backlinks_local: 2 });
    // Previous month: one article, one backlink.
    expect(response.body).toContain('vs Oct 2026 (1)');

    const series = JSON.parse(decodeEntities(/data-series="([^"]+)"/.exec(response.body)![1]!)) as {
      months: string[];
      industry: number[];
      local: number[];
      articles: number[];
    };
    expect(series.months).toHaveLength(12);
    expect(series.months[0]).toBe('2025-12');
    expect(series.months[11]).toBe('2026-11');
    for (const [i, month] of series.months.entries()) {
      const stats = await apiGet(h.app, `/api/v1/sites/${site.siteId}/stats?period=${month}`, alice.key);
      expect([series.articles[i], series.industry[i], series.local[i]], month).toEqual([
        stats.body.data.articles_published,
        stats.body.data.backlinks_industry,
        stats.body.data.backlinks_local,
      ]);
    }
    expect(response.body).toContain('<canvas id="backlinks-chart"');
    expect(response.body).toContain('src="/assets/vendor/chart.umd.min.js"');
    expect(response.body).toContain(`/app/sites/${site.siteId}/articles.csv?month=2026-11`);
    expect(response.body).toContain(`/app/sites/${site.siteId}/backlinks.csv?month=2026-11`);
  });

  it('filters the month’s articles by status and pages through them', async () => {
    const published = await browser.get(`/app/sites/${site.siteId}?month=2026-11&status=archived`);
    expect(published.body).toContain('Archived in November');
    expect(published.body).not.toContain('Editable article');
    const all = await browser.get(`/app/sites/${site.siteId}?month=2026-11&status=any`);
    expect(all.body).toContain('Editable article');
    expect(all.body).toContain('Archived in November');
    expect(all.body).not.toContain('October one');
    expect(all.body).not.toContain('Next month</a>');
    const pageTwo = await browser.get(`/app/sites/${site.siteId}?month=2026-11&apage=2`);
    expect(pageTwo.statusCode).toBe(200);
    expect(pageTwo.body).toContain('No articles were published in November 2026');
    const odd = await browser.get(`/app/sites/${site.siteId}?month=2026-13`);
    expect(odd.statusCode).toBe(422);
    expect(odd.body).toContain('is not a month');
  });

  it('exports CSV with quoting, line breaks and formula escaping', async () => {
    const articles = await browser.get(`/app/sites/${site.siteId}/articles.csv?month=2026-11`);
    expect(articles.statusCode).toBe(200);
    expect(articles.headers['content-type']).toMatch(/^text\/csv/);
    expect(articles.headers['content-disposition']).toMatch(/^attachment; filename="site-\d+-articles-2026-11\.csv"$/);
    expect(articles.body.startsWith('\uFEFFid,title,status')).toBe(true);
    expect(articles.body).toContain(`"'=HYPERLINK(""http://evil.example"")"`);
    expect(articles.body).toContain('"a, ""quoted"" keyword"');
    const rows = parseCsv(articles.body);
    expect(rows[0]).toEqual(['id', 'title', 'status', 'published_at', 'target_keyword', 'word_count', 'url']);
    const titles = rows.slice(1).map((row) => row[1]);
    expect(titles).toContain(`'=HYPERLINK("http://evil.example")`);
    expect(titles).toContain("'+plus");
    expect(titles).toContain(`Title ${xss}`);
    expect(rows.find((row) => row[1] === "'+plus")?.[4]).toBe("'-minus");
    expect(rows.slice(1)).toHaveLength(4); // the four published in November, as the report's table
    const any = parseCsv((await browser.get(`/app/sites/${site.siteId}/articles.csv?month=2026-11&status=any`)).body);
    expect(any.slice(1)).toHaveLength(4 + 1); // and one archived

    const backlinks = await browser.get(`/app/sites/${site.siteId}/backlinks.csv?month=2026-11`);
    const linkRows = parseCsv(backlinks.body);
    const anchors = linkRows.slice(1).map((row) => row[5]);
    expect(anchors).toContain("'=cmd|calc");
    expect(anchors).toContain("'@SUM(A1)");
    expect(anchors).toContain(`line\nbreak, ${xss}`);
    expect(linkRows).toHaveLength(4);
  });

  it('escapes a site name and an article title with <script> everywhere', async () => {
    const pages = [
      '/app',
      `/app/sites/${site.siteId}?month=2026-11`,
      `/app/articles/${site.articleIds[1]}`,
      `/app/articles/${site.articleIds[1]}/revisions`,
    ];
    for (const url of pages) {
      const response = await browser.get(url);
      expect(response.statusCode, url).toBe(200);
      expect(response.body, url).not.toContain(xss);
      expect(response.body, url).not.toContain('<script>alert');
      expect(response.body, url).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    }
    const staffUser = await createCustomer(h.services, { staff: true });
    const staffBrowser = new InjectBrowser(h.app);
    await staffBrowser.signIn(staffUser.email);
    for (const url of ['/app/staff', `/app/staff/accounts/${alice.accountId}`, `/app/sites/${site.siteId}`]) {
      const response = await staffBrowser.get(url);
      expect(response.body, url).not.toContain('<script>alert');
    }
  });

  it('saves an edit from the editor as a revision with origin editor', async () => {
    const articleId = site.articleIds[0]!;
    const page = await browser.get(`/app/articles/${articleId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-service-protected="backlink"');
    expect(page.body).toContain('Protected links');
    const newBody = body.replace('First paragraph.', 'A better first paragraph.');
    const saved = await browser.post(`/app/articles/${articleId}`, {
      _csrf: csrfOf(page.body),
      etag: etagOf(page.body),
      title: 'Edited article',
      meta_description: 'New meta',
      // Browsers send textarea line breaks as CRLF.
      body: newBody.replace(/\n/g, '\r\n'),
      reason: 'Better intro',
    });
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toBe(`/app/articles/${articleId}?saved=1`);
    const api = await apiGet(h.app, `/api/v1/articles/${articleId}`, alice.key);
    expect(api.body.data).toMatchObject({ title: 'Edited article', meta_description: 'New meta', body: newBody });
    const revisions = await h.services.revisions.list(articleId);
    expect(revisions).toHaveLength(2);
    expect(revisions[0]).toMatchObject({ origin: 'editor', reason: 'Better intro', user_email: alice.email });

    const listed = await browser.get(`/app/articles/${articleId}/revisions`);
    expect(listed.body).toContain('badge-editor');
    expect(listed.body).toContain('Better intro');
    expect(listed.body).toContain(alice.email);

    // Saving the same content again records nothing.
    const again = await browser.get(`/app/articles/${articleId}`);
    const unchanged = await browser.post(`/app/articles/${articleId}`, {
      _csrf: csrfOf(again.body),
      etag: etagOf(again.body),
      title: 'Edited article',
      meta_description: 'New meta',
      body: newBody,
    });
    expect(unchanged.headers.location).toBe(`/app/articles/${articleId}?saved=0`);
    expect(await h.services.revisions.list(articleId)).toHaveLength(2);
  });

  it('refuses an edit that breaks a protected link, listing it, and keeps the text', async () => {
    const articleId = site.articleIds[0]!;
    const page = await browser.get(`/app/articles/${articleId}`);
    const current = (await apiGet(h.app, `/api/v1/articles/${articleId}`, alice.key)).body.data.body as string;
    const broken = current.replace('partner guide</a>', 'our partner</a>');
    const response = await browser.post(`/app/articles/${articleId}`, {
      _csrf: csrfOf(page.body),
      etag: etagOf(page.body),
      title: 'Edited article',
      meta_description: 'New meta',
      body: broken,
    });
    expect(response.statusCode).toBe(422);
    expect(response.body).toContain('Not saved: your edit removes or changes protected links');
    expect(response.body).toContain('https://partner.example/guide');
    expect(response.body).toContain('our partner&lt;/a&gt;'); // the submitted text is kept in the form
    expect(await h.services.revisions.list(articleId)).toHaveLength(2);
  });

  it('saves a large form (parsed by a pool thread) exactly as a small one', async () => {
    const articleId = site.articleIds[3]!;
    const page = await browser.get(`/app/articles/${articleId}`);
    const current = (await apiGet(h.app, `/api/v1/articles/${articleId}`, alice.key)).body.data.body as string;
    const added = '<p>Ünïcode &amp; “quotes” — 😀 and a plus + sign.</p>'.repeat(2_000);
    const response = await browser.post(`/app/articles/${articleId}`, {
      _csrf: csrfOf(page.body),
      etag: etagOf(page.body),
      title: 'Large form',
      meta_description: 'Meta',
      body: `${current}${added}`,
    });
    expect(response.statusCode).toBe(303);
    const saved = (await apiGet(h.app, `/api/v1/articles/${articleId}`, alice.key)).body.data;
    expect(saved.title).toBe('Large form');
    expect(saved.body).toBe(`${current}${added}`);
  });

  it('reports what the sanitiser removed, and refuses a stale form', async () => {
    const articleId = site.articleIds[0]!;
    const page = await browser.get(`/app/articles/${articleId}`);
    const current = (await apiGet(h.app, `/api/v1/articles/${articleId}`, alice.key)).body.data.body as string;
    const response = await browser.post(`/app/articles/${articleId}`, {
      _csrf: csrfOf(page.body),
      etag: etagOf(page.body),
      title: 'Edited article',
      meta_description: 'New meta',
      body: `${current}<script>alert(1)</script><p onclick="x()">Clickable</p>`,
    });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('some markup was removed');
    expect(response.body).toContain('&lt;script&gt; element');
    expect(response.body).toContain('onclick attribute');

    // The form of `page` is stale now: its ETag is an old version.
    const stale = await browser.post(`/app/articles/${articleId}`, {
      _csrf: csrfOf(page.body),
      etag: etagOf(page.body),
      title: 'Stale edit',
      meta_description: 'New meta',
      body: current,
    });
    expect(stale.statusCode).toBe(412);
    expect(stale.body).toContain('changed elsewhere since you opened it');
  });

  it('diffs two revisions, escaped, with ins and del', async () => {
    const articleId = site.articleIds[0]!;
    const revisions = await h.services.revisions.list(articleId);
    const oldest = revisions[revisions.length - 1]!;
    const newest = revisions[0]!;
    const response = await browser.get(`/app/articles/${articleId}/revisions/diff?a=${oldest.number}&b=${newest.number}`);
    expect(response.statusCode).toBe(200);
    // The edited line, its changed words marked (revision-diff.test.ts covers the marks).
    expect(response.body).toMatch(/<del class="diff-line">.*&lt;p&gt;<mark class="diff-word">First<\/mark> paragraph\.&lt;\/p&gt;<\/del>/);
    expect(response.body).toMatch(/<ins class="diff-line">.*&lt;p&gt;<mark class="diff-word">A better first<\/mark> paragraph\.&lt;\/p&gt;<\/ins>/);
    expect(response.body).toContain('<del>Editable article</del>');
    expect(response.body).toContain('<ins>Edited article</ins>');
    const missing = await browser.get(`/app/articles/${articleId}/revisions/diff?a=${oldest.number}`);
    expect(missing.statusCode).toBe(422);
    const unknown = await browser.get(`/app/articles/${articleId}/revisions/diff?a=${oldest.number}&b=999999`);
    expect(unknown.statusCode).toBe(404);
  });

  it('restores a revision, and refuses one that would drop a protected link inserted later', async () => {
    const articleId = site.articleIds[1]!;
    const [imported] = await h.services.revisions.list(articleId);
    // The pipeline inserts a protected backlink later.
    const withLink = `<p>x</p><p>See ${protectedLink}.</p>`;
    await pipelineRewrite(h.services, articleId, withLink);
    const rewritten = 2; // the pipeline's revision, the article's second
    const page = await browser.get(`/app/articles/${articleId}/revisions`);
    const token = csrfOf(page.body);
    const refused = await browser.post(`/app/articles/${articleId}/revisions/${imported!.number}/restore`, { _csrf: token });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('Revision 1 was not restored'); // the article's first revision
    expect(refused.body).toContain('https://partner.example/guide');
    expect(refused.body).toContain('partner guide');
    expect((await h.services.revisions.list(articleId)).length).toBe(2);

    // An editor change, then restoring the pipeline's revision brings its content back.
    const article = await browser.get(`/app/articles/${articleId}`);
    await browser.post(`/app/articles/${articleId}`, {
      _csrf: token,
      etag: etagOf(article.body),
      title: 'Renamed',
      meta_description: '',
      body: `${withLink}<p>More.</p>`,
    });
    const restored = await browser.post(`/app/articles/${articleId}/revisions/${rewritten}/restore`, { _csrf: token });
    expect(restored.statusCode).toBe(303);
    expect(restored.headers.location).toBe(`/app/articles/${articleId}/revisions?restored=${rewritten}`);
    const revisions = await h.services.revisions.list(articleId);
    expect(revisions).toHaveLength(4);
    expect(revisions[0]!.origin).toBe('editor');
    const api = await apiGet(h.app, `/api/v1/articles/${articleId}`, alice.key);
    expect(api.body.data.body).toBe(withLink);
    const after = await browser.get(restored.headers.location as string);
    expect(after.body).toContain('Revision 2 was restored'); // the pipeline's, the article's second
  });

  it('creates a key shown once, lists it, and revokes it', async () => {
    const page = await browser.get('/app/connect');
    expect(page.body).toContain('http://localhost:3999/api/v1/sites');
    const posted = await browser.post('/app/connect/keys', { _csrf: csrfOf(page.body), name: 'Reporting, "main"', read_only: '1' });
    expect(posted.statusCode).toBe(303);
    const created = await browser.get(posted.headers.location as string);
    expect(created.headers['cache-control']).toBe('no-store');
    const key = /id="new-key"[^>]*value="(ak_[A-Za-z0-9]{40})"/.exec(created.body)?.[1];
    expect(key).toBeDefined();
    expect(created.body).toContain('Reporting, &quot;main&quot;');
    expect(created.body).toContain('read-only');
    const sites = await apiGet(h.app, '/api/v1/sites', key);
    expect(sites.status).toBe(200);

    const listed = await browser.get('/app/connect');
    expect(listed.body).not.toContain(key!);
    expect(listed.body).toContain(`${key!.slice(0, 8)}…`);
    const keys = await h.services.keys.list(alice.accountId);
    const id = keys.find((k) => k.name === 'Reporting, "main"')!.id;
    const revoked = await browser.post(`/app/connect/keys/${id}/revoke`, { _csrf: csrfOf(listed.body) });
    expect(revoked.statusCode).toBe(303);
    expect((await apiGet(h.app, '/api/v1/sites', key)).status).toBe(401);
    const after = await browser.get(revoked.headers.location as string);
    expect(after.body).toContain('The key was revoked');

    const before = (await h.services.keys.list(alice.accountId)).length;
    for (const name of ['  ', 'tab\tinside', 'bell\u0007', 'x'.repeat(101)]) {
      const refused = await browser.post('/app/connect/keys', { _csrf: csrfOf(listed.body), name });
      expect(refused.statusCode, JSON.stringify(name)).toBe(422);
      expect(refused.body).toContain('without control characters');
    }
    expect(await h.services.keys.list(alice.accountId)).toHaveLength(before);
  });

  it('shows the activity log with filters, paging and CSV', async () => {
    await apiGet(h.app, '/api/v1/sites', alice.key);
    await apiGet(h.app, `/api/v1/sites/${site.siteId}/articles?status=nonsense`, alice.key);
    await h.services.activity.flush();
    const all = await browser.get('/app/activity');
    expect(all.statusCode).toBe(200);
    // Paths may wrap after their slashes (<wbr>).
    expect(all.body.replaceAll('<wbr>', '')).toContain('/api/v1/sites');
    expect(all.body).toContain('listSites');
    expect(all.body).toContain('status-error');
    const errors = await browser.get('/app/activity?status=error');
    expect(errors.body.replaceAll('<wbr>', '')).toContain(`/api/v1/sites/${site.siteId}/articles`);
    expect(errors.body).not.toContain('>listSites<');
    const byKey = await browser.get(`/app/activity?credential=key:${alice.keyId}&channel=api`);
    expect(byKey.body).toContain('listSites');
    const mcp = await browser.get('/app/activity?channel=mcp');
    expect(mcp.body).toContain('No records match these filters');
    const future = await browser.get('/app/activity?from=2099-01-01');
    expect(future.body).toContain('No records match');
    const bad = await browser.get('/app/activity?from=yesterday');
    expect(bad.body).toContain('is not a date');

    const csv = await browser.get(`/app/activity.csv?credential=key:${alice.keyId}`);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const rows = parseCsv(csv.body);
    expect(rows[0]![0]).toBe('time');
    expect(rows.slice(1).some((row) => row[4] === '/api/v1/sites' && row[10] === '200')).toBe(true);
  });
});

describe('UI sign-up', () => {
  it('is closed unless the deployment allows it', async () => {
    const h = await startHarness();
    try {
      const response = await h.app.inject({ method: 'GET', url: '/app/sign-up' });
      expect(response.statusCode).toBe(404);
      expect(response.headers['content-type']).toMatch(/text\/html/);
      const signIn = await h.app.inject({ method: 'GET', url: '/app/sign-in' });
      expect(signIn.body).not.toContain('/app/sign-up');
    } finally {
      await h.close();
    }
  });

  it('creates a user and account and signs them in when open', async () => {
    const h = await startHarness({ env: { ALLOW_SIGNUP: 'true' } });
    try {
      const browser = new InjectBrowser(h.app);
      expect((await h.app.inject({ method: 'GET', url: '/app/sign-in' })).body).toContain('href="/app/sign-up"');
      const token = await browser.csrf('/app/sign-up');
      const short = await browser.post('/app/sign-up', { _csrf: token, email: 'new@example.test', password: 'short' });
      expect(short.statusCode).toBe(422);
      const anonymous = browser.cookie;
      const created = await browser.post('/app/sign-up', {
        _csrf: token,
        email: 'new@example.test',
        password: 'a long password 1',
        account: 'New Co',
      });
      expect(created.statusCode).toBe(303);
      expect(browser.cookie).not.toBe(anonymous);
      const home = await browser.get('/app');
      expect(home.statusCode).toBe(200);
      expect(home.body).toContain('New Co');
      const user = await h.services.users.byEmail('new@example.test');
      expect(user).toBeDefined();
      const again = new InjectBrowser(h.app);
      const taken = await again.post('/app/sign-up', { _csrf: await again.csrf('/app/sign-up'), email: 'new@example.test', password: 'a long password 1' });
      expect(taken.statusCode).toBe(422);
      expect(taken.body).toContain('exists already');
    } finally {
      await h.close();
    }
  });
});
