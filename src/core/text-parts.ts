import { isAscii } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * `text` in consecutive parts of `partChars` UTF-16 units, one more where a part would end inside
 * a surrogate pair (a lone high surrogate before a pair must not move the cut into it): encoded on
 * its own, each half of a split pair would become U+FFFD. Large texts are encoded to UTF-8 a part
 * per turn of the event loop (answers, tasks for pool threads).
 */
export function* textParts(text: string, partChars: number): Generator<string> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + partChars);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end))) end += 1;
    yield text.slice(start, end);
    start = end;
  }
}

/**
 * Stands for a large string while the JSON around it is serialised (`jsonWithTexts`): a NUL and a
 * per-process random id, which no text sent or stored can be expected to hold.
 */
export const textPlaceholder = `\u0000${randomUUID()}`;
const placeholderJson = JSON.stringify(textPlaceholder);

/** Whether `json` holds a `textPlaceholder`. */
export const holdsTextPlaceholder = (json: string): boolean => json.includes(placeholderJson);

/** Characters of a large string escaped per turn of the event loop. */
const escapePartChars = 256 * 1024;

/**
 * The JSON text `json`, serialised with a `textPlaceholder` for each of `texts` in order, with the
 * texts in their places as JSON strings, in parts: each text escaped a part per turn of the event
 * loop (escaping a 5 MB article body as one JSON string took 16–50 ms). JSON escapes each
 * character on its own and `textParts` never cuts a surrogate pair, so the parts join to exactly
 * the JSON of the whole.
 */
export async function* jsonWithTexts(json: string, texts: readonly string[]): AsyncGenerator<string> {
  const between = json.split(placeholderJson);
  for (const [index, text] of texts.entries()) {
    yield `${between[index]}"`;
    for (const part of textParts(text, escapePartChars)) {
      await nextTurn();
      yield JSON.stringify(part).slice(1, -1);
    }
    yield '"';
  }
  yield between.slice(texts.length).join(placeholderJson);
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * A large string crossing to a thread as UTF-8 bytes, transferred rather than copied: in parts,
 * each cut between characters and encoded into a buffer of its own.
 */
export interface Utf8Text {
  utf8: Uint8Array[];
}

/** Characters of a large text encoded per turn of the event loop (about 1 ms each). */
const encodePartChars = 256 * 1024;

/**
 * `text` as UTF-8, to transfer to a thread: copying a 5 MB string to a thread (structured clone)
 * took 38–66 ms in one turn of the event loop, most of it faulting in fresh memory (about 2.6 ms
 * a megabyte on the bench machine). Each part is encoded into a buffer of its exact size in a
 * turn of its own: one buffer of `3 × length` bytes, allocated at once, showed up as 45–61 ms
 * stalls of the loop.
 */
export async function utf8InParts(text: string): Promise<Utf8Text> {
  const encoder = new TextEncoder();
  const utf8: Uint8Array[] = [];
  for (const part of textParts(text, encodePartChars)) {
    await nextTurn();
    utf8.push(encoder.encode(part));
  }
  return { utf8 };
}

/** The buffers of `text`, to transfer. */
export const buffersOf = (text: Utf8Text): ArrayBuffer[] => text.utf8.map((part) => part.buffer as ArrayBuffer);

/** A large text that came from a thread as UTF-8 bytes (transferred), to decode where it arrives. */
export interface EncodedText {
  text: Uint8Array;
}

/** Whether `value` is an `EncodedText`: no value read from a database or parsed from JSON or a form is one. */
export const isEncodedText = (value: unknown): value is EncodedText =>
  typeof value === 'object' && value !== null && (value as { text?: unknown }).text instanceof Uint8Array;

/** Bytes of UTF-8 decoded per turn of the event loop (about 1 ms each). */
const decodePartBytes = 256 * 1024;

/**
 * An `EncodedText` as a string. Decoded at once, a 5 MB body held the busy loop 62 ms; decoded
 * a part per turn (each part cut before the first byte of a character) and joined, 37 ms. What is
 * left is the fresh 5 MB the string needs (the kernel maps each page in on first write): on an
 * idle machine, with the service's malloc settings, decoding 5 MB at once took 22–24 ms, joining
 * the decoded parts 21–24 ms, and a copy of ASCII as Latin-1 (the same characters; Node keeps such
 * a string outside the heap past about 1 MB) 19 ms. So ASCII, most article HTML, is copied, not
 * decoded; other texts are decoded in parts.
 */
export async function decodedText({ text }: EncodedText): Promise<string> {
  const bytes = Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  if (isAscii(bytes)) return bytes.toString('latin1');
  const parts: string[] = [];
  for (let start = 0; start < bytes.length; ) {
    let end = Math.min(bytes.length, start + decodePartBytes);
    // UTF-8 continuation bytes are 10xxxxxx; a character has at most three of them.
    while (end < bytes.length && end > start + decodePartBytes - 4 && isContinuation(bytes[end]!)) end -= 1;
    await nextTurn();
    parts.push(bytes.toString('utf8', start, end));
    start = end;
  }
  return parts.join('');
}

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;
