import { describe, expect, it } from 'vitest';
import { KeptRows } from '../../src/core/kept-rows.js';

/** A reader that counts its reads and finds `rows`. */
function reader(rows: Record<string, number>) {
  const reads: string[] = [];
  const read = (key: string) => async () => {
    reads.push(key);
    return rows[key];
  };
  return { reads, read };
}

describe('KeptRows', () => {
  it('reads a row once and keeps it; a row not found is read every time', async () => {
    const kept = new KeptRows<string, number>(() => false, 10);
    const { reads, read } = reader({ a: 1 });
    expect(await kept.get('a', read('a'))).toBe(1);
    expect(await kept.get('a', read('a'))).toBe(1);
    expect(await kept.get('b', read('b'))).toBeUndefined();
    expect(await kept.get('b', read('b'))).toBeUndefined();
    expect(reads).toEqual(['a', 'b', 'b']);
  });

  it('forgets everything when its watch says changed, or when told to', async () => {
    let changed = false;
    const kept = new KeptRows<string, number>(() => changed, 10);
    const rows = { a: 1 };
    const { reads, read } = reader(rows);
    await kept.get('a', read('a'));
    rows.a = 2;
    changed = true;
    expect(await kept.get('a', read('a'))).toBe(2);
    changed = false;
    rows.a = 3;
    kept.forget();
    expect(await kept.get('a', read('a'))).toBe(3);
    expect(await kept.get('a', read('a'))).toBe(3);
    expect(reads).toEqual(['a', 'a', 'a']);
  });

  it('keeps at most `max` rows, dropping the first kept', async () => {
    const kept = new KeptRows<string, number>(() => false, 2);
    const { reads, read } = reader({ a: 1, b: 2, c: 3 });
    for (const key of ['a', 'b', 'c', 'b', 'c', 'a']) await kept.get(key, read(key));
    expect(reads).toEqual(['a', 'b', 'c', 'a']);
  });

  it('does not keep a row read while it was forgotten: the read may predate the change', async () => {
    const kept = new KeptRows<string, number>(() => false, 10);
    let release!: () => void;
    const slow = kept.get('a', () => new Promise<number>((resolve) => (release = () => resolve(1))));
    kept.forget();
    release();
    expect(await slow).toBe(1);
    const { reads, read } = reader({ a: 2 });
    expect(await kept.get('a', read('a'))).toBe(2);
    expect(reads).toEqual(['a']);
  });
});
