/**
 * Text that disallowed containers would swallow, and the invisible characters that could make a
 * protected link display differently. Pure helpers of the sanitiser in `html.ts`.
 */
import { Parser } from 'htmlparser2';
import { validationFailed } from './errors.js';

/**
 * The bidi embedding, override and isolate controls of UAX #9 (LRE RLE PDF LRO RLO, LRI RLI FSI
 * PDI) and the deprecated format characters U+206A–U+206F (symmetric swapping, Arabic shaping,
 * digit shapes). They change how the text after them is ordered or drawn, up to reversing it,
 * while the markup stays the same. The implicit marks (U+200E, U+200F, U+061C), the zero-width
 * characters and the soft hyphen stay: a mark acts like one invisible letter of its direction,
 * which any visible letter can do too, and ZWNJ/ZWJ are part of Persian, Indic and emoji text.
 * See decisions.md ("Writes").
 */
const FORMATTING_CONTROLS = /[\u202A-\u202E\u2066-\u2069\u206A-\u206F]/g;

/**
 * htmlparser2 keeps its open elements in an array it unshifts and searches, so each tag costs
 * time linear in the nesting depth. Articles nest a few levels deep; every parse here refuses
 * deeper input (AppError `validation_failed` on `body`) so a hostile body cannot turn each tag
 * into a long scan.
 */
export const MAX_NESTING_DEPTH = 256;

/** The error for input nested deeper than `MAX_NESTING_DEPTH`. */
export const tooDeep = () =>
  validationFailed({ body: [`HTML elements are nested more than ${MAX_NESTING_DEPTH} levels deep.`] });

export const hasFormattingControls = (text: string): boolean => /[\u202A-\u202E\u2066-\u206F]/.test(text);

/** `text` without the controls above (markup is unaffected: none of them is markup). */
export const withoutFormattingControls = (text: string): string => text.replace(FORMATTING_CONTROLS, '');

/** Code points, as decisions.md counts every length. */
const codePoints = (text: string): number => {
  let count = text.length;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) count -= 1;
  }
  return count;
};

export interface ContainerReport {
  /** The input with every never-closed container closed right after its start tag. */
  html: string;
  /** Never-closed containers, by tag and 1-based code-point position of `<` in the input. */
  closed: { tag: string; at: number }[];
  /** Characters of text inside the (closed) containers the sanitiser drops, by tag. */
  removedText: Map<string, number>;
}

/**
 * Rounds after the first: only an unclosed raw-text element (`<script>`, `<style>` …) needs one,
 * as the text it held may start another; each round is one more parse of the body.
 */
const MAX_ROUNDS = 6;

interface Container {
  tag: string;
  depth: number;
  start: number;
  end: number;
  /** Never-closed containers inside this one, kept only if this one is never closed either. */
  unclosedInside: Container[];
}

interface Round {
  unclosed: Container[];
  removedText: Map<string, number>;
}

/**
 * One parse: every container whose end is only implied and is not inside a closed container,
 * and the text of the outermost closed ones (counted only when it is more than white space).
 */
function scanContainers(html: string, names: ReadonlySet<string>, maxDepth: number, tooDeep: () => Error): Round {
  const round: Round = { unclosed: [], removedText: new Map() };
  const open: Container[] = [];
  let depth = 0;
  let chars = 0;
  let words = false;
  const parser = new Parser({
    onopentag(name) {
      depth += 1;
      if (depth > maxDepth) throw tooDeep();
      if (names.has(name)) open.push({ tag: name, depth, start: parser.startIndex, end: parser.endIndex + 1, unclosedInside: [] });
    },
    ontext(data) {
      if (open.length === 0) return;
      chars += codePoints(data);
      words ||= /\S/.test(data);
    },
    onclosetag(_name, isImplied) {
      const container = open.at(-1);
      if (container !== undefined && depth === container.depth) {
        open.pop();
        // A self-closing `<svg/>` is closed at its own start tag.
        if (isImplied && parser.startIndex !== container.start) {
          (open.at(-1)?.unclosedInside ?? round.unclosed).push(container, ...container.unclosedInside);
        } else if (open.length === 0 && words) {
          round.removedText.set(container.tag, (round.removedText.get(container.tag) ?? 0) + chars);
        }
        if (open.length === 0) {
          chars = 0;
          words = false;
        }
      }
      depth -= 1;
    },
  });
  parser.end(html);
  round.unclosed.sort((a, b) => a.start - b.start);
  return round;
}

/**
 * A container the sanitiser drops with its content (`names`) that is never closed — its end is
 * implied by a parent's end tag or the end of the body — would take everything after it along.
 * Each one is closed right after its own start tag instead, so that text is kept (as text, to
 * be sanitised like any other). Throws `validation_failed` on `body` naming the element and where
 * it starts if the body still has one after `MAX_ROUNDS`, and `tooDeep()` past `maxDepth`.
 */
export function closeUnclosedContainers(
  html: string,
  names: ReadonlySet<string>,
  maxDepth: number,
  tooDeep: () => Error,
): ContainerReport {
  let current = html;
  // Closing tags added so far, in current offsets, to map positions back to the input.
  let insertions: { at: number; length: number }[] = [];
  const closed: ContainerReport['closed'] = [];
  const inputOffset = (offset: number) => offset - insertions.reduce((sum, { at, length }) => (at < offset ? sum + length : sum), 0);
  const position = (offset: number) => codePoints(html.slice(0, inputOffset(offset))) + 1;
  for (let round = 1; ; round += 1) {
    const { unclosed, removedText } = scanContainers(current, names, maxDepth, tooDeep);
    if (unclosed.length === 0) return { html: current, closed, removedText };
    const first = unclosed[0]!;
    if (round > MAX_ROUNDS) {
      throw validationFailed({
        body: [`<${first.tag}> at character ${position(first.start)} is never closed, and the text it holds keeps opening more; close it or remove it.`],
      });
    }
    let next = '';
    let copied = 0;
    // Where each closing tag goes, in offsets of `current`.
    const added: { at: number; length: number }[] = [];
    for (const { tag, start, end } of unclosed) {
      closed.push({ tag, at: position(start) });
      next += `${current.slice(copied, end)}</${tag}>`;
      added.push({ at: end, length: tag.length + 3 });
      copied = end;
    }
    const moved = (offset: number) => added.reduce((sum, { at, length }) => (at <= offset ? sum + length : sum), 0);
    insertions = [
      ...insertions.map(({ at, length }) => ({ at: at + moved(at), length })),
      ...added.map(({ at, length }) => ({ at: at + moved(at - 1), length })),
    ];
    current = next + current.slice(copied);
  }
}
