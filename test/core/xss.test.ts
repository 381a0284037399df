import { describe, expect, it } from 'vitest';
import { sanitizeBody, sanitizeTrusted } from '../../src/core/html.js';
import { protectedLinksOf } from '../../src/core/protected-anchors.js';
import { unsafeParts, xssVectors } from '../fixtures/xss-vectors.js';

describe('XSS vectors', () => {
  it('has at least 100 known vectors', () => {
    expect(xssVectors.length).toBeGreaterThanOrEqual(100);
  });

  it.each(xssVectors.map((vector) => [vector]))('neutralises %j', (vector) => {
    const { html } = sanitizeBody(vector, { protectedBefore: [] });
    expect(unsafeParts(html)).toEqual([]);
    expect(sanitizeBody(html, { protectedBefore: [] })).toEqual({ html, removed: [] });
    expect(protectedLinksOf(html)).toEqual([]);

    const trusted = sanitizeTrusted(vector);
    expect(unsafeParts(trusted)).toEqual([]);
    expect(sanitizeTrusted(trusted)).toBe(trusted);
  });

  it('keeps the harmless parts of a vector', () => {
    expect(sanitizeBody('<a href="https://ok.example" onclick="alert(1)">x</a>', { protectedBefore: [] }).html).toBe(
      '<a href="https://ok.example">x</a>',
    );
    expect(sanitizeBody('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>', { protectedBefore: [] }).html).toBe(
      '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>',
    );
  });
});
