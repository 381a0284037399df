import escapeHtml from 'escape-html';
import { describe, expect, it } from 'vitest';
import { escapedInParts, html, raw } from '../../src/web/html.js';

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

describe('html', () => {
  it('keeps large markup in the parts it came in, joined only where it is read whole', async () => {
    const body = await escapedInParts('<p>é “q” 😀</p>'.repeat(20_000));
    expect(body.parts.length).toBeGreaterThan(1);
    const big = `<p>${'x'.repeat(70_000)}</p>`;
    const page = html`<main>${body}</main><div>${raw(big)}</div><p>${'<small>'}</p>`;
    // The same strings, not copies: nothing was joined.
    expect(page.parts[1]).toBe(body.parts[0]);
    expect(page.parts.slice(1, body.parts.length + 1).every((part, i) => part === body.parts[i])).toBe(true);
    expect(page.parts).toContain(big);
    expect(page.value).toBe(`<main>${body.value}</main><div>${big}</div><p>&lt;small&gt;</p>`);
    expect(html`<p>${raw('<b>small</b>')} ${'&'}</p>`.parts).toEqual(['<p><b>small</b> &amp;</p>']);
  });
});
