import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { runInBrowser, signInThroughForm, useBrowser } from '../helpers/chromium.js';
import { useHarness } from '../helpers/harness.js';

interface TableReport {
  page: string;
  table: string;
  /** The table sticks out of its card and nothing scrolls it. */
  escapes: boolean;
  /** It scrolls inside a box of its own. */
  scrolls: boolean;
  /** That box shows a scroll hint (shadows drawn as background gradients). */
  hinted: boolean;
}

/** Measures every table of the open page (runs in the browser). */
function measureTables(page: Page, path: string): Promise<TableReport[]> {
  return page.evaluate((path) => {
    return [...document.querySelectorAll('table')]
      .filter((table) => table.getClientRects().length > 0)
      .map((table) => {
        const card = table.closest('.card, section, main') ?? document.body;
        let box: HTMLElement | null = null;
        for (let up = table.parentElement; up && up !== card.parentElement; up = up.parentElement) {
          if (['auto', 'scroll'].includes(getComputedStyle(up).overflowX)) {
            box = up;
            break;
          }
        }
        const name = table.querySelector('caption')?.textContent?.trim() || table.className || 'table';
        const sticksOut = table.getBoundingClientRect().right > card.getBoundingClientRect().right + 1;
        const scrolls = box !== null && box.scrollWidth > box.clientWidth + 1;
        return {
          page: path,
          table: name.slice(0, 60),
          escapes: sticksOut && box === null,
          scrolls,
          hinted: box !== null && getComputedStyle(box).backgroundImage.includes('gradient'),
        };
      });
  }, path);
}

/**
 * Every UI table with the demo data, in Chromium at 1280 px and on a 390 px phone: a table fits its
 * card, or scrolls inside it with a visible hint that there is more; at 1280 px the report and
 * revision tables fit outright (no column cut off behind a scroll).
 */
describe.skipIf(!runInBrowser)('tables fit their cards or scroll visibly', () => {
  const h = useHarness();
  const browser = useBrowser();
  let base: string;
  let page: Page;
  const paths: string[] = [];
  const staffPaths: string[] = [];

  beforeAll(async () => {
    page = browser.page;
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const address = h.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    base = `http://127.0.0.1:${address.port}`;
    const demo = await h.services.demo.load();
    const key = demo.apiKey;
    const api = async <T>(path: string) =>
      (await h.app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${key}` } })).json() as T;
    const sites = (await api<{ data: { id: number }[] }>('/api/v1/sites')).data;
    const articles = (await api<{ data: { id: number }[] }>(`/api/v1/sites/${sites[0]!.id}/articles?status=published`)).data;
    const articleId = articles[0]!.id;
    // Two revisions with long reasons, so the revisions table has something to compare.
    for (const reason of ['Tightened the introduction for the autumn campaign and fixed two typos', 'Updated the title after the client review']) {
      await h.app.inject({
        method: 'PATCH',
        url: `/api/v1/articles/${articleId}`,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ title: `Edited ${reason.length}`, reason }),
      });
    }
    const revisions = await h.services.revisions.list(articleId);
    const staff = (await h.services.users.byEmail('staff@anchorage.test'))!;
    paths.push(
      '/app',
      ...sites.map((site) => `/app/sites/${site.id}`),
      `/app/sites/${sites[0]!.id}?month=${h.clock.now().toISOString().slice(0, 7)}`,
      `/app/articles/${articleId}/revisions`,
      `/app/articles/${articleId}/revisions/diff?a=${revisions.at(-1)!.number}&b=${revisions[0]!.number}`,
      '/app/connect',
      '/app/connections',
      '/app/activity',
    );
    staffPaths.push('/app/staff', `/app/staff/accounts/${staff.account_id}`, `/app/staff/accounts/1`);
  }, 180_000);

  const signIn = async (email: string, password: string) => {
    await browser.context.clearCookies();
    await signInThroughForm(page, base, email, password);
  };

  async function tablesAt(width: number): Promise<TableReport[]> {
    await page.setViewportSize({ width, height: 900 });
    const reports: TableReport[] = [];
    const visit = async (list: string[]) => {
      for (const path of list) {
        await page.goto(`${base}${path}`);
        reports.push(...(await measureTables(page, path)));
      }
    };
    await signIn('demo@anchorage.test', 'demo-password-2026');
    await visit(paths);
    await signIn('staff@anchorage.test', 'staff-password-2026');
    await visit(staffPaths);
    return reports;
  }

  it('at 1280 px: no table sticks out of its card, and the report and revision tables fit without scrolling', async () => {
    const reports = await tablesAt(1280);
    expect(reports.length).toBeGreaterThan(10);
    expect(reports.filter((r) => r.escapes)).toEqual([]);
    expect(reports.filter((r) => r.scrolls && !r.hinted)).toEqual([]);
    const mustFit = reports.filter((r) => /^\/app\/(sites|articles)\//.test(r.page));
    expect(mustFit.length).toBeGreaterThan(4);
    expect(mustFit.filter((r) => r.scrolls)).toEqual([]);
  }, 180_000);

  it('at 390 px: every table fits or scrolls inside its card with a visible scroll hint', async () => {
    const reports = await tablesAt(390);
    expect(reports.filter((r) => r.escapes)).toEqual([]);
    expect(reports.filter((r) => r.scrolls && !r.hinted)).toEqual([]);
    expect(reports.some((r) => r.scrolls)).toBe(true);
  }, 180_000);
});
