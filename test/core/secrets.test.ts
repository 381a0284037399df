import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonSha256, sha256 } from '../../src/core/secrets.js';
import { sharedText } from '../../src/core/text-parts.js';

// The fingerprint of an Idempotency-Key request is the SHA-256 of its JSON; large strings are
// hashed a part per turn of the event loop, and the digest must be the one of the whole JSON
// (records stored before keep matching).

/** Characters that JSON escapes, or that UTF-8 and surrogate pairs make hard at a cut. */
const unit = fc.constantFrom('a', '"', '\\', '\n', '\u0000', '\u001f', '\u2028', 'ü', '€', '😀', '\ud800', '\udc00', '<', '/');

/** A string of `length` units repeating a short random pattern: over the 64 Ki threshold, cut at every kind of place. */
const largeString = fc
  .tuple(fc.string({ unit, minLength: 1, maxLength: 9 }), fc.integer({ min: 64 * 1024 - 2, max: 600_000 }))
  .map(([pattern, length]) => pattern.repeat(Math.ceil(length / pattern.length)).slice(0, length));

const smallValue = fc.jsonValue({ maxDepth: 2 });

describe('jsonSha256', () => {
  it('is sha256 of JSON.stringify, whatever large strings the value holds and wherever they sit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(smallValue, largeString, fc.record({ body: largeString, title: fc.string({ unit }) })), { maxLength: 4 }),
        async (value) => {
          expect(await jsonSha256(['updateArticle', 7, value])).toBe(sha256(JSON.stringify(['updateArticle', 7, value])));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('hashes a SharedText as the string it stands for: a large PUT over REST and the same request sent otherwise have one fingerprint', async () => {
    const body = `${'<p>ü "quoted" 😀 \\ €</p>\n'.repeat(50_000)}`;
    const request = { body, title: 'A title' };
    expect(await jsonSha256(['updateArticle', 7, { ...request, body: sharedText(body) }])).toBe(sha256(JSON.stringify(['updateArticle', 7, request])));
  });

  it('tells apart values that differ in one character of a large string', async () => {
    const body = 'x'.repeat(300_000);
    const changed = `${body.slice(0, 200_000)}y${body.slice(200_001)}`;
    expect(await jsonSha256({ body })).not.toBe(await jsonSha256({ body: changed }));
  });
});
