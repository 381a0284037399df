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

/** Characters of the PDF's standard fonts (WinAnsi) beyond Latin-1; any other is shown as "?". */
const winAnsiExtras = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/** Text the standard Helvetica font can show: other characters become "?", so a title never breaks the file. */
export function pdfText(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let out = '';
  for (const char of String(value)) {
    const code = char.codePointAt(0)!;
    out += (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || winAnsiExtras.has(char) ? char : char === '\t' || char === '\n' ? ' ' : '?';
  }
  return out;
}

const monthNames = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const monthName = (month: string, short = false): string => {
  const name = monthNames[Number(month.slice(5, 7)) - 1]!;
  return `${short ? name.slice(0, 3) : name} ${month.slice(0, 4)}`;
};

/** The change from the compared period, as the report page words it. */
function change(current: number, previous: number): string {
  const difference = current - previous;
  const sign = difference > 0 ? '+' : difference < 0 ? '-' : '±';
  const percent = previous === 0 ? '' : ` (${difference > 0 ? '+' : difference < 0 ? '-' : ''}${Math.round((Math.abs(difference) / previous) * 100)}%)`;
  return `${sign}${Math.abs(difference)}${percent}`;
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
  const rowHeight = (cells: string[], bold: boolean) => {
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(8);
    return Math.max(...cells.map((cell, i) => doc.heightOfString(cell, { width: widths[i]! - 2 * padding }))) + 2 * padding;
  };
  const drawRow = (cells: string[], bold: boolean) => {
    const height = rowHeight(cells, bold);
    if (doc.y + height > doc.page.height - margin) {
      doc.addPage();
      if (!bold) drawRow(columns.map((c) => c.header), true);
    }
    const top = doc.y;
    let x = margin;
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(8).fillColor(ink);
    cells.forEach((cell, i) => {
      doc.text(cell, x + padding, top + padding, { width: widths[i]! - 2 * padding, align: columns[i]!.align ?? 'left' });
      x += widths[i]!;
    });
    doc.moveTo(margin, top + height).lineTo(margin + width, top + height).strokeColor(rule).lineWidth(0.5).stroke();
    doc.x = margin;
    doc.y = top + height;
  };
  drawRow(columns.map((c) => c.header), true);
  for (const row of rows) drawRow(row.map(pdfText), false);
}

function heading(doc: PDFKit.PDFDocument, text: string): void {
  if (doc.y + 60 > doc.page.height - margin) doc.addPage();
  doc.moveDown(0.8).font('Helvetica-Bold').fontSize(13).fillColor(ink).text(pdfText(text), margin, doc.y);
  doc.moveDown(0.3);
}

/** A bar chart of the 12 months: stacked segments per month, a legend, the month under each bar. */
function barChart(doc: PDFKit.PDFDocument, title: string, report: MonthlyReport, segments: { label: string; colour: string; value: (m: MonthCounts) => number }[]): void {
  const chartHeight = 110;
  if (doc.y + chartHeight + 50 > doc.page.height - margin) doc.addPage();
  doc.font('Helvetica-Bold').fontSize(10).fillColor(ink).text(title, margin, doc.y);
  const legendY = doc.y + 2;
  let legendX = margin;
  doc.font('Helvetica').fontSize(8);
  for (const segment of segments) {
    doc.rect(legendX, legendY + 1, 7, 7).fill(segment.colour);
    doc.fillColor(muted).text(segment.label, legendX + 10, legendY, { lineBreak: false });
    legendX += 20 + doc.widthOfString(segment.label);
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
    doc.fillColor(ink).fontSize(7).text(String(totals[i]), margin + i * slot, base - 10, { width: slot, align: 'center', lineBreak: false });
    doc.fillColor(muted).text(monthName(m.month, true), margin + i * slot, top + chartHeight + 3, { width: slot, align: 'center', lineBreak: false });
  });
  doc.moveTo(margin, top + chartHeight).lineTo(margin + width, top + chartHeight).strokeColor(rule).lineWidth(0.5).stroke();
  doc.x = margin;
  doc.y = top + chartHeight + 18;
}

