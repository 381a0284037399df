import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toCsv } from '../../src/web/csv.js';

const parseBack = (csv: string): string[][] => parse(csv, { bom: true, relax_column_count: false }) as string[][];

/** What a spreadsheet must never take as the start of a formula (OWASP CSV injection). */
const formulaLeading = /^[=+\-@\t\r\n\uFF1D\uFF0B\uFF0D\uFF20]/;

describe('CSV export', () => {
  it('prefixes every formula-leading cell with a quote mark and keeps one row per record', () => {
    const cells = ['=1+1', '+SUM(A1)', '-2+3', '@SUM(A1)', '\tx', '\rx', '\nx', '\r\nx', '＝1', '＋1', '－1', '＠1', 'plain', 'a\rb', 'a\nb', 'a\r\nb', 'a,"b"', 'x\u2028y'];
    const csv = toCsv(['cell'], cells.map((cell) => [cell]));
    const rows = parseBack(csv);
    expect(rows).toHaveLength(1 + cells.length);
    rows.slice(1).forEach(([cell], i) => {
      const original = cells[i]!;
      expect(cell, JSON.stringify(original)).toBe(formulaLeading.test(original) ? `'${original}` : original);
    });
  });

  it('never lets a text cell start a formula or split a row, whatever the text (property)', () => {
    const text = fc.string({ unit: fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', ',', '"', "'", '＝', 'a', ' ', '\u2028') , maxLength: 12 });
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text), { maxLength: 8 }), (rows) => {
        const parsed = parseBack(toCsv(['a', 'b'], rows));
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

  it('writes numbers and booleans as they are', () => {
    expect(parseBack(toCsv(['n', 'b', 'e'], [[-5, true, null]]))[1]).toEqual(['-5', 'true', '']);
  });
});
