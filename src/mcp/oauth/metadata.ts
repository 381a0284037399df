import type { FastifyInstance } from 'fastify';
import type { Settings } from '../../config.js';
import { supportedScopes } from '../../services/oauth/index.js';

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

/** RFC 9728 protected-resource metadata of the MCP endpoint. */
export const protectedResourceMetadata = (urls: OAuthUrls) => ({
  resource: urls.resource,
  authorization_servers: [urls.issuer],
  scopes_supported: supportedScopes,
  bearer_methods_supported: ['header'],
  resource_name: 'Anchorage',
  resource_documentation: `${urls.issuer}/docs`,
});

/** RFC 8414 authorization-server metadata (also served as the OpenID discovery document). */
export const authorizationServerMetadata = (urls: OAuthUrls) => ({
  issuer: urls.issuer,
  authorization_endpoint: `${urls.issuer}/oauth/authorize`,
  token_endpoint: `${urls.issuer}/oauth/token`,
  registration_endpoint: `${urls.issuer}/oauth/register`,
  revocation_endpoint: `${urls.issuer}/oauth/revoke`,
  response_types_supported: ['code'],
  response_modes_supported: ['query'],
  grant_types_supported: ['authorization_code', 'refresh_token'],
  code_challenge_methods_supported: ['S256'],
  token_endpoint_auth_methods_supported: ['none'],
  revocation_endpoint_auth_methods_supported: ['none'],
  scopes_supported: supportedScopes,
  authorization_response_iss_parameter_supported: true,
  client_id_metadata_document_supported: true,
  service_documentation: `${urls.issuer}/docs`,
});

/**
 * The /.well-known documents (mounted under that prefix). The MCP-only listener serves the
 * protected-resource metadata alone; the authorization server lives at PUBLIC_URL.
 */
export async function wellKnownRoutes(app: FastifyInstance, options: { settings: Settings; listener: Listener }) {
  const urls = oauthUrlsOf(options.settings, options.listener);
  const cached = { 'cache-control': 'public, max-age=3600' };
  const resource = protectedResourceMetadata(urls);
  app.get('/oauth-protected-resource', async (_request, reply) => reply.headers(cached).send(resource));
  app.get('/oauth-protected-resource/mcp', async (_request, reply) => reply.headers(cached).send(resource));
  if (options.listener === 'mcp') return;
  const server = authorizationServerMetadata(urls);
  app.get('/oauth-authorization-server', async (_request, reply) => reply.headers(cached).send(server));
  app.get('/openid-configuration', async (_request, reply) => reply.headers(cached).send(server));
}
