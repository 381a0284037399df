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

  it('forgets only the rows its watch names, or the one it is told', async () => {
    let changed: boolean | string[] = false;
    const kept = new KeptRows<string, number>(() => changed, 10);
    const { reads, read } = reader({ a: 1, b: 2, c: 3 });
    for (const key of ['a', 'b', 'c']) await kept.get(key, read(key));
    changed = ['a'];
    await kept.get('b', read('b'));
    changed = false;
    kept.forget('c');
    for (const key of ['a', 'b', 'c']) await kept.get(key, read(key));
    expect(reads).toEqual(['a', 'b', 'c', 'a', 'c']);
  });

  it('with room: forgetting one row frees its room', async () => {
    const room = { size: (row: number) => row, budget: 10, largest: 10 };
    const kept = new KeptRows<string, number>(() => false, 100, room);
    const { reads, read } = reader({ a: 5, b: 5, c: 5 });
    for (const key of ['a', 'b']) await kept.get(key, read(key));
    kept.forget('a');
    for (const key of ['c', 'b', 'c']) await kept.get(key, read(key));
    expect(reads).toEqual(['a', 'b', 'c']);
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

  it('with room: keeps rows within the budget, dropping the first kept, and never one larger than the largest', async () => {
    const room = { size: (row: number) => row, budget: 10, largest: 6 };
    const kept = new KeptRows<string, number>(() => false, 100, room);
    const { reads, read } = reader({ a: 4, b: 5, c: 3, big: 7 });
    // a + b fit (9); c makes 12, so a goes; a again makes 12, so b goes.
    for (const key of ['a', 'b', 'a', 'b', 'c', 'b', 'c', 'a', 'c']) await kept.get(key, read(key));
    expect(reads).toEqual(['a', 'b', 'c', 'a']);
    await kept.get('big', read('big'));
    await kept.get('big', read('big'));
    expect(reads.slice(4)).toEqual(['big', 'big']);
    for (const key of ['c', 'a']) await kept.get(key, read(key));
    expect(reads).toHaveLength(6);
  });

  it('with room: a row read twice at once counts once, and forgetting frees its room', async () => {
    const room = { size: (row: number) => row, budget: 10, largest: 10 };
    const kept = new KeptRows<string, number>(() => false, 100, room);
    const { reads, read } = reader({ a: 5, b: 5, c: 10 });
    await Promise.all([kept.get('a', read('a')), kept.get('a', read('a'))]);
    await kept.get('b', read('b'));
    // Counted twice, a would have pushed b out: both are kept.
    for (const key of ['a', 'b']) await kept.get(key, read(key));
    expect(reads).toEqual(['a', 'a', 'b']);
    kept.forget();
    for (const key of ['c', 'c']) await kept.get(key, read(key));
    expect(reads).toEqual(['a', 'a', 'b', 'c']);
  });
});
