/**
 * Report share links, unsubscribe links and staff's import uploads carry their secret token in the
 * path: the server log and the traces show `/share/[token]`, `/unsubscribe/[token]` and
 * `/imports/[token]` instead.
 */
export const withoutPathTokens = (url: string): string => url.replace(/\/(share|unsubscribe|imports)\/[^/?#]+/g, '/$1/[token]');
