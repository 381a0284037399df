/**
 * What a failed PATCH replacement tells the client so it can fix its `find`: for no match, the
 * nearest passage of the body (the same text ignoring case, white-space runs and entity
 * spelling, else the most similar one) with its offset and exact text; for several matches,
 * the first few with their surroundings. Pure, and linear in the body's size: one normalising
 * pass and one rolling-hash pass, so even the largest body and a long find are quick.
 *
 * Offsets and lengths count Unicode code points of the body, as every length here does.
 */
import { decodeHTML } from 'entities';
import type { ExplainedFailure, NearMatch, Occurrence, Replacement, ReplacementFailure } from './replacement.js';

export const MAX_NEAR_MATCH_LENGTH = 2_000;
export const CONTEXT_LENGTH = 60;
export const MAX_OCCURRENCES = 5;

// A named entity needs its `;`; a numeric one too, so `&#38x` stays text as a browser would not guess.
const ENTITY = /&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/y;

let lowerTable: Uint16Array | undefined;
/** Lower case per UTF-16 unit, where it stays one unit (so offsets map one to one). */
function lowerCaseTable(): Uint16Array {
  if (lowerTable) return lowerTable;
  const table = new Uint16Array(0x10000);
  for (let code = 0; code < 0x10000; code++) {
    const lower = String.fromCharCode(code).toLowerCase();
    table[code] = lower.length === 1 ? lower.charCodeAt(0) : code;
  }
  lowerTable = table;
  return table;
}

/** White space as `\s` knows it (no-break spaces included). */
const isSpace = (c: number): boolean =>
  c === 32 ||
  (c >= 9 && c <= 13) ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000 ||
  c === 0xfeff;

/** A text with entities decoded, case folded and white-space runs as one space. */
interface Normalized {
  codes: Uint16Array;
  length: number;
  /** `origin[i]`: UTF-16 offset in the raw text where normalised unit `i` comes from; `origin[length]` is its end. */
  origin: Int32Array;
}

function normalize(raw: string): Normalized {
  const lower = lowerCaseTable();
  const codes = new Uint16Array(raw.length);
  const origin = new Int32Array(raw.length + 1);
  let length = 0;
  let lastSpace = false;
  const emit = (code: number, from: number) => {
    if (isSpace(code)) {
      if (lastSpace) return;
      lastSpace = true;
      code = 32;
    } else {
      lastSpace = false;
    }
    codes[length] = lower[code] ?? code;
    origin[length] = from;
    length += 1;
  };
  let i = 0;
  while (i < raw.length) {
    const code = raw.charCodeAt(i);
    if (code === 38) {
      ENTITY.lastIndex = i;
      const entity = ENTITY.exec(raw)?.[0];
      const decoded = entity === undefined ? undefined : decodeHTML(entity);
      if (entity !== undefined && decoded !== undefined && decoded !== entity && decoded.length <= 2) {
        for (let k = 0; k < decoded.length; k++) emit(decoded.charCodeAt(k), i);
        i += entity.length;
        continue;
      }
    }
    emit(code, i);
    i += 1;
  }
  origin[length] = raw.length;
  return { codes, length, origin };
}

const textOf = (n: Normalized): string => new TextDecoder('utf-16le').decode(n.codes.subarray(0, n.length));

/** The raw end (exclusive) of normalised units `[.., last]`: where the next unit's source starts. */
function rawEnd(n: Normalized, last: number): number {
  let next = last + 1;
  while (next < n.length && n.origin[next] === n.origin[last]) next += 1;
  return n.origin[next] ?? 0;
}

/** Code points in `text` before UTF-16 offset `index`. */
export function codePointOffset(text: string, index: number): number {
  let pairs = 0;
  for (let i = 0; i < index - 1; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs += 1;
        i += 1;
      }
    }
  }
  return index - pairs;
}

/** The UTF-16 offset of code point `offset` of `text` (its length past the end). */
export function utf16Offset(text: string, offset: number, from = 0, fromPoints = 0): number {
  let i = from;
  let points = fromPoints;
  while (points < offset && i < text.length) {
    const code = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    i += code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
    points += 1;
  }
  return i;
}

const HASH_BASE = 0x01000193;
const MAX_CHUNKS = 32;
const MIN_CHUNK = 3;
// Chunks this many diagonals away still count for a candidate: a few inserted or dropped
// characters shift the chunks after them.
const SHIFT = 4;

