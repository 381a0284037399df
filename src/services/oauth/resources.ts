import { OAuthProblem } from './problems.js';

/**
 * What a code or token is bound to (RFC 8707), as stored: the one MCP address the client named or,
 * when it named none, every MCP address of this server (with MCP_PORT the endpoint is served at
 * two), space-separated. A client that names no resource cannot say which address it will call, so
 * its token works at each; a client that names one gets a token for that one alone.
 */
export const resourcesOf = (binding: string): string[] => binding.split(' ');

/** The binding of a request that names no resource: each of `resources`. */
export const everyResource = (resources: readonly string[]): string => resources.join(' ');

/** The binding of what a request names out of `binding` (the same binding when it names none), or the refusal. */
export function narrowedResource(binding: string, named: string | undefined, issuedFor: string): string | OAuthProblem {
  if (named === undefined) return binding;
  return resourcesOf(binding).includes(named) ? named : new OAuthProblem('invalid_target', `resource differs from ${issuedFor}.`);
}
