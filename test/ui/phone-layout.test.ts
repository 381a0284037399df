import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { reportPalette } from '../../src/core/report-palette.js';
import { runInBrowser, signInThroughForm, useBrowser } from '../helpers/chromium.js';
import { useHarness } from '../helpers/harness.js';

interface Placement {
  what: string;
  /** Rows of the table the selector matched in. */
  count: number;
  /** Those that stick out of the viewport or are clipped (their content wider than their box). */
  outside: string[];
}

/** Where the cells matching each selector sit (runs in the browser). */
function placements(page: Page, selectors: Record<string, string>): Promise<{ pageOverflows: boolean; found: Placement[] }> {
  return page.evaluate((selectors) => {
    const width = document.documentElement.clientWidth;
    const found = Object.entries(selectors).map(([what, selector]) => {
      const elements = [...document.querySelectorAll<HTMLElement>(selector)].filter((element) => element.getClientRects().length > 0);
      const outside = elements
        .filter((element) => {
          const box = element.getBoundingClientRect();
          return box.left < -0.5 || box.right > width + 0.5 || element.scrollWidth > element.clientWidth + 1;
        })
        .map((element) => `${element.textContent?.trim().slice(0, 40)} @ ${Math.round(element.getBoundingClientRect().left)}–${Math.round(element.getBoundingClientRect().right)}`);
      return { what, count: elements.length, outside };
    });
    return { pageOverflows: document.documentElement.scrollWidth > width + 1, found };
  }, selectors);
}

/**
 * Elements whose text is broken inside a word: narrower than the widest piece of it that holds no
 * break opportunity (between words, after an address's separators `/ ? & = . #`, after a hyphen).
 */
