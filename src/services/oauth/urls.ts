import type { Settings } from '../../config.js';

/**
 * The public identifiers of the authorization server and the MCP resource, from settings only
 * (never from a request), so the same strings appear in metadata, tokens, challenges and `iss`.
 * With MCP_PORT the endpoint is served twice: on the main listener at PUBLIC_URL/mcp and on its
 * own listener at MCP_PUBLIC_URL; each is a resource of its own, with tokens for it alone.
 */
export interface OAuthUrls {
  issuer: string;
  /** The resource the listener at hand serves. */
  resource: string;
  resourceMetadataUrl: string;
  /** Every resource the authorization server issues tokens for; all of them when a request names none. */
  resources: readonly string[];
}

/** Where RFC 9728 puts a resource's metadata: the well-known path before the resource's own path. */
const metadataUrlOf = (resource: string): string => {
  const url = new URL(resource);
  return `${url.origin}/.well-known/oauth-protected-resource${url.pathname === '/' ? '' : url.pathname}`;
};

/** The main listener (everything), or the MCP_PORT one (the MCP endpoint and its metadata). */
export type Listener = 'main' | 'mcp';

export function oauthUrlsOf(settings: Settings, listener: Listener = 'main'): OAuthUrls {
  const main = settings.mcpPort === undefined ? settings.mcpPublicUrl : `${settings.publicUrl}/mcp`;
  const separate = listener === 'mcp' && settings.mcpPort !== undefined;
  return {
    issuer: settings.publicUrl,
    resource: separate ? settings.mcpPublicUrl : main,
    resourceMetadataUrl: separate ? metadataUrlOf(settings.mcpPublicUrl) : `${settings.publicUrl}/.well-known/oauth-protected-resource/mcp`,
    resources: [...new Set([settings.mcpPublicUrl, main])],
  };
}

/** The resource an RFC 8707 indicator names (a trailing slash names it too), if it is one of ours. */
export const ourResource = (urls: OAuthUrls, resource: string): string | undefined =>
  urls.resources.find((ours) => resource === ours || resource === `${ours}/`);

/** The refusal's text for a resource indicator that names none of ours. */
export const otherResourceMessage = (urls: OAuthUrls): string =>
  urls.resources.length === 1 ? `The only resource here is ${urls.resources[0]}.` : `The resources here are ${urls.resources.join(' and ')}.`;
