import { createHash, randomBytes } from 'node:crypto';

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
