import { diffLines } from 'diff';

/** Block-level tags end a line, so a body stored on one line still diffs paragraph by paragraph. */
function diffableLines(body: string): string {
  return body.replace(/(<\/(?:p|h[1-6]|li|ul|ol|blockquote|pre|table|thead|tbody|tr|figure|figcaption)>|<br\s*\/?>|<hr\s*\/?>)(?!\n)/gi, '$1\n');
}

export interface DiffLine {
  kind: 'same' | 'added' | 'removed' | 'skipped';
  text: string;
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
  const push = (kind: DiffLine['kind'], texts: string[]) => {
    const room = Math.max(0, maxLines - result.lines.length);
    result.lines.push(...texts.slice(0, room).map((text) => ({ kind, text })));
    result.notShown += Math.max(0, texts.length - room);
  };
  parts.forEach((part, index) => {
    const text = part.value.endsWith('\n') ? part.value.slice(0, -1) : part.value;
    const partLines = text.split('\n');
    if (part.added) {
      result.added += partLines.length;
      push('added', partLines);
    } else if (part.removed) {
      result.removed += partLines.length;
      push('removed', partLines);
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
