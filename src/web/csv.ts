import type { FastifyReply } from 'fastify';
import { stringify } from 'csv-stringify/sync';
import type { Page, PageRequest } from '../services/pagination.js';

export type CsvValue = string | number | boolean | null | undefined;

/**
 * RFC 4180 CSV (CRLF, fields with commas, quotes or line breaks quoted, quotes doubled), with a
 * BOM so spreadsheet programs read it as UTF-8. Cells starting with = + - @ (or tab, CR) get a
 * leading ' so a spreadsheet never runs a customer's text as a formula (OWASP CSV injection).
 */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvValue[])[]): string {
  return stringify([[...header], ...rows.map((row) => row.map((value) => value ?? ''))], {
    bom: true,
    record_delimiter: 'windows',
    escape_formulas: true,
    cast: { boolean: (value) => (value ? 'true' : 'false') },
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
