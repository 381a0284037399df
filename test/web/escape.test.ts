import escapeHtml from 'escape-html';
import { describe, expect, it } from 'vitest';
import { escapedInParts } from '../../src/web/html.js';

describe('escapedInParts', () => {
  it('escapes as escape-html does, small and large, every character width across the part boundaries', async () => {
    const tricky = `<a href="x?a=1&b='2'">é 😀 “q”</a>\u2028`;
    expect((await escapedInParts(tricky)).value).toBe(escapeHtml(tricky));
    // 64 Ki-character parts: offsets put the emoji (a surrogate pair) across each boundary.
    for (const offset of [0, 1, 2, 3]) {
      const large = 'x'.repeat(offset) + tricky.repeat(10_000);
      expect((await escapedInParts(large)).value === escapeHtml(large)).toBe(true);
    }
  });
});
