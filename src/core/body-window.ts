/**
 * An article body read in windows, for clients that cap what a tool may return (assistants):
 * an outline of its headings with the offsets and lengths of their sections, and any window
 * of the stored body, exactly as stored, so its text can be sent back as a `find`. Offsets and
 * lengths count Unicode code points, so a window never splits a character. Pure.
 */
import { decodeHTML } from 'entities';
import { codePointOffset, utf16Offset } from './near-match.js';

export interface OutlineEntry {
  /** 2 for <h2> … 6 for <h6>. */
  level: number;
  /** The heading's text (tags removed, entities decoded, at most `MAX_HEADING_TEXT` characters). */
  text: string;
  /** Where the heading's start tag starts. */
  offset: number;
  /** Its section: up to the next heading of the same or a higher level, or the end of the body. */
  length: number;
}

export interface BodyWindow {
  /** The body's exact text from `offset`, `length` code points long. */
  text: string;
  offset: number;
  length: number;
  total_length: number;
  /** Where the next window starts; null when this one reaches the end. */
  next_offset: number | null;
}

export const MAX_HEADING_TEXT = 120;

// Stored bodies are sanitiser output: every heading is a well-formed <hN …>…</hN> pair.
const HEADING = /<h([2-6])\b[^>]*>([\s\S]*?)<\/h\1\s*>/gi;

const headingText = (inner: string): string => {
  const text = decodeHTML(inner.replace(/<[^>]*>/g, '')).replace(/\s+/g, ' ').trim();
  return Array.from(text).slice(0, MAX_HEADING_TEXT).join('');
};

/** The body's headings in document order, with their sections. */
export function outlineOf(body: string): OutlineEntry[] {
  const entries: OutlineEntry[] = [];
  // Open sections, shallowest first: a heading closes those of its level and deeper.
  const open: OutlineEntry[] = [];
  let index = 0;
  let points = 0;
  for (const match of body.matchAll(HEADING)) {
    points += codePointOffset(body.slice(index, match.index), match.index - index);
    index = match.index;
    const level = Number(match[1]);
    while (open.length > 0 && (open[open.length - 1]?.level ?? 0) >= level) {
      const closed = open.pop();
      if (closed) closed.length = points - closed.offset;
    }
    const entry = { level, text: headingText(match[2] ?? ''), offset: points, length: 0 };
    entries.push(entry);
    open.push(entry);
  }
  const total = points + codePointOffset(body.slice(index), body.length - index);
  for (const entry of open) entry.length = total - entry.offset;
  return entries;
}

/** What one UTF-16 unit costs inside a JSON string (JSON.stringify's escapes). */
function jsonCost(code: number): number {
  if (code === 0x22 || code === 0x5c || code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) return 2;
  if (code < 0x20) return 6;
  return 1;
}

/**
 * The window of `body` from code point `offset`: at most `length` code points, and no more
 * than fits in `jsonBudget` characters of JSON string content (escapes counted). At least one
 * character when any is left, so paging always moves on.
 */
export function windowOf(body: string, offset: number, length: number, jsonBudget: number): BodyWindow {
  const total = codePointOffset(body, body.length);
  const from = utf16Offset(body, Math.min(offset, total));
  let i = from;
  let taken = 0;
  let cost = 0;
  while (i < body.length && taken < length) {
    const code = body.charCodeAt(i);
    const next = body.charCodeAt(i + 1);
    const pair = code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
    // A lone surrogate is escaped as \uXXXX.
    const unitCost = pair ? 2 : code >= 0xd800 && code <= 0xdfff ? 6 : jsonCost(code);
    if (taken > 0 && cost + unitCost > jsonBudget) break;
    cost += unitCost;
    i += pair ? 2 : 1;
    taken += 1;
  }
  const start = Math.min(offset, total);
  const end = start + taken;
  return { text: body.slice(from, i), offset: start, length: taken, total_length: total, next_offset: end < total ? end : null };
}

/** What a window of a body is asked for (`bodyWindow`). */
export interface WindowRequest {
  /** Where the window starts, in code points. */
  offset: number;
  /** At most this many code points; undefined: as many as fit. */
  length: number | undefined;
  /** Characters of JSON string content the window's text may take when no outline comes with it. */
  budget: number;
  /** Characters of JSON the outline may take; 0: no outline (the client has it already). */
  outlineBudget: number;
}

/** A window, with the body's outline when the window is not the whole body; or, for an offset past the end, the body's length. */
export type WindowAnswer = { ok: true; window: BodyWindow; outline?: OutlineEntry[] } | { ok: false; total: number };

const jsonLength = (value: unknown): number => JSON.stringify(value).length;

/**
 * The window of `body` that `request` asks for: when it is not the whole body and an outline is
 * asked for, with an outline of at most `outlineBudget` characters of JSON, the room of which (`,"outline":[…]` in the
 * answer's meta) the window gives up. Linear in the body's length: a thread's work for a large body.
 */
export function bodyWindow(body: string, { offset, length, budget, outlineBudget }: WindowRequest): WindowAnswer {
  const total = codePointOffset(body, body.length);
  if (offset > total) return { ok: false, total };
  const whole = windowOf(body, offset, length ?? total, budget);
  if ((whole.offset === 0 && whole.next_offset === null) || outlineBudget <= 0) return { ok: true, window: whole };
  const outline = boundedOutline(outlineOf(body), outlineBudget);
  const window = windowOf(body, offset, length ?? total, budget - ',"outline":'.length - jsonLength(outline));
  return { ok: true, window, outline };
}

/**
 * The outline within `budget` characters of JSON: the deepest levels go first, then the tail of
 * what is left. Each entry is measured once: a large body may have hundreds of thousands of headings.
 */
export function boundedOutline(outline: readonly OutlineEntry[], budget: number): OutlineEntry[] {
  // Characters of each level's entries in a JSON array, a comma each.
  const levelChars = new Map<number, number>();
  const sizes = outline.map((entry) => {
    const size = jsonLength(entry) + 1;
    levelChars.set(entry.level, (levelChars.get(entry.level) ?? 0) + size);
    return size;
  });
  // The JSON of the entries down to `deepest`: brackets, and one comma fewer than entries.
  const arrayChars = (deepest: number) => {
    let chars = 0;
    for (const [level, size] of levelChars) if (level <= deepest) chars += size;
    return chars === 0 ? 2 : chars + 1;
  };
  let deepest = 6;
  while (deepest > 2 && arrayChars(deepest) > budget) deepest -= 1;
  const kept: OutlineEntry[] = [];
  let used = 2;
  for (const [index, entry] of outline.entries()) {
    if (entry.level > deepest) continue;
    used += sizes[index]!;
    if (used > budget) break;
    kept.push(entry);
  }
  return kept;
}
