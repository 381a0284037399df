import { describe, expect, it } from 'vitest';
import { parseForm } from '../../src/core/form.js';
import { HtmlPool } from '../../src/services/html-pool.js';

describe('parseForm', () => {
  it('gives fields as @fastify/formbody did: arrays for repeated names, no prototype, hostile names as plain fields', () => {
    const form = parseForm('a=1&b=x%20y&b=%F0%9F%98%80&__proto__=p&constructor=c&plus=a+b&empty=');
    expect(Object.getPrototypeOf(form)).toBeNull();
    expect(Object.entries(form)).toEqual([
      ['a', '1'],
      ['b', ['x y', '😀']],
      ['__proto__', 'p'],
      ['constructor', 'c'],
      ['plus', 'a b'],
      ['empty', ''],
    ]);
    expect(({} as Record<string, unknown>).p).toBeUndefined();
  });

  it('is what a pool thread gives for a large form, field for field', async () => {
    const pool = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 0, perAccount: 100, timeoutMs: 60_000 });
    try {
      const body = '<p>Ünïcode & “quotes” — 😀 <a href="https://x.example/?a=1&b=2">link</a></p>'.repeat(3_000);
      const text = new URLSearchParams([['_csrf', 't'], ['body', body], ['tag', 'a'], ['tag', 'b'], ['__proto__', 'x']]).toString();
      const outcome = await pool.parseBody([new Uint8Array(Buffer.from(text))], 'form');
      expect(outcome.ok && Object.entries(outcome.value as object)).toEqual(Object.entries(parseForm(text)));
    } finally {
      await pool.close();
    }
  });
});
