const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Why a redirect URI cannot be registered: https only, except http on a loopback host (RFC 8252). */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${uri} is not an absolute URL.`;
  }
  if (url.hash || uri.includes('#')) return `${uri} must not carry a fragment.`;
  if (url.username || url.password) return `${uri} must not carry user information.`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && loopbackHosts.has(url.hostname)) return undefined;
  return `${uri} must use https (http only on 127.0.0.1, [::1] or localhost).`;
}

/** Exact match, except that a loopback http redirect may use any port (RFC 8252 §7.3). */
export function redirectUriMatches(registered: readonly string[], uri: string): boolean {
  if (registered.includes(uri)) return true;
  if (redirectUriProblem(uri) !== undefined) return false;
  const withoutPort = (u: string) => {
    const url = new URL(u);
    if (url.protocol !== 'http:' || !loopbackHosts.has(url.hostname)) return undefined;
    url.port = '';
    return url.href;
  };
  const presented = withoutPort(uri);
  return presented !== undefined && registered.some((r) => redirectUriProblem(r) === undefined && withoutPort(r) === presented);
}