const popCount = (x: number): number => {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
};

/** The find cut into up to 32 distinct chunks, by their rolling hash. */
interface Chunks {
  size: number;
  /** Offset in the normalised find of each chunk. */
  offsets: number[];
  /** Open-addressed table: hash → chunk number (-1 empty). */
  hashes: Int32Array;
  numbers: Int32Array;
  /** HASH_BASE ** size (mod 2^32), to roll the first unit out. */
  outFactor: number;
}

function hashOf(codes: Uint16Array, from: number, size: number): number {
  let hash = 0;
  for (let i = from; i < from + size; i++) hash = (Math.imul(hash, HASH_BASE) + (codes[i] ?? 0)) | 0;
  return hash;
}

const slotOf = (hash: number, mask: number): number => (hash ^ (hash >>> 15)) & mask;

function chunksOf(find: Normalized): Chunks | undefined {
  const size = Math.max(MIN_CHUNK, Math.ceil(find.length / MAX_CHUNKS));
  const count = Math.floor(find.length / size);
  if (count < 2) return undefined;
  const hashes = new Int32Array(128);
  const numbers = new Int32Array(128).fill(-1);
  const offsets: number[] = [];
  const seen = new Set<string>();
  const text = textOf(find);
  for (let j = 0; j < count; j++) {
    const offset = j * size;
    const chunk = text.slice(offset, offset + size);
    // A chunk that repeats says nothing about where the find is: one vote per position at most.
    if (seen.has(chunk)) continue;
    seen.add(chunk);
    const hash = hashOf(find.codes, offset, size);
    let slot = slotOf(hash, 127);
    while ((numbers[slot] ?? -1) !== -1) slot = (slot + 1) & 127;
    hashes[slot] = hash;
    numbers[slot] = offsets.length;
    offsets.push(offset);
  }
  let outFactor = 1;
  for (let i = 0; i < size; i++) outFactor = Math.imul(outFactor, HASH_BASE);
  return offsets.length < 2 ? undefined : { size, offsets, hashes, numbers, outFactor };
}

/** Calls `hit(position, chunk)` for every body position in `[from, to)` where a chunk starts (by hash). */
function scanChunks(body: Normalized, chunks: Chunks, from: number, to: number, hit: (position: number, chunk: number) => void): void {
  const { size, hashes, numbers, outFactor } = chunks;
  if (to - from < size) return;
  let hash = hashOf(body.codes, from, size);
  for (let p = from; ; p++) {
    let slot = slotOf(hash, 127);
    for (let n = numbers[slot] ?? -1; n !== -1; slot = (slot + 1) & 127, n = numbers[slot] ?? -1) {
      if (hashes[slot] === hash) hit(p, n);
    }
    if (p + size >= to) return;
    hash = (Math.imul(hash, HASH_BASE) + (body.codes[p + size] ?? 0) - Math.imul(body.codes[p] ?? 0, outFactor)) | 0;
  }
}

/**
 * The passage most like `find`, in normalised units `[start, end)`: the alignment (body
 * position minus find position) where most of the find's chunks occur exactly, counting those
 * a few characters off as well (an inserted or dropped character shifts the rest), with at
 * least half of the chunks and two. Undefined when nothing is that close.
 */
function similarPassage(body: Normalized, find: Normalized): { start: number; end: number } | undefined {
  const chunks = chunksOf(find);
  if (!chunks) return undefined;
  const m = find.length;
  // masks[diagonal + m]: the chunks found on that diagonal, one bit each.
  const masks = new Int32Array(body.length + m + 1);
  scanChunks(body, chunks, 0, body.length, (p, n) => {
    const at = p - (chunks.offsets[n] ?? 0) + m;
    masks[at] = (masks[at] ?? 0) | (1 << n);
  });
  let best = 0;
  let bestScore = 0;
  let bestNear = 0;
  for (let at = 0; at < masks.length; at++) {
    const exact = masks[at] ?? 0;
    if (exact === 0) continue;
    let near = 0;
    for (let k = Math.max(0, at - SHIFT); k <= Math.min(masks.length - 1, at + SHIFT); k++) near |= masks[k] ?? 0;
    const nearCount = popCount(near);
    const score = 2 * popCount(exact) + nearCount;
    if (score > bestScore) {
      bestScore = score;
      bestNear = nearCount;
      best = at - m;
    }
  }
  if (bestScore === 0 || bestNear < Math.max(2, Math.ceil(chunks.offsets.length / 2))) return undefined;
  const start = snap(body, find, Math.max(0, best), 'start');
  const end = snap(body, find, Math.min(body.length, best + m), 'end');
  return end > start ? { start, end } : undefined;
}

