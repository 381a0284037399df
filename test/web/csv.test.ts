import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toCsv } from '../../src/web/csv.js';

const parseBack = (csv: string): string[][] => parse(csv, { bom: true, relax_column_count: false }) as string[][];

/** What a spreadsheet must never take as the start of a formula (OWASP CSV injection). */
const formulaLeading = /^[=+\-@\t\r\n\uFF1D\uFF0B\uFF0D\uFF20]/;

describe('CSV export', () => {
  it('prefixes every formula-leading cell with a quote mark and keeps one row per record', async () => {
    const cells = ['=1+1', '+SUM(A1)', '-2+3', '@SUM(A1)', '\tx', '\rx', '\nx', '\r\nx', '＝1', '＋1', '－1', '＠1', 'plain', 'a\rb', 'a\nb', 'a\r\nb', 'a,"b"', 'x\u2028y'];
    const csv = await toCsv(['cell'], cells.map((cell) => [cell]));
    const rows = parseBack(csv);
    expect(rows).toHaveLength(1 + cells.length);
    rows.slice(1).forEach(([cell], i) => {
      const original = cells[i]!;
      expect(cell, JSON.stringify(original)).toBe(formulaLeading.test(original) ? `'${original}` : original);
    });
  });

  it('never lets a text cell start a formula or split a row, whatever the text (property)', async () => {
    const text = fc.string({ unit: fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', ',', '"', "'", '＝', 'a', ' ', '\u2028') , maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(text, text), { maxLength: 8 }), async (rows) => {
        const parsed = parseBack(await toCsv(['a', 'b'], rows));
        expect(parsed).toHaveLength(rows.length + 1);
        parsed.slice(1).forEach((row, i) => {
          row.forEach((cell, j) => {
            expect(formulaLeading.test(cell)).toBe(false);
            const original = rows[i]![j]!;
            expect(cell).toBe(formulaLeading.test(original) ? `'${original}` : original);
          });
        });
      }),
    );
  });

  it('writes numbers and booleans as they are', async () => {
    expect(parseBack(await toCsv(['n', 'b', 'e'], [[-5, true, null]]))[1]).toEqual(['-5', 'true', '']);
  });

  it('writes a long table in parts that join into one CSV: one BOM, one header, every row in order', async () => {
    const rows = Array.from({ length: 2_500 }, (_, i) => [i, i % 2 === 0 ? `=cell ${i}` : `a,"${i}"`]);
    const csv = await toCsv(['n', 'text'], rows);
    expect(csv.startsWith('\uFEFFn,text\r\n')).toBe(true);
    expect(csv.split('\uFEFF')).toHaveLength(2);
    const parsed = parseBack(csv);
    expect(parsed).toHaveLength(2_501);
    parsed.slice(1).forEach(([n, text], i) => {
      expect(n).toBe(String(i));
      expect(text).toBe(i % 2 === 0 ? `'=cell ${i}` : `a,"${i}"`);
    });
  });
});
