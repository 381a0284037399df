import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { holdsAtMost, maxBodyValues } from '../../src/core/body-values.js';

/** Every value of `value`, itself included, counted one by one: what `holdsAtMost` bounds. */
const countOf = (value: unknown): number =>
  typeof value === 'object' && value !== null ? 1 + Object.values(value).reduce((sum: number, child) => sum + countOf(child), 0) : 1;

describe('holdsAtMost', () => {
  it('counts every JSON value, the body itself included, up to the limit exactly', () => {
    expect(holdsAtMost('text', 1)).toBe(true);
    expect(holdsAtMost({}, 1)).toBe(true);
    expect(holdsAtMost({ a: 1 }, 1)).toBe(false);
    expect(holdsAtMost({ a: 1 }, 2)).toBe(true);
    expect(holdsAtMost([null, true, [1, 'x'], { b: {} }], 8)).toBe(true);
    expect(holdsAtMost([null, true, [1, 'x'], { b: {} }], 7)).toBe(false);
  });

  it('agrees with a count of every value, for any JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 60 }), (value, limit) => {
        expect(holdsAtMost(value, limit)).toBe(countOf(value) <= limit);
      }),
    );
  });

  it('stops at the limit: the elements of an array past it are not even read', () => {
    const unread = new Proxy(new Array<unknown>(maxBodyValues), {
      get: (target, key) => {
        if (typeof key === 'string' && /^\d+$/.test(key)) throw new Error(`element ${key} was read`);
        return Reflect.get(target, key) as unknown;
      },
    });
    expect(holdsAtMost({ body: 'x', extra: unread }, maxBodyValues)).toBe(false);
  });
});
