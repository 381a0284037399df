import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodedText,
  holdsTextPlaceholder,
  isSharedText,
  isTextPieces,
  isUtf8Text,
  jsonWithTexts,
  sharedBytes,
  sharedText,
  stringOfUtf8,
  textParts,
  textPlaceholder,
} from '../../src/core/text-parts.js';

// Large texts are encoded to UTF-8 a part at a time (answers, tasks for pool threads): the parts
// must make up the text and never split a surrogate pair, or its halves become U+FFFD.

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

describe('textParts', () => {
  it('cuts a text into parts of at most one unit over the size, never inside a surrogate pair', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'ü', '中', '😀', '𝄞', '\ud800', '\udc00') }), fc.integer({ min: 1, max: 7 }), (text, size) => {
        const parts = [...textParts(text, size)];
        expect(parts.join('')).toBe(text);
        // No pair is split (a lone surrogate may end or start a part: it is one on its own).
        for (const [i, part] of parts.slice(0, -1).entries()) {
          expect(isHighSurrogate(part.charCodeAt(part.length - 1)) && isLowSurrogate(parts[i + 1]!.charCodeAt(0))).toBe(false);
        }
        for (const part of parts) expect(part.length).toBeLessThanOrEqual(size + 1);
        expect(Buffer.concat(parts.map((part) => Buffer.from(part, 'utf8')))).toEqual(Buffer.from(text, 'utf8'));
      }),
    );
  });

  it('gives nothing for an empty text', () => {
    expect([...textParts('', 4)]).toEqual([]);
  });
});

describe('decodedText', () => {
  it('decodes UTF-8 in parts cut between characters: every width across every part boundary (256 KiB)', async () => {
    // Each shift moves the characters against the boundaries by one byte: every cut position
    // inside a 2-, 3- and 4-byte character comes up.
    for (const shift of ['', 'x', 'xx', 'xxx']) {
      const text = `${shift}${'aü中😀'.repeat(120_000)}end`;
      const bytes = new Uint8Array(Buffer.from(text, 'utf8'));
      expect(bytes.byteLength).toBeGreaterThan(3 * 256 * 1024);
      expect((await decodedText({ text: bytes })) === text).toBe(true);
    }
    expect(await decodedText({ text: new Uint8Array(0) })).toBe('');
  });

  it('reads ASCII as it is, large or small', async () => {
    for (const text of ['', 'a', '<p>ascii only</p>'.repeat(100_000)]) {
      expect((await decodedText({ text: new Uint8Array(Buffer.from(text, 'ascii')) })) === text).toBe(true);
    }
  });

  it('decodes a view into a larger buffer, only its own bytes', async () => {
    const buffer = Buffer.from('before|ü😀 middle|after', 'utf8');
    expect(await decodedText({ text: buffer.subarray(7, buffer.indexOf('|after')) })).toBe('ü😀 middle');
  });
});

describe('stringOfUtf8', () => {
  it('joins the parts as bytes: a part may end inside a character, a part may be a view into a larger buffer', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'ü', '中', '😀') }), fc.array(fc.nat(), { maxLength: 5 }), (text, cuts) => {
        const bytes = Buffer.from(`[${text}]`, 'utf8').subarray(1, -1);
        const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
        const parts = [0, ...at].map((start, i) => new Uint8Array(bytes.buffer, bytes.byteOffset + start, (at[i] ?? bytes.length) - start));
        expect(stringOfUtf8({ utf8: parts })).toBe(text);
      }),
    );
    expect(stringOfUtf8({ utf8: [] })).toBe('');
  });

  it('is told from the values a statement binds by isUtf8Text', () => {
    expect(isUtf8Text({ utf8: [new Uint8Array(1)] })).toBe(true);
    for (const value of [null, 'utf8', 1, Buffer.from('x'), { utf8: 'x' }, { text: new Uint8Array(1) }, ['utf8']]) expect(isUtf8Text(value)).toBe(false);
  });
});

/** The parts of `jsonWithTexts`, joined and decoded. */
const joined = async (parts: AsyncIterable<string>) => {
  let all = '';
  for await (const part of parts) all += part;
  return all;
};

describe('jsonWithTexts', () => {
  it('puts each text in its placeholder’s place as a JSON string, escaped in parts that join to the JSON of the whole', async () => {
    const first = `${'a"\\\n\u2028😀'.repeat(100_000)}\ud800`;
    const second = '</p>\u0000'.repeat(80_000);
    const value = { id: 7, body: first, nested: [{ text: second }, 'after'] };
    const json = JSON.stringify({ ...value, body: textPlaceholder, nested: [{ text: textPlaceholder }, 'after'] });
    expect(holdsTextPlaceholder(json)).toBe(true);
    expect(await joined(jsonWithTexts(json, [first, second]))).toBe(JSON.stringify(value));
  });

  it('puts a SharedText in its place as the JSON string of the text it stands for', async () => {
    const text = `${'a"\\\n\u2028ü中😀</p>\u0000'.repeat(60_000)}end`;
    const value = { data: { id: 3, body: text }, meta: { sanitized: [] } };
    const json = JSON.stringify({ ...value, data: { ...value.data, body: textPlaceholder } });
    expect((await joined(jsonWithTexts(json, [sharedText(text)]))) === JSON.stringify(value)).toBe(true);
  });

  it('puts TextPieces in their place as the JSON string of the pieces joined, every width and escape across every cut', async () => {
    const unit = 'a"\\\n\u2028ü中😀</p>\u0000';
    for (const shift of ['', 'x', 'xx', 'xxx']) {
      const pieces = [`${shift}${unit.repeat(9_000)}`, '😀', '', unit.repeat(30_000), `${unit}end`];
      const text = pieces.join('');
      const value = { data: { id: 3, body: text }, meta: {} };
      const json = JSON.stringify({ ...value, data: { ...value.data, body: textPlaceholder } });
      expect((await joined(jsonWithTexts(json, [{ pieces }]))) === JSON.stringify(value)).toBe(true);
    }
    expect(isTextPieces({ pieces: [] })).toBe(true);
    for (const value of ['text', sharedText('x'), { pieces: 'x' }, null, ['x']]) expect(isTextPieces(value)).toBe(false);
  });

  it('gives JSON without a placeholder as it is', async () => {
    const json = JSON.stringify({ body: 'short', text: '\u0000 not the placeholder' });
    expect(holdsTextPlaceholder(json)).toBe(false);
    expect(await joined(jsonWithTexts(json, []))).toBe(json);
  });
});

describe('SharedText', () => {
  it('holds the UTF-8 of its text in shared memory, and its length in UTF-16 units', () => {
    const text = 'aü中😀';
    const shared = sharedText(text);
    expect(shared.shared.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(sharedBytes(shared).equals(Buffer.from(text, 'utf8'))).toBe(true);
    expect(shared.length).toBe(text.length);
    expect(isSharedText(shared)).toBe(true);
    for (const value of [text, { text: new Uint8Array(1) }, { shared: 'x' }, null, [new Uint8Array(1)]]) expect(isSharedText(value)).toBe(false);
  });

  it('is cut for JSON between characters only: every width across every cut', async () => {
    for (const shift of ['', 'x', 'xx', 'xxx']) {
      const text = `${shift}${'aü中😀"'.repeat(60_000)}end`;
      const json = await joined(jsonWithTexts(JSON.stringify([textPlaceholder]), [sharedText(text)]));
      expect(json === JSON.stringify([text])).toBe(true);
    }
  });
});
