import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { create, type Font } from 'fontkit';
import { reportLocale, type ReportLocale } from '../core/i18n/locale.js';
import type { SiteRow } from '../db/schema.js';
import type { Article } from './articles.js';
import type { Backlink } from './backlinks.js';
import type { Stats } from './stats.js';
import type { MonthCounts } from './ui-queries.js';

/** One site's monthly report whole: what the report page, a share link and the PDF show. */
export interface MonthlyReport {
  site: SiteRow;
  /** `YYYY-MM`. */
  month: string;
  /** The days reported and the days compared with (the current month runs to today). */
  span: { from: string; to: string; previousFrom: string; previousTo: string; toDate: boolean };
  stats: Stats;
  previous: Stats;
  /** The 12 months to this one, oldest first. */
  series: MonthCounts[];
  /** Articles published in the span, every row (up to the report's limit). */
  articles: Article[];
  /** Backlinks acquired in the span, every row (up to the report's limit). */
  backlinks: Backlink[];
  /** `YYYY-MM-DD`. */
  generatedAt: string;
}

const margin = 48;
const pageSize = 'A4';
const ink = '#1f2933';
const muted = '#616e7c';
const rule = '#cbd2d9';
const industryColour = '#2f6fbd';
const localColour = '#e08a1e';
const articleColour = '#2e8b57';

/** The names the document's two faces are registered under. */
const regular = 'Sans';
const bold = 'Sans-Bold';

/**
 * DejaVu Sans, embedded (subset to the glyphs used): Latin, Greek, Cyrillic, Armenian, Georgian,
 * and the letters of Hebrew and Arabic (drawn left to right: pdfkit does no bidi). Its licence
 * (Bitstream Vera's) lets us redistribute it. No CJK, Indic or Thai: those show as "?".
 */
const fontFiles = { [regular]: 'dejavu-fonts-ttf/ttf/DejaVuSans.ttf', [bold]: 'dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf' };

interface PdfFonts {
  files: Record<string, Buffer>;
  /** Whether both faces draw the character. */
  covers(codePoint: number): boolean;
}

let loadedFonts: PdfFonts | undefined;

/** The fonts, read on the first report (a pool thread keeps them, about 1.5 MB). */
function pdfFonts(): PdfFonts {
  if (!loadedFonts) {
    const resolve = createRequire(import.meta.url).resolve;
    const files = Object.fromEntries(Object.entries(fontFiles).map(([name, path]) => [name, readFileSync(resolve(path))]));
    const faces = Object.values(files).map((file) => create(file) as Font);
    loadedFonts = { files, covers: (codePoint) => faces.every((face) => face.hasGlyphForCodePoint(codePoint)) };
  }
  return loadedFonts;
}

/** Text the embedded font can show: tabs and line breaks become spaces, any other character it lacks "?", so a title never breaks the file. */
export function pdfText(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const { covers } = pdfFonts();
  let out = '';
  for (const char of String(value)) {
    const code = char.codePointAt(0)!;
    out += char === '\t' || char === '\n' || char === '\r' ? ' ' : code >= 0x20 && covers(code) ? char : '?';
  }
  return out;
}

/** The change from the compared period: "+3 (+33%)", in the report's language. */
function change(current: number, previous: number, locale: ReportLocale): string {
  const difference = current - previous;
  const sign = difference > 0 ? '+' : difference < 0 ? '−' : '';
  const percent = previous === 0 ? '' : ` (${sign}${locale.percent(Math.abs(difference) / previous)})`;
  return `${locale.signed(difference)}${percent}`;
}

interface Column {
  header: string;
  /** Share of the page's width. */
  width: number;
  align?: 'left' | 'right';
}

