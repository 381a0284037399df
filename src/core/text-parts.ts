/**
 * `text` in consecutive parts of `partChars` UTF-16 units, one more where a part would end inside
 * a surrogate pair: encoded on its own, each half of a split pair would become U+FFFD. Large texts
 * are encoded to UTF-8 a part per turn of the event loop (answers, tasks for pool threads).
 */
export function* textParts(text: string, partChars: number): Generator<string> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + partChars);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end += 1;
    yield text.slice(start, end);
    start = end;
  }
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