/**
 * The monthly report as a PDF (A4): the summary against the compared period, the two charts of
 * the last 12 months drawn as bars with their numbers in a table, and every row of the articles
 * and backlinks tables. Standard fonts only, so the file renders anywhere without embedding.
 */
export async function renderReportPdf(report: MonthlyReport): Promise<Buffer> {
  const { site, month, span, stats, previous } = report;
  const siteName = pdfText(site.name ?? `Site ${site.id}`);
  const period = span.toDate ? `${monthName(month)} so far` : monthName(month);
  // Loaded on the first report, not at start: its fonts take memory most processes never need.
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({ size: pageSize, margin, info: { Title: `${siteName} · ${monthName(month)}`, Author: 'Anchorage', Subject: 'Monthly report' } });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  doc.font('Helvetica').fontSize(9).fillColor(muted).text('Monthly report', margin, margin);
  doc.font('Helvetica-Bold').fontSize(20).fillColor(ink).text(`${siteName} · ${monthName(month)}`);
  doc.font('Helvetica').fontSize(9).fillColor(muted).text(pdfText([site.website_url, site.industry, site.country].filter(Boolean).join(' · ')));
  doc.text(`${span.from} to ${span.to}, compared with ${span.previousFrom} to ${span.previousTo}. Generated ${report.generatedAt}.`);

  heading(doc, `Summary: ${period}`);
  table(
    doc,
    [
      { header: 'Measure', width: 0.4 },
      { header: period, width: 0.2, align: 'right' },
      { header: `${span.previousFrom} to ${span.previousTo}`, width: 0.2, align: 'right' },
      { header: 'Change', width: 0.2, align: 'right' },
    ],
    (
      [
        ['Articles published', 'articles_published'],
        ['Backlinks acquired', 'backlinks_acquired'],
        ['Industry backlinks', 'backlinks_industry'],
        ['Local backlinks', 'backlinks_local'],
      ] as const
    ).map(([label, key]) => [label, String(stats[key]), String(previous[key]), change(stats[key], previous[key])]),
  );

  heading(doc, 'The last 12 months');
  barChart(doc, 'Backlinks per month', report, [
    { label: 'Industry', colour: industryColour, value: (m) => m.backlinks_industry },
    { label: 'Local', colour: localColour, value: (m) => m.backlinks_local },
  ]);
  barChart(doc, 'Articles published per month', report, [{ label: 'Articles', colour: articleColour, value: (m) => m.articles_published }]);
  table(
    doc,
    [
      { header: 'Month', width: 0.28 },
      { header: 'Articles published', width: 0.18, align: 'right' },
      { header: 'Industry backlinks', width: 0.18, align: 'right' },
      { header: 'Local backlinks', width: 0.18, align: 'right' },
      { header: 'All backlinks', width: 0.18, align: 'right' },
    ],
    report.series.map((m) => [monthName(m.month), String(m.articles_published), String(m.backlinks_industry), String(m.backlinks_local), String(m.backlinks_industry + m.backlinks_local)]),
  );

  heading(doc, `Articles published in ${period} (${report.articles.length})`);
  table(
    doc,
    [
      { header: 'Title', width: 0.5 },
      { header: 'Published', width: 0.14 },
      { header: 'Target keyword', width: 0.26 },
      { header: 'Words', width: 0.1, align: 'right' },
    ],
    report.articles.map((a) => [a.title || `Untitled article ${a.id}`, (a.published_at ?? '').slice(0, 10), a.target_keyword ?? '', a.word_count === null ? '' : String(a.word_count)]),
  );

  heading(doc, `Backlinks acquired in ${period} (${report.backlinks.length})`);
  table(
    doc,
    [
      { header: 'Acquired', width: 0.11 },
      { header: 'Source', width: 0.2 },
      { header: 'Anchor text', width: 0.22 },
      { header: 'Anchor type', width: 0.1 },
      { header: 'Category', width: 0.1 },
      { header: 'Status', width: 0.08 },
      { header: 'Target page', width: 0.19 },
    ],
    report.backlinks.map((b) => [(b.acquired_at ?? '').slice(0, 10), b.source_domain ?? b.source_url ?? '', b.anchor_text ?? '', b.anchor_type ?? '', b.category ?? '', b.status ?? '', b.target_url ?? '']),
  );

  doc.end();
  return done;
}
