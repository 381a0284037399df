/** Pieces of an address, each ending after a separator (`/ ? & = . # -`): where a line may break. */
const piecesOf = (address: string): string[] => address.split(/(?<=[/?&=.#-])/).filter(Boolean);

/** `text` cut in its middle with an ellipsis, as long as `fits` allows (its two ends kept). */
function ellipsised(text: string, fits: (line: string) => boolean): string {
  const chars = [...text];
  const cut = (keep: number) => {
    const head = Math.ceil(keep / 2);
    return `${chars.slice(0, head).join('')}…${chars.slice(chars.length - (keep - head)).join('')}`;
  };
  // The most characters kept that fit, found by halving: a longer cut is never narrower.
  let low = 0;
  let high = chars.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(cut(middle))) low = middle;
    else high = middle - 1;
  }
  return cut(low);
}

/**
 * An address (URL, path, domain) in lines that each `fits`: broken after its separators, never
 * inside a word, and a piece too long for a line on its own cut in its middle ("dental…know"),
 * as a PDF's line breaking would otherwise split it letter by letter.
 */
export function addressLines(address: string, fits: (line: string) => boolean): string[] {
  const lines: string[] = [];
  let line = '';
  for (const piece of piecesOf(address)) {
    const fitted = fits(piece) ? piece : ellipsised(piece, fits);
    if (line && fits(line + fitted)) line += fitted;
    else {
      if (line) lines.push(line);
      line = fitted;
    }
  }
  if (line) lines.push(line);
  return lines;
}
