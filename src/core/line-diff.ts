import { type ChangeObject, diffLines, diffWordsWithSpace } from 'diff';

/** Block-level tags end a line, so a body stored on one line still diffs paragraph by paragraph. */
function diffableLines(body: string): string {
  return body.replace(/(<\/(?:p|h[1-6]|li|ul|ol|blockquote|pre|table|thead|tbody|tr|figure|figcaption)>|<br\s*\/?>|<hr\s*\/?>)(?!\n)/gi, '$1\n');
}

/** A run of a changed line's text; `changed` marks the words removed (or added) on that line. */
export interface DiffWords {
  text: string;
  changed: boolean;
}

export interface DiffLine {
  kind: 'same' | 'added' | 'removed' | 'skipped';
  text: string;
  /**
   * The line's text in runs, when it is an edit of a removed (added) line beside it: a one-word
   * change marks that word, not the paragraph. Absent when the line is new or rewritten.
   */
  words?: DiffWords[];
}

export interface LineDiff {
  /** At most `maxLines` of them, in order. */
  lines: DiffLine[];
  /** Lines added and removed in all (shown or not). */
  added: number;
  removed: number;
  /** Lines past `maxLines`, not shown. */
  notShown: number;
}

export interface LineDiffOptions {
  /** Unchanged lines kept around each change; longer unchanged runs are folded. */
  context?: number;
  /** Lines the diff returns at most (a page shows them all). */
  maxLines?: number;
  /** Milliseconds the diff may take; past them there is no diff (`undefined`). */
  timeoutMs?: number;
}

/** Characters of one side of a changed block past which its words are not compared (a rewrite). */
const wordBlockChars = 4_000;
/** Characters of all blocks whose words one diff compares, which bounds the work of a diff. */
const wordBudgetChars = 64 * 1024;
/** Words (tokens) added and removed in a block past which it is a rewrite, not an edit. */
const wordEditLimit = 200;

/** Characters that are not whitespace: what a reader sees of a run. */
const visible = (text: string): number => text.replace(/\s+/g, '').length;

/**
 * Runs with neighbours of the same kind joined, a space between two changed words counted as
 * changed and the spaces at a change's ends as not: "A better first" reads as one change.
 */
function joinedRuns(runs: DiffWords[]): DiffWords[] {
  const pieces = runs.flatMap((run, i): DiffWords[] => {
    if (!run.changed) {
      const between = !/\S/.test(run.text) && runs[i - 1]?.changed === true && runs[i + 1]?.changed === true;
      return [{ text: run.text, changed: between }];
    }
    const [, lead = '', core = '', trail = ''] = /^(\s*)([\s\S]*?)(\s*)$/.exec(run.text)!;
    return [
      { text: lead, changed: false },
      { text: core, changed: true },
      { text: trail, changed: false },
    ];
  });
  const joined: DiffWords[] = [];
  for (const piece of pieces) {
    if (!piece.text) continue;
    const last = joined.at(-1);
    if (last && last.changed === piece.changed) last.text += piece.text;
    else joined.push({ ...piece });
  }
  return joined;
}

/**
 * Each line of a removed (or added) block in runs of unchanged and changed words, from the word
 * diff of the two blocks; a line that is mostly changed stays whole (`undefined`), as word marks
 * over a rewritten paragraph are noise.
 */
function wordsOfLines(parts: ChangeObject<string>[], side: 'removed' | 'added'): (DiffWords[] | undefined)[] {
  const lines: DiffWords[][] = [[]];
  for (const part of parts) {
    if (side === 'removed' ? part.added : part.removed) continue;
    const changed = side === 'removed' ? part.removed : part.added;
    part.value.split('\n').forEach((text, index) => {
      if (index > 0) lines.push([]);
      if (text) lines.at(-1)!.push({ text, changed });
    });
  }
  return lines.map(joinedRuns).map((runs) => {
    const unchanged = runs.reduce((sum, run) => sum + (run.changed ? 0 : visible(run.text)), 0);
    return unchanged * 2 >= visible(runs.map((run) => run.text).join('')) ? runs : undefined;
  });
}

/**
 * A line diff of two bodies. The work grows with the product of their lengths and of how much
 * they differ (two large bodies that differ on every line take minutes), so it stops after
 * `timeoutMs`, and the lines it returns are capped.
 */
export function lineDiff(before: string, after: string, options: LineDiffOptions = {}): LineDiff | undefined {
  const { context = 3, maxLines = 2_000, timeoutMs } = options;
  const parts =
    timeoutMs === undefined
      ? diffLines(diffableLines(before), diffableLines(after))
      : diffLines(diffableLines(before), diffableLines(after), { timeout: timeoutMs });
  if (!parts) return undefined;
  const result: LineDiff = { lines: [], added: 0, removed: 0, notShown: 0 };
  let wordBudget = wordBudgetChars;
  const push = (kind: DiffLine['kind'], texts: string[], words: (DiffWords[] | undefined)[] = []) => {
    const room = Math.max(0, maxLines - result.lines.length);
    result.lines.push(...texts.slice(0, room).map((text, i) => (words[i] ? { kind, text, words: words[i] } : { kind, text })));
    result.notShown += Math.max(0, texts.length - room);
  };
  /** The word diff of a removed block and the added block that replaces it, if it is worth one. */
  const wordsOf = (removed: string, added: string): ChangeObject<string>[] | undefined => {
    const size = removed.length + added.length;
    if (removed.length > wordBlockChars || added.length > wordBlockChars || size > wordBudget || result.lines.length >= maxLines) return undefined;
    wordBudget -= size;
    return diffWordsWithSpace(removed, added, { maxEditLength: wordEditLimit });
  };
  const linesOf = (value: string) => (value.endsWith('\n') ? value.slice(0, -1) : value).split('\n');
  let replaced: ChangeObject<string>[] | undefined;
  parts.forEach((part, index) => {
    const partLines = linesOf(part.value);
    if (part.added) {
      result.added += partLines.length;
      push('added', partLines, replaced && wordsOfLines(replaced, 'added'));
      replaced = undefined;
    } else if (part.removed) {
      result.removed += partLines.length;
      const next = parts[index + 1];
      replaced = next?.added ? wordsOf(partLines.join('\n'), linesOf(next.value).join('\n')) : undefined;
      push('removed', partLines, replaced && wordsOfLines(replaced, 'removed'));
    } else {
      const keepHead = index === 0 ? 0 : context;
      const keepTail = index === parts.length - 1 ? 0 : context;
      if (partLines.length > keepHead + keepTail + 1) {
        push('same', partLines.slice(0, keepHead));
        push('skipped', [`${partLines.length - keepHead - keepTail} unchanged lines`]);
        push('same', partLines.slice(partLines.length - keepTail));
      } else {
        push('same', partLines);
      }
    }
  });
  return result;
}
