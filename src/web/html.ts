import { setImmediate as nextTurn } from 'node:timers/promises';
import escapeHtml from 'escape-html';
import { textParts } from '../core/text-parts.js';

/**
 * Markup that is already safe; everything else interpolated into `html` is escaped. It is kept in
 * the parts it was built from, and joined only where it is read whole (`value`): a page around a
 * large article body is sent part by part (`sendPage`). Joining the escaped parts of a large body
 * would hold the event loop, and cutting the whole page again for sending longer still (a V8
 * string built by appending is flattened, copied whole, when first cut).
 */
export class SafeHtml {
  readonly parts: readonly string[];
  constructor(markup: string | readonly string[]) {
    this.parts = typeof markup === 'string' ? [markup] : markup;
  }
  get value(): string {
    return this.parts.join('');
  }
  toString(): string {
    return this.value;
  }
}

/** Markup this long (characters) stays a part of its own in `html`'s output. */
const ownPartChars = 64 * 1024;

type Interpolation = SafeHtml | string | number | boolean | null | undefined | Interpolation[];

const render = (value: Interpolation): string => {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (value instanceof SafeHtml) return value.value;
  return escapeHtml(String(value));
};

/** Escaping template: `html\`<p>${userText}</p>\``. Large safe markup stays in its parts. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  const parts: string[] = [];
  let out = strings[0]!;
  values.forEach((value, i) => {
    if (value instanceof SafeHtml && (value.parts.length > 1 || value.parts[0]!.length >= ownPartChars)) {
      parts.push(out, ...value.parts);
      out = '';
    } else {
      out += render(value);
    }
    out += strings[i + 1]!;
  });
  parts.push(out);
  return new SafeHtml(parts);
}

/** Trusted markup (sanitised article bodies, our own fragments). */
export const raw = (markup: string): SafeHtml => new SafeHtml(markup);

/** Characters escaped per turn of the event loop (a few milliseconds each). */
const escapePartChars = 64 * 1024;

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * escape-html's escaping, by one regular expression: its output is then one flat string. The
 * strings escape-html builds by appending are ropes, which are slow to join.
 */
const escapePart = (part: string) => part.replace(/[&<>"']/g, (character) => entities[character]!);

/**
 * `text` escaped, a part per turn of the event loop: escaping a large article body at once would
 * hold the loop. Each character escapes on its own, so the parts are the escaped whole, in parts.
 */
export async function escapedInParts(text: string): Promise<SafeHtml> {
  if (text.length < escapePartChars) return new SafeHtml(escapeHtml(text));
  const escaped: string[] = [];
  for (const part of textParts(text, escapePartChars)) {
    await nextTurn();
    escaped.push(escapePart(part));
  }
  return new SafeHtml(escaped);
}