const SNAP_PROBE = 8;

/**
 * An end of the passage moved onto the nearest place, within `SHIFT`, where the find's first
 * (or last) few units stand: characters inserted or dropped before the first chunk found (or
 * after the last) would otherwise shift it.
 */
function snap(body: Normalized, find: Normalized, guess: number, end: 'start' | 'end'): number {
  const size = Math.min(SNAP_PROBE, find.length);
  const from = end === 'start' ? 0 : find.length - size;
  const fits = (at: number): boolean => {
    const origin = end === 'start' ? at : at - size;
    if (origin < 0 || origin + size > body.length) return false;
    for (let k = 0; k < size; k++) if (body.codes[origin + k] !== find.codes[from + k]) return false;
    return true;
  };
  for (let delta = 0; delta <= SHIFT; delta++) {
    if (fits(guess - delta)) return guess - delta;
    if (fits(guess + delta)) return guess + delta;
  }
  return guess;
}

/**
 * The nearest near-match of `find` in `body`: the first passage equal to it ignoring case,
 * white-space runs and entity spelling, else the most similar passage. Undefined when no
 * passage shares at least half of the find's pieces (or the find is too short to say).
 */
export function nearMatch(body: string, find: string): NearMatch | undefined {
  const normalBody = normalize(body);
  const normalFind = normalize(find);
  if (normalFind.length === 0) return undefined;
  const at = textOf(normalBody).indexOf(textOf(normalFind));
  const span = at >= 0 ? { start: at, end: at + normalFind.length } : similarPassage(normalBody, normalFind);
  if (!span) return undefined;
  const from = normalBody.origin[span.start] ?? 0;
  let to = rawEnd(normalBody, span.end - 1);
  const offset = codePointOffset(body, from);
  // A long passage is cut at the length limit, never inside a surrogate pair.
  to = Math.min(to, utf16Offset(body, MAX_NEAR_MATCH_LENGTH, from, 0));
  const text = body.slice(from, to);
  return { offset, length: codePointOffset(text, text.length), text, equivalent: at >= 0 };
}

/** The first `MAX_OCCURRENCES` occurrences of `find` in `body`, with their surroundings. */
export function occurrencesOf(body: string, find: string): Occurrence[] {
  const occurrences: Occurrence[] = [];
  for (let at = body.indexOf(find); at >= 0 && occurrences.length < MAX_OCCURRENCES; at = body.indexOf(find, at + find.length)) {
    const offset = codePointOffset(body, at);
    const end = at + find.length;
    const before = Array.from(body.slice(Math.max(0, at - 2 * CONTEXT_LENGTH), at)).slice(-CONTEXT_LENGTH).join('');
    const after = Array.from(body.slice(end, end + 2 * CONTEXT_LENGTH)).slice(0, CONTEXT_LENGTH).join('');
    occurrences.push({ offset, before, after });
  }
  return occurrences;
}

/**
 * Each failure of `applyReplacements(body, replacements)` with what the client needs to fix it,
 * worked out on the body as that item met it (after the items before it that matched).
 */
export function explainFailures(
  body: string,
  replacements: readonly Replacement[],
  failures: readonly ReplacementFailure[],
): ExplainedFailure[] {
  const failed = new Map(failures.map((failure) => [failure.index, failure]));
  const last = Math.max(-1, ...failed.keys());
  const explained: ExplainedFailure[] = [];
  let current = body;
  for (let index = 0; index <= last; index++) {
    const { find, replace = '' } = replacements[index] ?? { find: '' };
    const failure = failed.get(index);
    if (failure === undefined) {
      current = current.split(find).join(replace);
    } else if (failure.matches === 0) {
      const near = nearMatch(current, find);
      explained.push(near ? { ...failure, near_match: near } : failure);
    } else {
      explained.push({ ...failure, occurrences: occurrencesOf(current, find) });
    }
  }
  return explained;
}