/** Draws a table row by row, starting a new page (with the header again) when a row does not fit. */
function table(doc: PDFKit.PDFDocument, columns: Column[], rows: string[][]): void {
  const width = doc.page.width - 2 * margin;
  const widths = columns.map((c) => c.width * width);
  const padding = 3;
  const rowHeight = (cells: string[], header: boolean) => {
    doc.font(header ? bold : regular).fontSize(8);
    return Math.max(...cells.map((cell, i) => doc.heightOfString(cell, { width: widths[i]! - 2 * padding }))) + 2 * padding;
  };
  const drawRow = (cells: string[], header: boolean) => {
    const height = rowHeight(cells, header);
    if (doc.y + height > doc.page.height - margin) {
      doc.addPage();
      if (!header) drawRow(columns.map((c) => pdfText(c.header)), true);
    }
    const top = doc.y;
    let x = margin;
    doc.font(header ? bold : regular).fontSize(8).fillColor(ink);
    cells.forEach((cell, i) => {
      doc.text(cell, x + padding, top + padding, { width: widths[i]! - 2 * padding, align: columns[i]!.align ?? 'left' });
      x += widths[i]!;
    });
    doc.moveTo(margin, top + height).lineTo(margin + width, top + height).strokeColor(rule).lineWidth(0.5).stroke();
    doc.x = margin;
    doc.y = top + height;
  };
  drawRow(columns.map((c) => pdfText(c.header)), true);
  for (const row of rows) drawRow(row.map(pdfText), false);
}

function heading(doc: PDFKit.PDFDocument, text: string): void {
  if (doc.y + 60 > doc.page.height - margin) doc.addPage();
  doc.moveDown(0.8).font(bold).fontSize(13).fillColor(ink).text(pdfText(text), margin, doc.y);
  doc.moveDown(0.3);
}

/** A bar chart of the 12 months: stacked segments per month, a legend, the month under each bar. */
function barChart(
  doc: PDFKit.PDFDocument,
  title: string,
  report: MonthlyReport,
  locale: ReportLocale,
  segments: { label: string; colour: string; value: (m: MonthCounts) => number }[],
): void {
  const chartHeight = 110;
  if (doc.y + chartHeight + 50 > doc.page.height - margin) doc.addPage();
  doc.font(bold).fontSize(10).fillColor(ink).text(pdfText(title), margin, doc.y);
  const legendY = doc.y + 2;
  let legendX = margin;
  doc.font(regular).fontSize(8);
  for (const segment of segments) {
    const label = pdfText(segment.label);
    doc.rect(legendX, legendY + 1, 7, 7).fill(segment.colour);
    doc.fillColor(muted).text(label, legendX + 10, legendY, { lineBreak: false });
    legendX += 20 + doc.widthOfString(label);
  }
  const top = legendY + 16;
  const width = doc.page.width - 2 * margin;
  const totals = report.series.map((m) => segments.reduce((sum, s) => sum + s.value(m), 0));
  const max = Math.max(1, ...totals);
  const slot = width / report.series.length;
  const barWidth = slot * 0.6;
  report.series.forEach((m, i) => {
    let base = top + chartHeight;
    const x = margin + i * slot + (slot - barWidth) / 2;
    for (const segment of segments) {
      const height = (segment.value(m) / max) * chartHeight;
      if (height > 0) doc.rect(x, base - height, barWidth, height).fill(segment.colour);
      base -= height;
    }
    doc.fillColor(ink).fontSize(7).text(locale.number(totals[i]!), margin + i * slot, base - 10, { width: slot, align: 'center', lineBreak: false });
    doc.fillColor(muted).text(pdfText(locale.month(m.month, true)), margin + i * slot, top + chartHeight + 3, { width: slot, align: 'center', lineBreak: false });
  });
  doc.moveTo(margin, top + chartHeight).lineTo(margin + width, top + chartHeight).strokeColor(rule).lineWidth(0.5).stroke();
  doc.x = margin;
  doc.y = top + chartHeight + 18;
}

/**
 * The monthly report as a PDF (A4) in the site's language: the summary against the compared
 * period, the two charts of the last 12 months drawn as bars with their numbers in a table, and
 * every row of the articles and backlinks tables.
 */
