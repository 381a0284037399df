import { describe, expect, it } from 'vitest';
import { KeptCounts } from '../../src/services/counters.js';

const spans = (n: number) => Array.from({ length: n }, (_, i) => ({ span: `2026-01-${String(i + 1).padStart(2, '0')}`, n: 1 }));

describe('KeptCounts', () => {
  it('keeps what one version of the counters gave, and drops it for a newer version', () => {
    const kept = new KeptCounts(100);
    kept.keep('a', 3, (list) => (list.spans = spans(2)));
    kept.keep('a', 3, (list) => list.days.set('2026-01', spans(3)));
    expect(kept.get('a')).toMatchObject({ version: 3, spans: spans(2), days: new Map([['2026-01', spans(3)]]) });
    kept.keep('a', 4, (list) => (list.total = 9));
    expect(kept.get('a')).toEqual({ version: 4, total: 9, days: new Map() });
    // A read of an older version that ends late does not replace a newer one's counts.
    kept.keep('a', 3, (list) => (list.total = 7));
    expect(kept.get('a')).toEqual({ version: 4, total: 9, days: new Map() });
  });

  it('drops the least recently used lists once it holds more counter rows than its limit', () => {
    const kept = new KeptCounts(10);
    kept.keep('a', 0, (list) => (list.spans = spans(4)));
    kept.keep('b', 0, (list) => (list.spans = spans(4)));
    // Reading `a` makes `b` the least recently used.
    expect(kept.get('a')).toBeDefined();
    kept.keep('c', 0, (list) => (list.blocks = spans(3)));
    expect(kept.get('b')).toBeUndefined();
    expect(kept.get('a')?.spans).toHaveLength(4);
    expect(kept.get('c')?.blocks).toHaveLength(3);
    // A list larger than the limit is not kept, and what it had before goes with it.
    kept.keep('c', 0, (list) => (list.spans = spans(8)));
    expect(kept.get('c')).toBeUndefined();
    expect(kept.get('a')?.spans).toHaveLength(4);
  });
});
