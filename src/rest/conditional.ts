/**
 * The `If-None-Match` condition of a GET (RFC 9110 §13.1.2) is false, so the answer is 304, when
 * the header is `*` or lists a tag that weakly matches the current ETag: `W/"x"` and `"x"` are the
 * same tag for this comparison.
 */
export function noneMatchFails(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag);
  return header
    .split(',')
    .map((tag) => tag.trim())
    .some((tag) => tag === '*' || opaque(tag) === opaque(etag));
}
