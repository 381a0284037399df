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
 * loop (escaping a large article body as one JSON string would hold the loop). JSON escapes each
 * character on its own, and neither `textParts` nor `sharedTextParts` splits a character, so the
 * parts join to exactly the JSON of the whole.
 */
export async function* jsonWithTexts(json: string, texts: readonly LargeText[]): AsyncGenerator<string> {
  const between = json.split(placeholderJson);
  for (const [index, text] of texts.entries()) {
    yield `${between[index]}"`;
    yield* escapedInTurns(partsToEscape(text));
    yield '"';
  }
  yield between.slice(texts.length).join(placeholderJson);
}

/**
 * A large text kept as its UTF-8 bytes in shared memory, never made a string on the event loop:
 * the article body of a large PUT, from the thread that parsed the request (`sharedTexts` in
 * body-values.ts) to the thread that sanitises it, the database and the answer. Every thread
 * reads the same bytes, so none copies them; nothing writes them after they are made. `length`
 * is the string's length (UTF-16 units), as the checks of a string's size count it. Made from a
 * well-formed string only: its bytes decode to exactly that string. As a string, a large body
 * would cost the event loop a turn to make (its fresh memory) and hold its size again for each PUT
 * in flight.
 */
export interface SharedText {
  shared: Uint8Array;
  length: number;
}

/** Whether `value` is a `SharedText`: no value read from a database or parsed from JSON or a form is one. */
export const isSharedText = (value: unknown): value is SharedText =>
  typeof value === 'object' && value !== null && (value as { shared?: unknown }).shared instanceof Uint8Array;

/** `text` (well-formed) as a `SharedText`. */
export function sharedText(text: string): SharedText {
  const shared = new Uint8Array(new SharedArrayBuffer(Buffer.byteLength(text, 'utf8')));
  Buffer.from(shared.buffer, 0, shared.byteLength).write(text, 'utf8');
  return { shared, length: text.length };
}

/** The bytes of a `SharedText` as a Buffer (the same memory). */
export const sharedBytes = ({ shared }: SharedText): Buffer => Buffer.from(shared.buffer, shared.byteOffset, shared.byteLength);

/**
 * Bytes of a `SharedText` decoded and escaped at a time, and characters of a `TextPieces`' piece:
 * each piece and its escaped copy stay under V8's large-object size (128 KiB), so the young
 * generation's collections free them. A string's part is cut without a copy; a `SharedText`'s
 * must be decoded first, and decoded a whole part at a time it left one more string of 256 KiB
 * among the event loop's large objects (which only a full collection frees) per part.
 */
const escapePiece = 32 * 1024;

/**
 * A large text as the consecutive pieces it was read in, each of whole characters, never joined
 * into one string on the event loop: a large article body read from PostgreSQL for a REST answer
 * (joining would hold the loop, mostly faulting in the fresh memory).
 */
export interface TextPieces {
  pieces: readonly string[];
}

/** Whether `value` is a `TextPieces`: no value read from a database or parsed from JSON or a form is one. */
export const isTextPieces = (value: unknown): value is TextPieces =>
  typeof value === 'object' && value !== null && Array.isArray((value as { pieces?: unknown }).pieces);

/** A text that an answer escapes a part per turn of the event loop (`jsonWithTexts`). */
export type LargeText = string | SharedText | TextPieces;

/** A large text in the parts `escapedInTurns` escapes: a string's are slices, a `TextPieces`' pieces are cut again, a `SharedText`'s bytes decoded. */
function* partsToEscape(text: LargeText): Generator<string> {
  if (typeof text === 'string') yield* textParts(text, escapePartChars);
  else if (isSharedText(text)) yield* sharedTextParts(text, escapePiece);
  else for (const piece of text.pieces) yield* textParts(piece, escapePiece);
}

/** The `pieces` of a text escaped as JSON, about `escapePartChars` of them a turn of the event loop. */
async function* escapedInTurns(pieces: Iterable<string>): AsyncGenerator<string> {
  let escaped: string[] = [];
  let size = 0;
  for (const piece of pieces) {
    escaped.push(JSON.stringify(piece).slice(1, -1));
    size += piece.length;
    if (size < escapePartChars) continue;
    await nextTurn();
    yield escaped.join('');
    escaped = [];
    size = 0;
  }
  if (escaped.length === 0) return;
  await nextTurn();
  yield escaped.join('');
}

