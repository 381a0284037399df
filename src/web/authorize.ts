import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../config.js';
import { AppError } from '../core/errors.js';
import { logStorageFailure, toAppError } from '../http/errors.js';
import { formBodyParser } from '../http/json-body.js';
import { param } from '../http/oauth-params.js';
import type { Services } from '../services/index.js';
import type { LimitState } from '../services/limits.js';
import {
  everyResource,
  type OAuthClient,
  OAuthProblem,
  type OAuthUrls,
  oauthUrlsOf,
  otherResourceMessage,
  ourResource,
  redirectUriMatches,
  requestsWrite,
  scopeOf,
} from '../services/oauth/index.js';
import { html } from './html.js';
import { page } from './layout.js';
import { checkCsrf, loadSession, type Session, type SessionUser, signInUrl } from './session.js';

/** A checked authorization request: everything the code will be bound to. */
interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  /** Whether the client asked to edit (it may be granted read only). */
  asksWrite: boolean;
  scope: string | undefined;
  /** The MCP address the client named (RFC 8707); when it named none, its token is for each of ours. */
  resource: string | undefined;
}

/**
 * A refused authorization request, shown on our own page (400). None is sent to the client's
 * redirect URI: anyone can register a client, and an error redirect before the user has signed in
 * and decided would make this endpoint an open redirector (RFC 9700 §4.11.2). The only
 * redirects are the code and access_denied, after the user's decision.
 */
class RequestProblem extends Error {
  constructor(
    readonly error: string,
    description: string,
    readonly status = 400,
    readonly retryAfter?: number,
  ) {
    super(description);
  }
}

const challengePattern = /^[A-Za-z0-9_-]{43}$/;

/** A refusal over a per-address limit: 429 with Retry-After. */
const overLimit = (window: LimitState, what: string): RequestProblem =>
  new RequestProblem('temporarily_unavailable', `At most ${window.limit} ${what} from one address; try again in ${window.retryAfter} s.`, 429, window.retryAfter);

/**
 * Checks an authorization request: client and redirect URI first, then everything else. A client
 * described by a metadata document is fetched only through `admitFetch`, which counts it.
 */
async function checkRequest(services: Services, urls: OAuthUrls, params: unknown, admitFetch?: () => Promise<void>): Promise<AuthorizationRequest> {
  const clientId = param(params, 'client_id');
  if (!clientId) throw new RequestProblem('invalid_request', 'The request does not say which application is asking (client_id is missing).');
  let client: OAuthClient | undefined;
  try {
    client = await services.oauth.client(clientId, admitFetch);
  } catch (error) {
    if (error instanceof OAuthProblem) throw new RequestProblem(error.error, error.message);
    throw error;
  }
  if (!client) throw new RequestProblem('invalid_client', 'This application is not registered with Anchorage. Start the connection again from the application.');
  const redirectUri = param(params, 'redirect_uri');
  if (!redirectUri || !redirectUriMatches(client.redirectUris, redirectUri)) {
    throw new RequestProblem('invalid_request', 'The application asked to return to an address it did not register, so the request was stopped.');
  }
  if (param(params, 'response_type') !== 'code') {
    throw new RequestProblem('unsupported_response_type', 'Only response_type=code is supported.');
  }
  const codeChallenge = param(params, 'code_challenge');
  if (param(params, 'code_challenge_method') !== 'S256' || !codeChallenge || !challengePattern.test(codeChallenge)) {
    throw new RequestProblem('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
  }
  const named = param(params, 'resource');
  const resource = named === undefined ? undefined : ourResource(urls, named);
  if (named !== undefined && resource === undefined) throw new RequestProblem('invalid_target', otherResourceMessage(urls));
  // Every connection needs the user's Allow, so a request that must not show a page cannot succeed.
  if ((param(params, 'prompt') ?? '').split(' ').includes('none')) {
    throw new RequestProblem('consent_required', 'The user must sign in and allow access.');
  }
  const scope = param(params, 'scope');
  return { client, redirectUri, state: param(params, 'state'), codeChallenge, asksWrite: requestsWrite(scope), scope, resource };
}

/** The client's redirect URI with our answer, always carrying `state` and `iss` (RFC 9207). */
function callbackUrl(urls: OAuthUrls, redirectUri: string, state: string | undefined, answer: Record<string, string>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(answer)) url.searchParams.set(name, value);
  if (state !== undefined) url.searchParams.set('state', state);
  url.searchParams.set('iss', urls.issuer);
  return url.href;
}

