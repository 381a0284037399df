import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { holdsAtMost, largeTextsAsBytes, largeTextsDecoded, maxBodyValues, sharedTexts } from '../../src/core/body-values.js';
import { isSharedText, sharedBytes } from '../../src/core/text-parts.js';

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

describe('large texts of a parsed body, as bytes and back', () => {
  it('carries every string of 64 Ki characters or more as its UTF-8, at any depth, and gives the same value back', async () => {
    const large = (c: string) => `${c}😀é`.repeat(30_000);
    const value = { body: large('a'), small: 'x'.repeat(64 * 1024 - 1), list: [1, large('b'), { deep: [large('c')] }], lone: `${large('d')}\ud800`, n: null };
    const expected = structuredClone(value);
    const outcome = { ok: true, value };
    const buffers = largeTextsAsBytes(outcome);
    expect(buffers).toHaveLength(3);
    expect(outcome.value.body).toMatchObject({ text: expect.any(Uint8Array) });
    // A lone surrogate would not survive UTF-8: that string stays a string.
    expect(typeof outcome.value.lone).toBe('string');
    expect(typeof outcome.value.small).toBe('string');
    const received = structuredClone(outcome, { transfer: buffers });
    await largeTextsDecoded(received);
    expect(received).toEqual({ ok: true, value: expected });
  });
});

describe('sharedTexts', () => {
  it('makes SharedTexts of the named top-level fields only, of a million characters or more, well-formed', () => {
    const large = (c: string) => `${c}😀é`.repeat(250_000);
    const value = {
      body: large('a'),
      title: large('t'),
      nested: { body: large('n') },
      shortBody: 'x'.repeat(999_999),
      lone: `${large('l')}\ud800`,
      number: 5,
    };
    const fields = ['body', 'shortBody', 'lone', 'number', 'missing'];
    const copy = structuredClone(value);
    sharedTexts(copy, fields);
    expect(isSharedText(copy.body)).toBe(true);
    expect(sharedBytes(copy.body as never).toString('utf8') === value.body).toBe(true);
    expect((copy.body as unknown as { length: number }).length).toBe(value.body.length);
    // Not named, nested, under a million, a lone surrogate (UTF-8 would turn it into U+FFFD), not a string.
    expect(copy).toEqual({ ...value, body: copy.body });
    // The SharedText crosses to another thread as the same memory; the rest of the body survives a message.
    expect(isSharedText(structuredClone(copy).body)).toBe(true);
  });

  it('leaves any other JSON value alone', () => {
    for (const value of [null, 'x'.repeat(1_000_000), ['x'.repeat(1_000_000)], 7]) {
      const copy = structuredClone(value);
      sharedTexts(copy, ['body', '0']);
      expect(copy).toEqual(value);
    }
  });
});
