import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';
import { stringify, type Options } from 'csv-stringify/sync';
import type { Page, PageRequest } from '../services/pagination.js';

export type CsvValue = string | number | boolean | null | undefined;

/** Formula-leading characters csv-stringify's escape_formulas leaves alone (it covers = + - @ tab CR and their full-width forms). */
const alsoFormulaLeading = /^[\n]/;

/** Rows written per turn of the event loop: a large export written at once would hold it. */
const rowsPerTurn = 1000;

const csvOptions: Options = {
  record_delimiter: 'windows',
  quoted_match: /[\r\n\u2028\u2029]/,
  escape_formulas: true,
  cast: {
    boolean: (value) => (value ? 'true' : 'false'),
    string: (value) => (alsoFormulaLeading.test(value) ? `'${value}` : value),
  },
};

/**
 * RFC 4180 CSV (CRLF; cells with commas, quotes or any line break, CR or LF alone included,
 * quoted with quotes doubled, so no cell can split a row), with a BOM so spreadsheet programs read it as UTF-8. Following OWASP's
 * CSV-injection guidance, text cells starting with = + - @ tab CR LF (or a full-width = + - @)
 * get a leading ' so a spreadsheet never runs a customer's text as a formula. Written
 * `rowsPerTurn` rows at a time, a turn of the event loop each (every record ends with CRLF, so
 * the parts join into the same text).
 */
export async function toCsv(header: readonly string[], rows: readonly (readonly CsvValue[])[]): Promise<string> {
  const parts = [stringify([[...header]], { ...csvOptions, bom: true })];
  for (let start = 0; start < rows.length; start += rowsPerTurn) {
    if (start > 0) await nextTurn();
    parts.push(stringify(rows.slice(start, start + rowsPerTurn).map((row) => row.map((value) => value ?? '')), csvOptions));
  }
  return parts.join('');
}

export function sendCsv(reply: FastifyReply, filename: string, csv: string): FastifyReply {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
    .header('cache-control', 'no-store')
    .send(csv);
}

/** Every row of a paged service list, 100 at a time (a turn of the event loop each), up to `limit` rows. */
export async function allPages<T>(
  list: (page: PageRequest) => Promise<Page<T>>,
  limit = 50_000,
): Promise<T[]> {
  const rows: T[] = [];
  for (let page = 1; rows.length < limit; page += 1) {
    if (page > 1) await nextTurn();
    const result = await list({ page, per_page: 100 });
    rows.push(...result.data);
    if (page >= result.meta.last_page) break;
  }
  return rows.slice(0, limit);
}