/**
 * The consent page may be framed by nobody, and its form may post only here; Chromium applies
 * form-action to the redirect that follows the POST too, so the client's origin is allowed.
 */
function pageHeaders(reply: FastifyReply, formTarget?: string): FastifyReply {
  const formAction = ["'self'", ...(formTarget ? [new URL(formTarget).origin] : [])].join(' ');
  return reply
    .type('text/html; charset=utf-8')
    .header(
      'content-security-policy',
      `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'; object-src 'none'`,
    )
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store');
}

function problemPage(reply: FastifyReply, status: number, message: string): FastifyReply {
  return pageHeaders(reply)
    .code(status)
    .send(
      page({
        title: 'Cannot connect',
        body: html`<section class="card narrow">
  <h1>This connection cannot continue</h1>
  <p>${message}</p>
  <p><a href="/app">Go to Anchorage</a></p>
</section>`,
      }).value,
    );
}

const readText = 'Read your sites, articles, backlinks and reports';
const writeText = `${readText}, and edit article content`;

/** Where the user returns to, as they can recognise it: the host, or "this computer" for loopback. */
function returnAddress(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'http:' ? `${url.host} (an application on this computer)` : url.host;
}

const nameOf = (client: OAuthClient): string => client.name ?? 'An unnamed application';

/**
 * The application waiting behind a sign-in: when `next` (a path of ours) is a valid authorization
 * request of a client already known (nothing is fetched), its name as the consent page shows it;
 * otherwise undefined.
 */
export async function waitingApplication(services: Services, settings: Settings, next: string): Promise<string | undefined> {
  const url = new URL(next, settings.publicUrl);
  if (url.pathname !== '/oauth/authorize') return undefined;
  // A repeated parameter stays repeated, so that it is refused here as on the consent page.
  const params: Record<string, string | string[]> = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name);
    params[name] = values.length === 1 ? values[0]! : values;
  }
  try {
    return nameOf((await checkRequest(services, oauthUrlsOf(settings), params)).client);
  } catch (error) {
    if (error instanceof RequestProblem) return undefined;
    throw error;
  }
}

function consentPage(request: AuthorizationRequest, user: SessionUser, session: Session): string {
  const { client } = request;
  const name = nameOf(client);
  const hidden: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: request.redirectUri,
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: 'S256',
    resource: request.resource,
    scope: request.scope,
  };
  // Focused: no navigation to wander off to before Allow or Deny.
  return page({
    title: 'Allow access',
    focused: true,
    body: html`<section class="card narrow consent">
  <h1>Allow <span class="client-name">${name}</span> to use Anchorage?</h1>
  <p><strong>${name}</strong> is asking to use your Anchorage account <strong>${user.email}</strong>. After you choose, you go back to <strong>${returnAddress(request.redirectUri)}</strong>.</p>
  ${
    client.kind === 'cimd'
      ? html`<p class="muted small">The application is identified by <code>${new URL(client.clientId).host}</code>.</p>`
      : html`<p class="muted small">The application chose its name itself. Continue only if you just started connecting it and recognise the address above.</p>`
  }
  <form method="post" action="/oauth/authorize" class="stack">
    <input type="hidden" name="_csrf" value="${session.csrfToken}">
    ${Object.entries(hidden).map(([field, value]) => (value === undefined ? '' : html`<input type="hidden" name="${field}" value="${value}">`))}
    <fieldset>
      <legend>It will be able to</legend>
      ${
        request.asksWrite
          ? html`<label class="check"><input type="radio" name="access" value="write" checked> ${writeText}</label>
      <label class="check"><input type="radio" name="access" value="read"> ${readText} only</label>`
          : html`<p>${readText}</p><input type="hidden" name="access" value="read">`
      }
    </fieldset>
    <p class="muted small">It sees only your own account. Every call is in your activity log, and you can disconnect it at any time under <strong>Connected apps</strong>.</p>
    <div class="form-actions">
      <button type="submit" name="decision" value="allow" class="primary">Allow</button>
      <button type="submit" name="decision" value="deny">Deny</button>
    </div>
  </form>
</section>`,
  }).value;
}

