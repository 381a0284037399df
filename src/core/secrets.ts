import { createHash, randomBytes } from 'node:crypto';
import { isSharedText, jsonWithTexts, type SharedText, textPlaceholder } from './text-parts.js';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniformly random base62 text (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += base62[byte % 62];
    }
  }
  return out;
}

/** A new API key: `ak_` and 40 base62 characters. */
export const newApiKey = (): string => `ak_${randomBase62(40)}`;

export const apiKeyPattern = /^ak_[0-9A-Za-z]{40}$/;

/** Keys and tokens are stored as this hash only. */
export const sha256 = (secret: string | Buffer): string => createHash('sha256').update(secret).digest('hex');

/** Strings this long (UTF-16 units) are escaped and hashed by `jsonSha256` a part per turn. */
const largeStringChars = 64 * 1024;

/**
 * `sha256(JSON.stringify(value))`, with every large string of `value` escaped and hashed a part
 * per turn of the event loop (`jsonWithTexts`): serialised and hashed at once, a request holding
 * a large article body (the fingerprint of an Idempotency-Key) would take one long turn. A
 * `SharedText` is hashed as the string it stands for.
 */
export async function jsonSha256(value: unknown): Promise<string> {
  const large: (string | SharedText)[] = [];
  const json = JSON.stringify(value, (_key, item: unknown) =>
    (typeof item === 'string' && item.length >= largeStringChars) || isSharedText(item) ? (large.push(item), textPlaceholder) : item,
  );
  const hash = createHash('sha256');
  for await (const part of jsonWithTexts(json, large)) hash.update(part);
  return hash.digest('hex');
}
