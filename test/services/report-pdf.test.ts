import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { pdfText } from '../../src/services/report-pdf.js';
import { apiGet, type BacklinkFixture, seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness, TestClock } from '../helpers/harness.js';
import { csrfOf, InjectBrowser } from '../web/browser.js';

const standardFontDataUrl = join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts/');

/** The text of every page of a PDF, as a reader's text layer (pdf.js) gives it; and the page count. */
async function readPdf(bytes: Buffer): Promise<{ text: string; pages: number }> {
  const loading = getDocument({ data: new Uint8Array(bytes), standardFontDataUrl });
  const pdf = await loading.promise;
  const pages: string[] = [];
  for (let n = 1; n <= pdf.numPages; n += 1) {
    const content = await (await pdf.getPage(n)).getTextContent();
    pages.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
  }
  await loading.destroy();
  return { text: pages.join('\n'), pages: pdf.numPages };
}

const count = (text: string, pattern: RegExp): number => text.match(pattern)?.length ?? 0;
const pad = (n: number) => String(n).padStart(3, '0');

describe('report PDF', () => {
  const h = useHarness({ clock: new TestClock(new Date('2026-12-15T12:00:00Z')) });
  let alice: Awaited<ReturnType<typeof createCustomer>>;
  let siteId: number;
  let browser: InjectBrowser;

  beforeAll(async () => {
    alice = await createCustomer(h.services);
    const backlinks: BacklinkFixture[] = Array.from({ length: 130 }, (_, i) => ({
      category: i % 3 === 0 ? 'local' : 'industry',
      acquired_at: `2026-11-${String((i % 28) + 1).padStart(2, '0')}T09:00:00Z`,
      source_domain: `source${i}.example`,
      source_url: `https://source${i}.example/page`,
      target_url: 'https://pdf.example/services',
      anchor_text: `ANCHOR-${pad(i)}`,
      anchor_type: 'partial',
      status: 'live',
    }));
    siteId = (
      await seedSite(h.services, alice.email, {
        name: 'PDF Plumbing 東京',
        website_url: 'https://pdf.example',
        articles: [
          ...Array.from({ length: 57 }, (_, i) => ({ status: 'published' as const, title: `ARTICLE-${pad(i)} fixing pipes`, published_at: `2026-11-${String((i % 28) + 1).padStart(2, '0')}T08:00:00Z`, target_keyword: 'pipes' })),
          { status: 'published', title: 'OCTOBER-ONLY article', published_at: '2026-10-10T08:00:00Z' },
          { status: 'draft', title: 'DRAFT-ONLY article', published_at: null },
          { status: 'scheduled', title: 'SCHEDULED-ONLY article', published_at: '2026-11-20T08:00:00Z' },
        ],
        backlinks: [...backlinks, { category: 'industry', acquired_at: '2026-10-02T09:00:00Z', anchor_text: 'OCTOBER-ANCHOR' }],
      })
    ).siteId;
    browser = new InjectBrowser(h.app);
    await browser.signIn(alice.email);
  });

  it('holds every row of both tables, the summary and the 12 months, matching the stats API', async () => {
    const response = await browser.get(`/app/sites/${siteId}/report.pdf?month=2026-11`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/pdf');
    expect(response.headers['content-disposition']).toBe(`attachment; filename="site-${siteId}-report-2026-11.pdf"`);
    const { text, pages } = await readPdf(response.rawPayload);
    expect(pages).toBeGreaterThan(3);

    const stats = await apiGet(h.app, `/api/v1/sites/${siteId}/stats?period=2026-11`, alice.key);
    expect(stats.status).toBe(200);
    expect(count(text, /ARTICLE-\d{3}/g)).toBe(stats.body.data.articles_published);
    expect(count(text, /ANCHOR-\d{3}/g)).toBe(stats.body.data.backlinks_acquired);
    expect(stats.body.data.articles_published).toBe(57);
    expect(stats.body.data.backlinks_acquired).toBe(130);
    for (let i = 0; i < 130; i += 1) expect(text).toContain(`ANCHOR-${pad(i)}`);
    expect(text).toContain(`Articles published in November 2026 (${stats.body.data.articles_published})`);
    expect(text).toContain(`Backlinks acquired in November 2026 (${stats.body.data.backlinks_acquired})`);
    expect(text).toMatch(new RegExp(`Industry backlinks\\s+${stats.body.data.backlinks_industry}\\s+1\\s+\\+${stats.body.data.backlinks_industry - 1}`));
    expect(text).toMatch(new RegExp(`Local backlinks\\s+${stats.body.data.backlinks_local}\\s+0\\s+\\+${stats.body.data.backlinks_local}`));
    expect(text).toContain('Backlinks per month');
    expect(text).toContain('Articles published per month');
    const { articles_published: a, backlinks_industry: i, backlinks_local: l, backlinks_acquired: b } = stats.body.data;
    expect(text).toMatch(new RegExp(`November 2026\\s+${a}\\s+${i}\\s+${l}\\s+${b}`));
    expect(text).toContain('PDF Plumbing ??');
    for (const absent of ['OCTOBER-ONLY', 'DRAFT-ONLY', 'SCHEDULED-ONLY', 'OCTOBER-ANCHOR']) expect(text).not.toContain(absent);
    // The first PDF starts a pool thread, which loads pdfkit and the embedded font.
  }, 60_000);

  it('is served on a share link too, logged, and refused like the link when revoked', async () => {
    const form = await browser.get(`/app/sites/${siteId}/shares`);
    const posted = await browser.post(`/app/sites/${siteId}/shares`, { _csrf: csrfOf(form.body), name: 'PDF', days: '30' });
    const shown = await browser.get(String(posted.headers.location));
    const token = /\/share\/(rs_[0-9A-Za-z]{40})/.exec(shown.body)![1]!;
    const page = await h.app.inject({ method: 'GET', url: `/share/${token}?month=2026-11` });
    expect(page.body).toContain(`href="/share/${token}/report.pdf?month=2026-11"`);
    const response = await h.app.inject({ method: 'GET', url: `/share/${token}/report.pdf?month=2026-11` });
    expect(response.statusCode).toBe(200);
    const { text } = await readPdf(response.rawPayload);
    expect(count(text, /ANCHOR-\d{3}/g)).toBe(130);
    await h.services.activity.flush();
    const log = await h.services.activity.list(alice.accountId, {}, { page: 1, per_page: 50 });
    expect(log.data.some((r) => r.operation === 'downloadReportSharePdf' && r.path?.endsWith('/2026-11.pdf'))).toBe(true);

    const id = Number(/created=(\d+)/.exec(String(posted.headers.location))![1]);
    await h.services.reportShares.revoke(alice.accountId, siteId, id);
    expect((await h.app.inject({ method: 'GET', url: `/share/${token}/report.pdf` })).statusCode).toBe(410);
    expect((await h.app.inject({ method: 'GET', url: `/share/rs_${'B'.repeat(40)}/report.pdf` })).statusCode).toBe(404);
  });

  it('is drawn off the event loop: GET /healthz sent meanwhile answers first', async () => {
    const order: string[] = [];
    const pdf = browser.get(`/app/sites/${siteId}/report.pdf?month=2026-11`).then((r) => {
      order.push('pdf');
      return r;
    });
    while (h.services.htmlPool.running === 0 && order.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const health = await h.app.inject({ method: 'GET', url: '/healthz' });
    order.push('health');
    expect(health.statusCode).toBe(200);
    expect((await pdf).statusCode).toBe(200);
    expect(order).toEqual(['health', 'pdf']);
  });

  it('refuses downloads of one account past its reports in progress with 429 and Retry-After', async () => {
    const form = await browser.get(`/app/sites/${siteId}/shares`);
    const posted = await browser.post(`/app/sites/${siteId}/shares`, { _csrf: csrfOf(form.body), name: 'Flood', days: '30' });
    const token = /\/share\/(rs_[0-9A-Za-z]{40})/.exec((await browser.get(String(posted.headers.location))).body)![1]!;
    const responses = await Promise.all(Array.from({ length: 5 }, () => h.app.inject({ method: 'GET', url: `/share/${token}/report.pdf?month=2026-11` })));
    const statuses = responses.map((r) => r.statusCode).sort();
    // The account may have two in progress (HEAVY_EDITS_PER_ACCOUNT).
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    const refused = responses.find((r) => r.statusCode === 429)!;
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toMatch(/2 reports or large edits in progress/);
  });

  it('keeps the account boundary and answers an empty month with empty tables', async () => {
    const bob = await createCustomer(h.services);
    const bobBrowser = new InjectBrowser(h.app);
    await bobBrowser.signIn(bob.email);
    expect((await bobBrowser.get(`/app/sites/${siteId}/report.pdf?month=2026-11`)).statusCode).toBe(404);
    const empty = await browser.get(`/app/sites/${siteId}/report.pdf?month=2025-01`);
    expect(empty.statusCode).toBe(200);
    const { text } = await readPdf(empty.rawPayload);
    expect(text).toContain('Articles published in January 2025 (0)');
    expect(text).toContain('Backlinks acquired in January 2025 (0)');
    const report = await browser.get(`/app/sites/${siteId}?month=2026-11`);
    expect(report.body).toContain(`href="/app/sites/${siteId}/report.pdf?month=2026-11"`);
  });

  it('shows only what its embedded font can draw', () => {
    expect(pdfText('Café “quoted” – Ωμέγα Жук 東京\tend')).toBe('Café “quoted” – Ωμέγα Жук ?? end');
    expect(pdfText(null)).toBe('');
  });
});
