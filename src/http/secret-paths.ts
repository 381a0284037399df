/**
 * Report share links and unsubscribe links carry their secret token in the path: the server log
 * and the traces show `/share/[token]` and `/unsubscribe/[token]` instead.
 */
export const withoutPathTokens = (url: string): string => url.replace(/\/(share|unsubscribe)\/[^/?#]+/g, '/$1/[token]');
