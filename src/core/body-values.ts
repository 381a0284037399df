/// <reference lib="es2024.string" />
import { decodedText, type EncodedText, isEncodedText, isSharedText, sharedText } from './text-parts.js';

/**
 * The most values a request body may hold: JSON values (objects, arrays, strings, numbers,
 * booleans, nulls, the body itself included) or form fields and their repeats. The largest an
 * operation takes, a PATCH of 50 replacements, holds about 200. A body of millions of empty
 * objects, parsed by a pool thread, would hold the event loop while its value was copied in, and
 * fill its heap.
 */
export const maxBodyValues = 10_000;

/** Whether `value` holds at most `limit` values (see `maxBodyValues`); stops counting past it. */
export function holdsAtMost(value: unknown, limit: number): boolean {
  const waiting: unknown[] = [value];
  let counted = 0;
  while (waiting.length > 0) {
    const next = waiting.pop();
    counted += 1;
    if (typeof next !== 'object' || next === null) continue;
    const children = Array.isArray(next) ? next : Object.values(next);
    if (counted + waiting.length + children.length > limit) return false;
    for (const child of children) waiting.push(child);
  }
  return counted <= limit;
}

/**
 * Strings this long (characters) in a body parsed by a pool thread cross back to the event loop
 * as UTF-8, transferred (`largeTextsAsBytes`), and are decoded there (`largeTextsDecoded`): read
 * out of the thread's message as a string, a large article body holds the loop for longer than
 * received as bytes and decoded.
 */
const largeTextChars = 64 * 1024;

const encoder = new TextEncoder();

/** Calls `visit` on every object and array of a parsed body, after `visit` changed its parent. */
function eachContainer(root: unknown, visit: (container: Record<string, unknown>) => void): void {
  const waiting: unknown[] = [root];
  while (waiting.length > 0) {
    const next = waiting.pop();
    if (typeof next !== 'object' || next === null || next instanceof Uint8Array || isSharedText(next)) continue;
    const container = next as Record<string, unknown>;
    visit(container);
    for (const child of Object.values(container)) waiting.push(child);
  }
}

/**
 * Replaces, in place, each large string of `root` (an object or array) by its UTF-8 bytes, and
 * returns their buffers, to transfer. A string holding a lone surrogate stays a string: UTF-8
 * would turn it into U+FFFD.
 */
export function largeTextsAsBytes(root: unknown): ArrayBuffer[] {
  const buffers: ArrayBuffer[] = [];
  eachContainer(root, (container) => {
    for (const [key, value] of Object.entries(container)) {
      if (typeof value !== 'string' || value.length < largeTextChars || !value.isWellFormed()) continue;
      const text = encoder.encode(value);
      container[key] = { text } satisfies EncodedText;
      buffers.push(text.buffer as ArrayBuffer);
    }
  });
  return buffers;
}

/**
 * Strings this long (characters) in the fields of a body that take them as shared bytes
 * (`sharedTexts`) become `SharedText`s: the article body of a large PUT (the large tasks of the
 * HTML pool, the bodies the off-loop connection stores and the answers sent in parts start at the
 * same size).
 */
const sharedTextChars = 1_000_000;

/**
 * Replaces, in place, the large string of each of `fields` of `root` (an object) by a
 * `SharedText`; whether it made one. A string holding a lone surrogate stays a string: UTF-8
 * would turn it into U+FFFD.
 */
export function sharedTexts(root: unknown, fields: readonly string[]): boolean {
  if (typeof root !== 'object' || root === null || Array.isArray(root)) return false;
  const container = root as Record<string, unknown>;
  let made = false;
  for (const field of fields) {
    const value = Object.hasOwn(container, field) ? container[field] : undefined;
    if (typeof value !== 'string' || value.length < sharedTextChars || !value.isWellFormed()) continue;
    container[field] = sharedText(value);
    made = true;
  }
  return made;
}

/** Undoes `largeTextsAsBytes` on `root`, in place (each text decoded in parts: `decodedText`). */
export async function largeTextsDecoded(root: unknown): Promise<void> {
  const encoded: [Record<string, unknown>, string, EncodedText][] = [];
  eachContainer(root, (container) => {
    for (const [key, value] of Object.entries(container)) {
      if (isEncodedText(value)) encoded.push([container, key, value]);
    }
  });
  for (const [container, key, value] of encoded) container[key] = await decodedText(value);
}
