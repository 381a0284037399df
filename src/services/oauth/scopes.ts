import type { Scope } from '../actor.js';

/** The OAuth scopes of the agent interface and the credential scopes they carry. */
export const readScope = 'articles:read';
export const writeScope = 'articles:write';
export const supportedScopes = [readScope, writeScope];

/** The credential scopes of an OAuth scope string; `articles:read` is always granted. */
export const scopesOf = (scope: string): Scope[] => (scope.split(' ').includes(writeScope) ? ['read', 'write'] : ['read']);

export const scopeOf = (write: boolean): string => (write ? `${readScope} ${writeScope}` : readScope);

/** Whether a requested scope string asks for writing; tokens we do not know (`mcp`, `offline_access`) are ignored. */
export function requestsWrite(requested: string | undefined): boolean {
  const ours = (requested ?? '').split(' ').filter((s) => supportedScopes.includes(s));
  return ours.length === 0 || ours.includes(writeScope);
}
