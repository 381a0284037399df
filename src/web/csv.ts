import type { FastifyReply } from 'fastify';
import { stringify } from 'csv-stringify/sync';
import type { Page, PageRequest } from '../services/pagination.js';

export type CsvValue = string | number | boolean | null | undefined;

/** Formula-leading characters csv-stringify's escape_formulas leaves alone (it covers = + - @ tab CR and their full-width forms). */
const alsoFormulaLeading = /^[\n]/;

/**
 * RFC 4180 CSV (CRLF; cells with commas, quotes or any line break, CR or LF alone included,
 * quoted with quotes doubled, so no cell can split a row), with a BOM so spreadsheet programs read it as UTF-8. Following OWASP's
 * CSV-injection guidance, text cells starting with = + - @ tab CR LF (or a full-width = + - @)
 * get a leading ' so a spreadsheet never runs a customer's text as a formula.
 */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvValue[])[]): string {
  return stringify([[...header], ...rows.map((row) => row.map((value) => value ?? ''))], {
    bom: true,
    record_delimiter: 'windows',
    quoted_match: /[\r\n\u2028\u2029]/,
    escape_formulas: true,
    cast: {
      boolean: (value) => (value ? 'true' : 'false'),
      string: (value) => (alsoFormulaLeading.test(value) ? `'${value}` : value),
    },
  });
}

export function sendCsv(reply: FastifyReply, filename: string, csv: string): FastifyReply {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
    .header('cache-control', 'no-store')
    .send(csv);
}

/** Every row of a paged service list, 100 at a time, up to `limit` rows. */
export async function allPages<T>(
  list: (page: PageRequest) => Promise<Page<T>>,
  limit = 50_000,
): Promise<T[]> {
  const rows: T[] = [];
  for (let page = 1; rows.length < limit; page += 1) {
    const result = await list({ page, per_page: 100 });
    rows.push(...result.data);
    if (page >= result.meta.last_page) break;
  }
  return rows.slice(0, limit);
}