/**
 * The authorization endpoint (GET and POST /oauth/authorize): sign-in (through the UI's page),
 * the consent page, and the code. A browser page of the UI; not part of the REST API's document.
 */
export async function authorizeRoutes(app: FastifyInstance, options: { services: Services; settings: Settings }) {
  const { services, settings } = options;
  const urls = oauthUrlsOf(settings);
  const secure = settings.publicUrl.startsWith('https://');
  formBodyParser(app, services.htmlPool);

  /** A failed check: our own page (400, or 429 over a limit) naming the OAuth error, never a redirect. */
  const refuse = (reply: FastifyReply, error: unknown) => {
    if (!(error instanceof RequestProblem)) throw error;
    if (error.retryAfter !== undefined) reply.header('retry-after', error.retryAfter);
    return problemPage(reply, error.status, `${error.message} (${error.error})`);
  };

  /**
   * Anyone may open this endpoint without signing in, and an unknown https client id makes the
   * server fetch its document: each address gets a window of requests, checked before anything
   * else, and each fetch counts as a new client under the registration limit.
   */
  const admitRequest = async (request: FastifyRequest) => {
    const window = await services.authorizeLimiter.consume(request.ip);
    if (!window.allowed) throw overLimit(window, 'authorization requests a minute');
  };
  const admitFetch = (request: FastifyRequest) => async () => {
    const window = await services.registrationLimiter.consume(`ip:${request.ip}`);
    if (!window.allowed) throw overLimit(window, 'new applications an hour');
  };

  app.setErrorHandler((error, request, reply) => {
    const appError = error instanceof AppError ? error : toAppError(error, request);
    if (appError.code === 'internal_error') request.log.error({ err: error }, 'unhandled error');
    else logStorageFailure(error, request);
    if (appError.retryAfter !== undefined) reply.header('retry-after', appError.retryAfter);
    return problemPage(reply, appError.status, appError.message);
  });

  app.get('/oauth/authorize', { schema: { hide: true } }, async (request, reply) => {
    let checked: AuthorizationRequest;
    try {
      await admitRequest(request);
      checked = await checkRequest(services, urls, request.query, admitFetch(request));
    } catch (error) {
      return refuse(reply, error);
    }
    const session = await loadSession(request, reply, services, secure);
    if (!session.user) return reply.redirect(signInUrl(request.url), 302);
    return pageHeaders(reply, checked.redirectUri).send(consentPage(checked, session.user, session));
  });

  app.post('/oauth/authorize', { schema: { hide: true } }, async (request, reply) => {
    const session = await loadSession(request, reply, services, secure);
    checkCsrf(session, param(request.body, '_csrf'));
    if (!session.user) return problemPage(reply, 403, 'You were signed out. Start the connection again from the application.');
    let checked: AuthorizationRequest;
    try {
      await admitRequest(request);
      checked = await checkRequest(services, urls, request.body, admitFetch(request));
    } catch (error) {
      return refuse(reply, error);
    }
    if (param(request.body, 'decision') !== 'allow') {
      const denied = { error: 'access_denied', error_description: 'The user denied access.' };
      return reply.redirect(callbackUrl(urls, checked.redirectUri, checked.state, denied), 303);
    }
    const code = await services.oauth.issueCode({
      clientId: checked.client.clientId,
      userId: session.user.userId,
      redirectUri: checked.redirectUri,
      codeChallenge: checked.codeChallenge,
      resource: checked.resource ?? everyResource(urls.resources),
      scope: scopeOf(checked.asksWrite && param(request.body, 'access') === 'write'),
    });
    return reply.redirect(callbackUrl(urls, checked.redirectUri, checked.state, { code }), 303);
  });
}
