import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { getDocument, OPS } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { reportPalette } from '../../src/core/report-palette.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness, TestClock } from '../helpers/harness.js';
import { InjectBrowser } from '../web/browser.js';

/**
 * The report PDF's charts and addresses: the web report's palette, the current month marked as
 * partial, and long addresses broken after their separators. With ANCHORAGE_SCREENSHOTS set (and
 * pdftoppm installed) the PDFs' first pages are saved there as images, to look at.
 */
const standardFontDataUrl = join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts/');

const longTarget = 'https://pdf-charts.example/guides/emergency-plumbing-what-to-do-when-a-pipe-bursts?utm_source=newsletter&utm_campaign=winterreadiness2026';
const longSource = 'very-long-subdomain.regional-business-directory.example';
const unbroken = 'https://pdf-charts.example/averyveryverylongslugwithoutanyseparatorswhatsoeverinthewholeaddress';

interface PdfPage {
  /** The text drawn, one item per run of text (a line of a table cell is one). */
  items: string[];
  /** Every fill colour set, as `#rrggbb`. */
  fills: string[];
}

async function readPdf(bytes: Buffer): Promise<PdfPage[]> {
  const loading = getDocument({ data: new Uint8Array(bytes), standardFontDataUrl });
  const pdf = await loading.promise;
  const pages: PdfPage[] = [];
  for (let n = 1; n <= pdf.numPages; n += 1) {
    const page = await pdf.getPage(n);
    const items = (await page.getTextContent()).items.map((item) => ('str' in item ? item.str : '')).filter((text) => text.trim() !== '');
    const operators = await page.getOperatorList();
    const fills = operators.fnArray.flatMap((fn, i) => (fn === OPS.setFillRGBColor ? [String(operators.argsArray[i]![0]).toLowerCase()] : []));
    pages.push({ items, fills });
  }
  await loading.destroy();
  return pages;
}

/** The lines an address was drawn in: consecutive items that together spell it. */
function linesOf(items: string[], address: string): string[] {
  for (let start = 0; start < items.length; start += 1) {
    if (!address.startsWith(items[start]!)) continue;
    const lines: string[] = [];
    let spelled = '';
    for (let i = start; i < items.length && address.startsWith(spelled + items[i]!); i += 1) {
      lines.push(items[i]!);
      spelled += items[i]!;
      if (spelled === address) return lines;
    }
  }
  return [];
}

describe('report PDF: charts and addresses', () => {
  const h = useHarness({ clock: new TestClock(new Date('2026-12-15T12:00:00Z')) });
  let siteId: number;
  let browser: InjectBrowser;
  const shots = process.env.ANCHORAGE_SCREENSHOTS;

  const pdfOf = async (month: string, name: string): Promise<PdfPage[]> => {
    const response = await browser.get(`/app/sites/${siteId}/report.pdf?month=${month}`);
    expect(response.statusCode).toBe(200);
    if (shots && existsSync('/usr/bin/pdftoppm')) {
      const file = join(mkdtempSync(join(tmpdir(), 'anchorage-pdf-')), `${name}.pdf`);
      writeFileSync(file, response.rawPayload);
      execFileSync('/usr/bin/pdftoppm', ['-png', '-r', '80', '-f', '1', '-l', '2', file, join(shots, name)]);
    }
    return readPdf(response.rawPayload);
  };

  beforeAll(async () => {
    const customer = await createCustomer(h.services);
    const months = ['2026-06', '2026-07', '2026-08', '2026-09', '2026-10', '2026-11', '2026-12'];
    siteId = (
      await seedSite(h.services, customer.email, {
        name: 'Chart Plumbing',
        website_url: 'https://pdf-charts.example',
        articles: months.map((month, i) => ({ status: 'published' as const, title: `Story ${i}`, published_at: `${month}-0${(i % 9) + 1}T08:00:00Z` })),
        backlinks: months.flatMap((month, i) => [
          { category: 'industry' as const, acquired_at: `${month}-02T09:00:00Z`, source_domain: longSource, source_url: `https://${longSource}/${i}`, target_url: longTarget, anchor_text: `anchor ${i}` },
          { category: 'local' as const, acquired_at: `${month}-03T09:00:00Z`, source_domain: 'local.example', source_url: `https://local.example/${i}`, target_url: unbroken, anchor_text: `local ${i}` },
        ]),
      })
    ).siteId;
    browser = new InjectBrowser(h.app);
    await browser.signIn(customer.email);
  });

  it('draws its charts in the web report’s palette', async () => {
    const pages = await pdfOf('2026-11', 'report-2026-11');
    const fills = new Set(pages.flatMap((page) => page.fills));
    for (const colour of Object.values(reportPalette)) expect(fills).toContain(colour);
  });

  it('breaks long addresses after their separators, and cuts an address without any in its middle', async () => {
    const items = (await pdfOf('2026-11', 'report-2026-11')).flatMap((page) => page.items);
    const target = linesOf(items, longTarget);
    expect(target.length).toBeGreaterThan(1);
    for (const line of target.slice(0, -1)) expect(line).toMatch(/[/?&=.#-]$/);
    const source = linesOf(items, longSource);
    expect(source.length).toBeGreaterThan(1);
    for (const line of source.slice(0, -1)) expect(line).toMatch(/[.-]$/);
    // No separator to break at: shown with its two ends, cut in the middle.
    const cut = items.filter((item) => item.includes('…'));
    expect(cut.length).toBeGreaterThan(0);
    expect(cut.every((item) => item.startsWith('averyvery') && item.endsWith('address'))).toBe(true);
  });

  it('marks the current, partial month “so far” under its bars, and no whole month', async () => {
    const current = (await pdfOf('2026-12', 'report-2026-12')).flatMap((page) => page.items);
    // Under each of the two charts, below the month's name.
    expect(current.filter((item) => item === 'so far')).toHaveLength(2);
    const whole = (await pdfOf('2026-11', 'report-2026-11')).flatMap((page) => page.items);
    expect(whole.filter((item) => item === 'so far')).toHaveLength(0);
  });
});