export async function renderReportPdf(report: MonthlyReport): Promise<Buffer> {
  const { site, month, span, stats, previous } = report;
  const locale = reportLocale(site);
  const { t, number } = locale;
  const siteName = pdfText(site.name ?? t.untitledSite(site.id));
  const monthName = locale.month(month);
  const period = span.toDate ? t.soFar(monthName) : monthName;
  const previousDays = locale.days(span.previousFrom, span.previousTo);
  // Loaded on the first report, not at start: its fonts take memory most processes never need.
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({ size: pageSize, margin, lang: locale.tag, info: { Title: `${siteName} · ${monthName}`, Author: 'Anchorage', Subject: t.monthlyReport } });
  for (const [name, file] of Object.entries(pdfFonts().files)) doc.registerFont(name, file);
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  doc.font(regular).fontSize(9).fillColor(muted).text(pdfText(t.monthlyReport), margin, margin);
  doc.font(bold).fontSize(20).fillColor(ink).text(pdfText(`${siteName} · ${monthName}`));
  doc.font(regular).fontSize(9).fillColor(muted).text(pdfText([site.website_url, site.industry, site.country].filter(Boolean).join(' · ')));
  doc.text(pdfText(t.pdf.compared(locale.days(span.from, span.to), previousDays, locale.day(report.generatedAt))));

  heading(doc, t.pdf.summaryOf(period));
  table(
    doc,
    [
      { header: t.column.measure, width: 0.4 },
      { header: period, width: 0.2, align: 'right' },
      { header: previousDays, width: 0.2, align: 'right' },
      { header: t.column.change, width: 0.2, align: 'right' },
    ],
    (['articles_published', 'backlinks_acquired', 'backlinks_industry', 'backlinks_local'] as const).map((key) => [
      t.measures[key],
      number(stats[key]),
      number(previous[key]),
      change(stats[key], previous[key], locale),
    ]),
  );

  heading(doc, t.last12Months);
  barChart(doc, t.backlinksPerMonth, report, locale, [
    { label: t.legend.industry, colour: industryColour, value: (m) => m.backlinks_industry },
    { label: t.legend.local, colour: localColour, value: (m) => m.backlinks_local },
  ]);
  barChart(doc, t.articlesPerMonth, report, locale, [{ label: t.legend.articles, colour: articleColour, value: (m) => m.articles_published }]);
  table(
    doc,
    [
      { header: t.column.month, width: 0.28 },
      { header: t.measures.articles_published, width: 0.18, align: 'right' },
      { header: t.measures.backlinks_industry, width: 0.18, align: 'right' },
      { header: t.measures.backlinks_local, width: 0.18, align: 'right' },
      { header: t.allBacklinks, width: 0.18, align: 'right' },
    ],
    report.series.map((m) => [locale.month(m.month), number(m.articles_published), number(m.backlinks_industry), number(m.backlinks_local), number(m.backlinks_industry + m.backlinks_local)]),
  );

  heading(doc, `${t.articlesPublishedIn(period)} (${number(report.articles.length)})`);
  table(
    doc,
    [
      { header: t.column.title, width: 0.5 },
      { header: t.column.published, width: 0.14 },
      { header: t.column.targetKeyword, width: 0.26 },
      { header: t.column.words, width: 0.1, align: 'right' },
    ],
    report.articles.map((a) => [a.title || t.untitledArticle(a.id), a.published_at ? locale.day(a.published_at) : '', a.target_keyword ?? '', a.word_count === null ? '' : number(a.word_count)]),
  );

  heading(doc, `${t.backlinksAcquiredIn(period)} (${number(report.backlinks.length)})`);
  table(
    doc,
    [
      { header: t.column.acquired, width: 0.11 },
      { header: t.column.source, width: 0.2 },
      { header: t.column.anchorText, width: 0.22 },
      { header: t.column.anchorType, width: 0.1 },
      { header: t.column.category, width: 0.1 },
      { header: t.column.status, width: 0.08 },
      { header: t.column.targetPage, width: 0.19 },
    ],
    report.backlinks.map((b) => [
      b.acquired_at ? locale.day(b.acquired_at) : '',
      b.source_domain ?? b.source_url ?? '',
      b.anchor_text ?? '',
      b.anchor_type ? t.anchorType[b.anchor_type] : '',
      b.category ? t.category[b.category] : '',
      b.status ? t.backlinkStatus[b.status] : '',
      b.target_url ?? '',
    ]),
  );

  doc.end();
  return done;
}
