import { StringDecoder } from 'node:string_decoder';
import { none } from 'stream-chain/defs.js';
import Assembler from 'stream-json/assembler.js';
import { jsonParser, type Token } from 'stream-json/parser.js';

export type ImportList = 'articles' | 'backlinks';

/**
 * What an import file holds, in file order, without ever holding the whole file: the root's and
 * each site's members one by one, and each article and backlink as a value of its own. A member
 * that is an object or an array (other than `sites`, `articles`, `backlinks`) is skipped and
 * stands as `{}` or `[]`: the schema refuses it by its type alone. Those three arrays stand as
 * `[]` when they begin; their elements follow as events.
 */
export type ImportEvent =
  /** The file is not an object (`path` []), or `sites[index]` is not (`path` ['sites', index]). */
  | { kind: 'value'; path: (string | number)[]; value: unknown }
  /** A member of the root object (`site` null) or of site `site`. */
  | { kind: 'field'; site: number | null; key: string; value: unknown }
  | { kind: 'siteStart'; site: number }
  | { kind: 'item'; site: number; list: ImportList; index: number; value: unknown }
  | { kind: 'siteEnd'; site: number }
  /** The root object ended. */
  | { kind: 'end' };

/** The input is not JSON; `message` is the parser's. */
export class NotJsonError extends Error {}

type Frame =
  | { in: 'top' }
  | { in: 'root'; key: string | null }
  | { in: 'sites'; count: number }
  | { in: 'site'; site: number; key: string | null }
  | { in: 'list'; site: number; list: ImportList; count: number };

const streamedLists = new Set<string>(['articles', 'backlinks']);

const primitive = (token: Token): { value: unknown } | null => {
  switch (token.name) {
    case 'stringValue':
      return { value: token.value };
    case 'numberValue':
      return { value: Number(token.value) };
    case 'nullValue':
    case 'trueValue':
    case 'falseValue':
      return { value: token.value };
    default:
      return null;
  }
};

/** Turns the tokens of one import file into events; feed it the tokens in order. */
class ImportTokens {
  private readonly stack: Frame[] = [{ in: 'top' }];
  private readonly assembler = new Assembler();
  private assembling: { site: number; list: ImportList; index: number } | null = null;
  /** A container being skipped: its depth, and the event to emit once it closes. */
  private skipping: { depth: number; then: () => ImportEvent } | null = null;

  constructor(private readonly emit: (event: ImportEvent) => void) {}

  consume(token: Token): void {
    if (this.skipping) return this.skip(token);
    if (this.assembling) {
      this.assembler.consume(token);
      if (this.assembler.done) {
        this.emit({ kind: 'item', ...this.assembling, value: this.assembler.current });
        this.assembling = null;
      }
      return;
    }
    const frame = this.stack.at(-1)!;
    if (token.name === 'keyValue') {
      if (frame.in === 'root' || frame.in === 'site') frame.key = token.value;
      return;
    }
    if (token.name === 'endObject' || token.name === 'endArray') return this.close(frame);
    this.value(frame, token);
  }

  private close(frame: Frame): void {
    this.stack.pop();
    if (frame.in === 'root') this.emit({ kind: 'end' });
    else if (frame.in === 'site') this.emit({ kind: 'siteEnd', site: frame.site });
  }

  /** `token` starts a value inside `frame`. */
  private value(frame: Frame, token: Token): void {
    switch (frame.in) {
      case 'top':
        if (token.name === 'startObject') this.stack.push({ in: 'root', key: null });
        else this.plain(token, (value) => ({ kind: 'value', path: [], value }));
        return;
      case 'root': {
        const key = frame.key!;
        if (key === 'sites' && token.name === 'startArray') {
          this.emit({ kind: 'field', site: null, key, value: [] });
          this.stack.push({ in: 'sites', count: 0 });
        } else this.plain(token, (value) => ({ kind: 'field', site: null, key, value }));
        return;
      }
      case 'sites': {
        const site = frame.count++;
        if (token.name === 'startObject') {
          this.emit({ kind: 'siteStart', site });
          this.stack.push({ in: 'site', site, key: null });
        } else this.plain(token, (value) => ({ kind: 'value', path: ['sites', site], value }));
        return;
      }
      case 'site': {
        const key = frame.key!;
        if (streamedLists.has(key) && token.name === 'startArray') {
          this.emit({ kind: 'field', site: frame.site, key, value: [] });
          this.stack.push({ in: 'list', site: frame.site, list: key as ImportList, count: 0 });
        } else this.plain(token, (value) => ({ kind: 'field', site: frame.site, key, value }));
        return;
      }
      case 'list':
        this.assembling = { site: frame.site, list: frame.list, index: frame.count++ };
        this.consume(token);
    }
  }

  /** A primitive is emitted as itself; a container is skipped and emitted as `{}` or `[]`. */
  private plain(token: Token, event: (value: unknown) => ImportEvent): void {
    const simple = primitive(token);
    if (simple) return this.emit(event(simple.value));
    const standIn = token.name === 'startObject' ? {} : [];
    this.skipping = { depth: 1, then: () => event(standIn) };
  }

  private skip(token: Token): void {
    const skipping = this.skipping!;
    if (token.name === 'startObject' || token.name === 'startArray') skipping.depth += 1;
    else if (token.name === 'endObject' || token.name === 'endArray') skipping.depth -= 1;
    if (skipping.depth > 0) return;
    this.skipping = null;
    this.emit(skipping.then());
  }
}

/**
 * The events of an import file read from `source` (bytes or text, UTF-8), one array per chunk
 * read, so the reader holds one chunk and one article or backlink at a time. Throws
 * `NotJsonError` when the text is not one JSON value.
 */
export async function* importEvents(source: AsyncIterable<Buffer | string> | Iterable<Buffer | string>): AsyncGenerator<ImportEvent[]> {
  // A stream-chain stage is flushed by calling it with `none`; its type names only the text it takes.
  const tokenize = jsonParser({ streamValues: false }) as (text: string | typeof none) => ReturnType<ReturnType<typeof jsonParser>>;
  const decoder = new StringDecoder('utf8');
  let events: ImportEvent[] = [];
  const tokens = new ImportTokens((event) => events.push(event));
  const feed = (text: string | typeof none) => {
    let output;
    try {
      output = tokenize(text);
    } catch (error) {
      throw new NotJsonError((error as Error).message);
    }
    if (output !== none) for (const token of output.values) tokens.consume(token);
  };
  for await (const chunk of source) {
    feed(typeof chunk === 'string' ? chunk : decoder.write(chunk));
    if (events.length > 0) {
      yield events;
      events = [];
    }
  }
  feed(decoder.end());
  feed(none);
  yield events;
}
