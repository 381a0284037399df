import { createHash, timingSafeEqual } from 'node:crypto';

/** PKCE S256: base64url(SHA-256(verifier)). */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');

const verifierPattern = /^[A-Za-z0-9\-._~]{43,128}$/;

export function pkceHolds(verifier: string, challenge: string): boolean {
  if (!verifierPattern.test(verifier)) return false;
  const expected = Buffer.from(challenge);
  const actual = Buffer.from(s256(verifier));
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