/** A `SharedText` decoded, in consecutive parts of about `partBytes` bytes, each cut before the first byte of a character. */
function* sharedTextParts(text: SharedText, partBytes: number): Generator<string> {
  const bytes = sharedBytes(text);
  for (const [start, end] of utf8Cuts(bytes, partBytes)) yield bytes.toString('utf8', start, end);
}

/** Consecutive ranges of about `partBytes` bytes of UTF-8 `bytes`, each cut before the first byte of a character. */
function* utf8Cuts(bytes: Uint8Array, partBytes: number): Generator<[number, number]> {
  for (let start = 0; start < bytes.length; ) {
    let end = Math.min(bytes.length, start + partBytes);
    // UTF-8 continuation bytes are 10xxxxxx; a character has at most three of them.
    while (end < bytes.length && end > start + partBytes - 4 && isContinuation(bytes[end]!)) end -= 1;
    yield [start, end];
    start = end;
  }
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

/** Characters of a large text encoded per turn of the event loop: a short turn each. */
const encodePartChars = 256 * 1024;

/**
 * `text` as UTF-8, to transfer to a thread: copying a large string to a thread (structured clone)
 * takes one long turn of the event loop, most of it faulting in fresh memory. Each part is
 * encoded into a buffer of its exact size in a turn of its own: one buffer of `3 × length` bytes,
 * allocated at once, showed up as stalls of the loop.
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

/** Whether `value` is a `Utf8Text`: no value read from a database or parsed from JSON or a form is one. */
export const isUtf8Text = (value: unknown): value is Utf8Text =>
  typeof value === 'object' && value !== null && Array.isArray((value as { utf8?: unknown }).utf8);

/**
 * A `Utf8Text` as a string, in the thread it reached. The parts are joined as bytes and decoded
 * once: decoded each on its own and joined, a large text left its parts (a quarter of a megabyte
 * each, in V8's large-object space, which only a full collection frees) in the thread's heap.
 */
export function stringOfUtf8({ utf8 }: Utf8Text): string {
  const [only, ...more] = utf8;
  const bytes = more.length === 0 && only ? only : Buffer.concat(utf8);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** The buffers of `text`, to transfer (shared memory is not transferred: every thread sees it). */
export const buffersOf = (text: Utf8Text): ArrayBuffer[] =>
  text.utf8.flatMap((part) => (part.buffer instanceof ArrayBuffer ? [part.buffer] : []));

/** A large text that came from a thread as UTF-8 bytes (transferred), to decode where it arrives. */
export interface EncodedText {
  text: Uint8Array;
}

/** Whether `value` is an `EncodedText`: no value read from a database or parsed from JSON or a form is one. */
export const isEncodedText = (value: unknown): value is EncodedText =>
  typeof value === 'object' && value !== null && (value as { text?: unknown }).text instanceof Uint8Array;

/** Bytes of UTF-8 decoded per turn of the event loop: a short turn each. */
const decodePartBytes = 256 * 1024;

/**
 * An `EncodedText` as a string. Decoded a part per turn (each part cut before the first byte of a
 * character) and joined, a large body holds the busy loop for less than decoded at once. What is
 * left is the fresh memory the string needs (the kernel maps each page in on first write), which
 * a copy of ASCII as Latin-1 (the same characters; Node keeps such a large string outside the
 * heap) makes cheapest. So ASCII, most article HTML, is copied, not decoded; other texts are
 * decoded in parts.
 */
export async function decodedText({ text }: EncodedText): Promise<string> {
  const bytes = Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  if (isAscii(bytes)) return bytes.toString('latin1');
  const parts: string[] = [];
  for (const [start, end] of utf8Cuts(bytes, decodePartBytes)) {
    await nextTurn();
    parts.push(bytes.toString('utf8', start, end));
  }
  return parts.join('');
}

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;
