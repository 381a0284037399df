import type { FastifyInstance } from 'fastify';
import type { Settings } from '../config.js';
import { AppError } from '../core/errors.js';
import { DatabaseUnavailable } from '../db/unavailable.js';
import type { Services } from '../services/index.js';
import { OAuthProblem, type OAuthUrls, oauthUrlsOf, otherResourceMessage, ourResource, type TokenSet } from '../services/oauth/index.js';
import { param } from '../http/oauth-params.js';
import { formBodyParser } from '../http/json-body.js';

/** The resource a token request names, checked (RFC 8707); undefined when it names none. */
function requestedResource(urls: OAuthUrls, body: unknown): string | undefined {
  const resource = param(body, 'resource');
  if (resource === undefined) return undefined;
  const ours = ourResource(urls, resource);
  if (ours === undefined) throw new OAuthProblem('invalid_target', otherResourceMessage(urls));
  return ours;
}

function required(body: unknown, name: string): string {
  const value = param(body, name);
  if (value === undefined) throw new OAuthProblem('invalid_request', `${name} is required (once).`);
  return value;
}

/**
 * The endpoints clients call without a browser (mounted under /oauth): token (RFC 6749 §3.2),
 * registration (RFC 7591) and revocation (RFC 7009). Errors are RFC 6749 JSON bodies.
 */
export async function oauthEndpoints(app: FastifyInstance, options: { services: Services; settings: Settings }) {
  const { services } = options;
  const urls = oauthUrlsOf(options.settings);
  formBodyParser(app, services.htmlPool);

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof OAuthProblem) return reply.code(error.status).send(error.toBody());
    // A body the parser refused (a Fastify error, or ours: too many fields) is the client's.
    const status = error instanceof AppError ? error.status : (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      const description = error instanceof AppError ? error.message : 'The request body could not be read.';
      return reply.code(400).send({ error: 'invalid_request', error_description: description });
    }
    if (error instanceof DatabaseUnavailable) {
      request.log.warn({ err: error.cause }, 'database connection failed');
      const { message, retryAfter } = error.toAppError();
      return reply.code(503).header('retry-after', retryAfter).send({ error: 'temporarily_unavailable', error_description: message });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ error: 'server_error', error_description: 'Something went wrong on our side.' });
  });

  app.post('/token', async (request, reply): Promise<TokenSet> => {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const body = request.body;
    const grantType = param(body, 'grant_type');
    if (grantType === 'authorization_code') {
      return services.oauth.exchangeCode({
        code: required(body, 'code'),
        clientId: required(body, 'client_id'),
        redirectUri: param(body, 'redirect_uri'),
        codeVerifier: required(body, 'code_verifier'),
        resource: requestedResource(urls, body),
      });
    }
    if (grantType === 'refresh_token') {
      return services.oauth.refresh({
        refreshToken: required(body, 'refresh_token'),
        clientId: required(body, 'client_id'),
        resource: requestedResource(urls, body),
      });
    }
    throw new OAuthProblem('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
  });

  app.post('/register', { bodyLimit: 16 * 1024 }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    // Registration is open to anyone: a per-address window on new clients keeps a flood from filling the table.
    const admitNew = async () => {
      const window = await services.registrationLimiter.consume(`ip:${request.ip}`);
      if (window.allowed) return;
      reply.header('retry-after', window.retryAfter);
      throw new OAuthProblem('temporarily_unavailable', `At most ${window.limit} new clients an hour from one address.`, 429);
    };
    return reply.code(201).send(await services.oauth.register(request.body, admitNew));
  });

  app.post('/revoke', async (request, reply) => {
    await services.oauth.revokeToken(required(request.body, 'token'), param(request.body, 'client_id'));
    return reply.code(200).send();
  });
}
