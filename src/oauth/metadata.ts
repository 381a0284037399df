import type { FastifyInstance } from 'fastify';
import type { Settings } from '../config.js';
import { type Listener, type OAuthUrls, oauthUrlsOf, supportedScopes } from '../services/oauth/index.js';

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