async function brokenWords(page: Page, selector: string): Promise<string[]> {
  const { count, broken } = await page.evaluate((selector) => {
    const context = document.createElement('canvas').getContext('2d')!;
    const shown = [...document.querySelectorAll<HTMLElement>(selector)].filter((element) => element.getClientRects().length > 0);
    const broken = shown.flatMap((element) => {
        const style = getComputedStyle(element);
        context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        const room = element.getBoundingClientRect().width - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        const pieces = (element.textContent ?? '').split(/\s+|(?<=[/?&=.#-])/).filter(Boolean);
        const widest = pieces.reduce((best, piece) => (context.measureText(piece).width > context.measureText(best).width ? piece : best), '');
        return context.measureText(widest).width > room + 1 ? [`“${widest}” in ${Math.round(room)} px`] : [];
      });
    return { count: shown.length, broken };
  }, selector);
  expect(count, selector).toBeGreaterThan(0);
  return broken;
}

/** Selects with a choice that would fit a select as wide as the form, but does not fit this one (its text is cut). */
function cutSelects(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((selector) => {
    const context = document.createElement('canvas').getContext('2d')!;
    return [...document.querySelectorAll<HTMLSelectElement>(selector)].flatMap((select) => {
      const style = getComputedStyle(select);
      context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      // The arrow of a closed select takes about 20 px on the right.
      const room = select.clientWidth - parseFloat(style.paddingLeft) - 20;
      const form = select.form!;
      const widest = form.clientWidth - parseFloat(getComputedStyle(form).paddingLeft) * 2 - parseFloat(style.paddingLeft) - 20;
      return [...select.options]
        .filter((option) => context.measureText(option.text).width > room && context.measureText(option.text).width <= widest)
        .map((option) => `${select.name}: “${option.text}” in ${Math.round(room)} px`);
    });
  }, selector);
}

/**
 * The columns each table exists for, in Chromium at 1280 px and on a 390 px phone: Restore,
 * origin, author and reason of the revisions; request and status of the activity log; source,
 * anchor, status and target of the report's backlinks. Each must lie inside the viewport, whole,
 * without scrolling sideways. Screenshots go to ANCHORAGE_SCREENSHOTS (or a temporary directory).
 */
describe.skipIf(!runInBrowser)('the columns a table is for, on a phone and a desktop', () => {
  const h = useHarness();
  const browser = useBrowser();
  let base: string;
  let page: Page;
  let shots: string;
  let articleId: number;
  let siteId: number;
  let month: string;
  let protectedArticleId: number;

  beforeAll(async () => {
    page = browser.page;
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const address = h.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    base = `http://127.0.0.1:${address.port}`;
    const demo = await h.services.demo.load();
    const call = async (method: string, path: string, payload?: object) =>
      h.app.inject({
        method: method as 'GET',
        url: path,
        headers: { authorization: `Bearer ${demo.apiKey}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
        ...(payload ? { payload: JSON.stringify(payload) } : {}),
      });
    const sites = (await call('GET', '/api/v1/sites')).json<{ data: { id: number }[] }>().data;
    siteId = sites[0]!.id;
    articleId = (await call('GET', `/api/v1/sites/${siteId}/articles?status=published`)).json<{ data: { id: number }[] }>().data[0]!.id;
    for (const reason of ['Tightened the introduction for the autumn campaign and fixed two typos', 'Updated the title after the client review']) {
      await call('PATCH', `/api/v1/articles/${articleId}`, { title: `Edited ${reason.length}`, reason });
    }
    // A one-word change in a paragraph, for the diff page.
    const body = (await call('GET', `/api/v1/articles/${articleId}`)).json<{ data: { body: string } }>().data.body;
    const paragraph = /<p>([^<]{60,})<\/p>/.exec(body)![1]!;
    const word = /\b[a-z]{6,}\b/.exec(paragraph)![0];
    const edited = await call('PATCH', `/api/v1/articles/${articleId}`, { replacements: [{ find: paragraph, replace: paragraph.replace(word, 'remarkable') }], reason: 'One word' });
    expect(edited.statusCode).toBe(200);
    // A failed request in the log; a long path, made with a key of a long name.
    await call('GET', '/api/v1/articles/999999999');
    const demoUser = (await h.services.users.byEmail('demo@anchorage.test'))!;
    const longKey = await h.services.keys.create(demoUser.id, { name: 'Reporting dashboard for the agency’s Portland clients' });
    await h.app.inject({
      method: 'GET',
      url: `/api/v1/sites/${siteId}/backlinks`,
      headers: { authorization: `Bearer ${longKey.key}` },
    });
    month = h.clock.now().toISOString().slice(0, 7);
    for (const { id } of (await call('GET', `/api/v1/sites/${siteId}/articles?per_page=100`)).json<{ data: { id: number }[] }>().data) {
      const links = (await call('GET', `/api/v1/articles/${id}`)).json<{ data: { protected_links: unknown[] } }>().data.protected_links;
      if (links.length > 1) {
        protectedArticleId = id;
        break;
      }
    }

    shots = process.env.ANCHORAGE_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'anchorage-phone-shots-'));
    mkdirSync(shots, { recursive: true });
    await signInThroughForm(page, base, 'demo@anchorage.test', 'demo-password-2026');
  }, 180_000);

  /** Opens `path` at `width`, screenshots it and its table's `section`, and measures the cells of `selectors`. */
  async function check(width: number, name: string, path: string, section: string, selectors: Record<string, string>) {
    await page.setViewportSize({ width, height: width < 600 ? 844 : 900 });
    await page.goto(`${base}${path}`);
    await page.screenshot({ path: join(shots, `${name}-${width}.png`), fullPage: true });
    await page.locator(section).evaluate((element) => element.scrollIntoView());
    await page.screenshot({ path: join(shots, `${name}-${width}-table.png`) });
    const result = await placements(page, selectors);
    for (const placement of result.found) expect(placement.count, `${name} at ${width} px: ${placement.what}`).toBeGreaterThan(0);
    expect(result.found.filter((placement) => placement.outside.length > 0), `${name} at ${width} px`).toEqual([]);
    expect(result.pageOverflows, `${name} at ${width} px scrolls sideways`).toBe(false);
  }

  const revisions = {
    restore: '#list-h ~ * tbody td:last-child button',
    origin: '#list-h ~ * tbody td:nth-child(5) .badge',
    who: '#list-h ~ * tbody td:nth-child(6)',
    reason: '#list-h ~ * tbody td:nth-child(7)',
  };
  const activity = {
    request: '#log-h ~ * tbody td:nth-child(3) .request-op',
    path: '#log-h ~ * tbody td:nth-child(3) .request-path',
    status: '#log-h ~ * tbody td:nth-child(5) .status',
    credential: '#log-h ~ * tbody td:nth-child(4)',
  };
  // The page's rows only: the printout's copy of every row is hidden on screen.
  const backlinks = {
    source: '#backlinks tbody td:nth-child(2) a',
    anchor: '#backlinks tbody td:nth-child(3)',
    status: '#backlinks tbody td:nth-child(6) .badge',
    target: '#backlinks tbody td:nth-child(7) a',
  };

  for (const width of [1280, 390]) {
    it(`at ${width} px the revision diff marks the one word changed, inside the page`, async () => {
      const [newest, previous] = await h.services.revisions.list(articleId);
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${base}/app/articles/${articleId}/revisions/diff?a=${previous!.number}&b=${newest!.number}`);
      await page.locator('.diff').evaluate((element) => element.scrollIntoView());
      await page.screenshot({ path: join(shots, `diff-${width}.png`) });
      expect(await page.locator('.diff ins .diff-word').allTextContents()).toEqual(['remarkable']);
      expect(await page.locator('.diff del .diff-word').count()).toBe(1);
      const result = await placements(page, { diff: '.diff' });
      expect(result.found[0]!.outside).toEqual([]);
      expect(result.pageOverflows).toBe(false);
    }, 60_000);

    it(`at ${width} px the charts use the report palette and mark the current, partial month`, async () => {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${base}/app/sites/${siteId}?month=${month}`);
      await page.waitForSelector('#articles-chart[data-rendered]');
      await page.locator('#trend-h').evaluate((element) => element.scrollIntoView());
      await page.screenshot({ path: join(shots, `charts-${width}.png`) });
      const charts = await page.evaluate(() => {
        type Element = { options: { backgroundColor: unknown } };
        type ChartLike = {
          data: { labels: unknown[] };
          getDatasetMeta: (i: number) => { data: Element[] };
          config: { data: { datasets: { borderColor?: string }[] }; plugins: { id: string }[] };
        };
        const chartOf = (id: string) => (window as unknown as { Chart: { getChart: (id: string) => ChartLike } }).Chart.getChart(id);
        const colour = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : 'pattern');
        const bars = chartOf('backlinks-chart');
        const line = chartOf('articles-chart');
        const series = JSON.parse(document.querySelector('#backlinks-chart')!.getAttribute('data-series')!) as { partial: number; partialNote: string };
        return {
          series,
          labels: bars.data.labels,
          industry: bars.getDatasetMeta(0).data.map((bar) => colour(bar.options.backgroundColor)),
          local: bars.getDatasetMeta(1).data.map((bar) => colour(bar.options.backgroundColor)),
          articles: line.config.data.datasets[0]!.borderColor!.toLowerCase(),
          lastPoint: colour(line.getDatasetMeta(0).data.at(-1)!.options.backgroundColor),
          notes: [bars, line].map((chart) => chart.config.plugins.map((plugin) => plugin.id)),
        };
      });
      // The report's month is the current one (the harness clock's): the last of the 12, drawn
      // hatched (bars) or hollow (the line's point), with its note above it.
      expect(charts.labels).toHaveLength(12);
      expect(charts.series).toEqual({ ...charts.series, partial: 11, partialNote: 'so far' });
      expect(charts.notes).toEqual([['partial-month'], ['partial-month']]);
      expect(charts.industry.slice(0, -1)).toEqual(Array(11).fill(reportPalette.industry));
      expect(charts.local.slice(0, -1)).toEqual(Array(11).fill(reportPalette.local));
      expect([charts.industry.at(-1), charts.local.at(-1)]).toEqual(['pattern', 'pattern']);
      expect(charts.articles).toBe(reportPalette.articles);
      expect(charts.lastPoint).toBe('#ffffff');
      // The tooltip of the partial month says so.
      const box = (await page.locator('#backlinks-chart').boundingBox())!;
      const x = await page.evaluate(() => (window as unknown as { Chart: { getChart: (id: string) => { getDatasetMeta: (i: number) => { data: { x: number }[] } } } }).Chart.getChart('backlinks-chart').getDatasetMeta(0).data[11]!.x);
      await page.mouse.move(box.x + x, box.y + box.height / 2);
      const title = await page.evaluate(() => (window as unknown as { Chart: { getChart: (id: string) => { tooltip: { title: string[] } } } }).Chart.getChart('backlinks-chart').tooltip.title);
      expect(title).toEqual([expect.stringMatching(/^[A-Z][a-z]{2} \d{4} \(so far\)$/)]);
      await page.screenshot({ path: join(shots, `charts-${width}-tooltip.png`) });

      // A past month is whole: nothing is marked.
      await page.goto(`${base}/app/sites/${siteId}?month=2026-01`);
      await page.waitForSelector('#backlinks-chart[data-rendered]');
      const past = await page.evaluate(() => {
        type Bar = { options: { backgroundColor: unknown } };
        const chart = (window as unknown as { Chart: { getChart: (id: string) => { getDatasetMeta: (i: number) => { data: Bar[] } } } }).Chart.getChart('backlinks-chart');
        return { partial: (JSON.parse(document.querySelector('#backlinks-chart')!.getAttribute('data-series')!) as { partial: number }).partial, hatched: chart.getDatasetMeta(0).data.filter((bar) => typeof bar.options.backgroundColor !== 'string').length };
      });
      expect(past).toEqual({ partial: -1, hatched: 0 });
    }, 60_000);

    it(`at ${width} px the share form's number of days looks like its other fields`, async () => {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${base}/app/sites/${siteId}/shares`);
      await page.screenshot({ path: join(shots, `shares-${width}.png`) });
      const look = (selector: string) =>
        page.$eval(selector, (input) => {
          const style = getComputedStyle(input);
          return [style.borderTopWidth, style.borderTopStyle, style.borderTopColor, style.borderRadius, style.height, style.paddingLeft, style.fontSize, style.fontFamily];
        });
      expect(await look('#share-days')).toEqual(await look('#share-name'));
    }, 60_000);

    it(`at ${width} px a protected link's arrow stays on the line of the address it points to`, async () => {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${base}/app/articles/${protectedArticleId}`);
      await page.locator('.locked-links').evaluate((element) => element.scrollIntoView());
      await page.screenshot({ path: join(shots, `protected-links-${width}.png`) });
      const alone = await page.$$eval('.locked-links li', (items) =>
        items.flatMap((item) => {
          const arrow = [...item.querySelectorAll('span')].find((span) => span.textContent === '→')!;
          const address = item.querySelector('.href')!;
          const arrowTop = arrow.getBoundingClientRect().top;
          const addressTop = address.getClientRects()[0]!.top;
          return Math.abs(arrowTop - addressTop) > 4 ? [`${item.textContent?.trim().slice(0, 60)}: arrow at ${Math.round(arrowTop)}, address at ${Math.round(addressTop)}`] : [];
        }),
      );
      expect(await page.locator('.locked-links li').count()).toBeGreaterThan(0);
      expect(alone).toEqual([]);
    }, 60_000);

    it(`at ${width} px the activity log breaks no word of a request or credential, nor cuts a filter`, async () => {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${base}/app/activity`);
      expect(await brokenWords(page, '#log-h ~ * tbody .request-op, #log-h ~ * tbody .request-path, #log-h ~ * tbody td:nth-child(4)')).toEqual([]);
      expect(await page.locator('#log-h ~ * tbody td:nth-child(4)', { hasText: 'Portland clients' }).count()).toBe(1);
      expect(await cutSelects(page, '.filter-grid select')).toEqual([]);
    }, 60_000);

    it(`at ${width} px the report's backlinks break no word of an anchor or target`, async () => {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${base}/app/sites/${siteId}?month=${month}`);
      expect(await brokenWords(page, '#backlinks tbody td:nth-child(2) a, #backlinks tbody td:nth-child(3), #backlinks tbody td:nth-child(7) a')).toEqual([]);
    }, 60_000);

    it(`at ${width} px the revisions show Restore, origin, author and reason`, async () => {
      await check(width, 'revisions', `/app/articles/${articleId}/revisions`, 'section[aria-labelledby="list-h"]', revisions);
    }, 60_000);

    it(`at ${width} px the activity log shows each request and its status`, async () => {
      await check(width, 'activity', '/app/activity', 'section[aria-labelledby="log-h"]', activity);
    }, 60_000);

    it(`at ${width} px the report's backlinks show source, anchor, status and target`, async () => {
      await check(width, 'report', `/app/sites/${siteId}?month=${month}`, '#backlinks', backlinks);
    }, 60_000);
  }
});
