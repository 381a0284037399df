import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Client,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { DomUtils, parseDocument } from 'htmlparser2';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { launchChromium } from './chromium.js';
import { type Harness, startHarness } from './harness.js';

export const password = 'correct horse battery';

export type NegotiationMode = { mode: 'legacy' } | { mode: 'auto' } | { mode: { pin: '2026-07-28' } };

export const modes: { name: string; negotiation: NegotiationMode; protocol: string }[] = [
  { name: 'legacy (2025-11-25)', negotiation: { mode: 'legacy' }, protocol: '2025-11-25' },
  { name: 'auto (2026-07-28)', negotiation: { mode: 'auto' }, protocol: '2026-07-28' },
  { name: 'pinned 2026-07-28', negotiation: { mode: { pin: '2026-07-28' } }, protocol: '2026-07-28' },
];

/** An in-memory OAuth client, as a desktop assistant keeps one: it captures the authorization URL. */
export class TestOAuthProvider implements OAuthClientProvider {
  lastAuthorizationUrl: URL | undefined;
  lastState: string | undefined;
  private client: OAuthClientInformationMixed | undefined;
  private savedTokens: OAuthTokens | undefined;
  private verifier = '';
  private discovery: unknown;

  constructor(
    readonly redirectUrl = 'http://127.0.0.1:8976/callback',
    readonly clientName = 'Anchorage test client',
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state(): string {
    this.lastState = randomUUID();
    return this.lastState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.savedTokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.savedTokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.lastAuthorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: unknown) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery as never;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.savedTokens = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = '';
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }
}

/** A browser's cookie jar, as far as our pages need one. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      this.cookies.set(name!.trim(), value.join('='));
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** GET or POST like a browser that does not follow redirects. */
export async function browse(jar: CookieJar, url: string | URL, form?: Record<string, string>): Promise<Response> {
  const response = await fetch(url, {
    method: form ? 'POST' : 'GET',
    headers: { cookie: jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    body: form ? new URLSearchParams(form).toString() : undefined,
    redirect: 'manual',
  });
  jar.store(response);
  return response;
}

/** The fields a form would submit (hidden inputs and checked radios), by the form's action. */
export function formFields(markup: string, action: string): Record<string, string> {
  const document = parseDocument(markup);
  const form = DomUtils.findOne((element) => element.name === 'form' && element.attribs.action === action, document.children);
  if (!form) throw new Error(`no form posting to ${action}`);
  const fields: Record<string, string> = {};
  for (const input of DomUtils.findAll((element) => element.name === 'input', form.children)) {
    const { type, name, value, checked } = input.attribs;
    if (!name || (type === 'radio' && checked === undefined)) continue;
    fields[name] = value ?? '';
  }
  return fields;
}

/** Signs in through the real sign-in page (scraping its CSRF token), arriving back at `next`. */
export async function signIn(base: string, jar: CookieJar, signInLocation: string, email: string): Promise<string> {
  const signInPage = await browse(jar, new URL(signInLocation, base));
  expect(signInPage.status).toBe(200);
  const fields = formFields(await signInPage.text(), '/app/sign-in');
  const signedIn = await browse(jar, new URL('/app/sign-in', base), { ...fields, email, password });
  expect(signedIn.status).toBe(303);
  return signedIn.headers.get('location')!;
}

/**
 * The user's part of the authorization: open the URL (sign in first when asked), read the
 * consent page, press Allow (or Deny). Returns the consent page's HTML and where it redirected.
 */
export async function authorizeInBrowser(
  base: string,
  authorizationUrl: URL,
  email: string,
  choice: { decision?: 'allow' | 'deny'; access?: 'read' | 'write'; jar?: CookieJar } = {},
): Promise<{ consent: string; consentHeaders: Headers; callback: URL; status: number }> {
  const jar = choice.jar ?? new CookieJar();
  let response = await browse(jar, authorizationUrl);
  if (response.status === 302 && response.headers.get('location')!.startsWith('/app/sign-in')) {
    const next = await signIn(base, jar, response.headers.get('location')!, email);
    response = await browse(jar, new URL(next, base));
  }
  expect(response.status).toBe(200);
  const consent = await response.text();
  const fields = formFields(consent, '/oauth/authorize');
  if (choice.access) fields.access = choice.access;
  const answer = await browse(jar, new URL('/oauth/authorize', base), { ...fields, decision: choice.decision ?? 'allow' });
  return { consent, consentHeaders: response.headers, callback: new URL(answer.headers.get('location')!), status: answer.status };
}

/**
 * The whole first connection of an assistant: 401 → discovery → registration → the user signs
 * in and allows (at `base`) → code exchange. Returns a connected client (a new transport, as after a
 * restart), to `base`/mcp or to `mcpUrl` (the MCP_PORT listener).
 */
export async function connectWithOAuth(
  base: string,
  email: string,
  negotiation: NegotiationMode,
  options: { provider?: TestOAuthProvider; access?: 'read' | 'write'; fetch?: typeof fetch; mcpUrl?: URL } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; provider: TestOAuthProvider; consent: string }> {
  const provider = options.provider ?? new TestOAuthProvider();
  const mcpUrl = options.mcpUrl ?? new URL('/mcp', base);
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: options.fetch });
  await expect(new Client({ name: 'anchorage-test', version: '1.0.0' }, { versionNegotiation: negotiation }).connect(first)).rejects.toBeInstanceOf(
    UnauthorizedError,
  );
  const { consent, callback } = await authorizeInBrowser(base, provider.lastAuthorizationUrl!, email, { access: options.access });
  expect(callback.searchParams.get('state')).toBe(provider.lastState);
  expect(callback.searchParams.get('iss')).toBe(base);
  await first.finishAuth(callback.searchParams);
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: options.fetch });
  const client = new Client({ name: 'anchorage-test', version: '1.0.0' }, { versionNegotiation: negotiation });
  await client.connect(transport);
  return { client, transport, provider, consent };
}

/** PKCE by hand: a verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface ManualClient {
  clientId: string;
  redirectUri: string;
}

/** Registers a client by hand (RFC 7591), as a client library would. */
export async function registerClient(base: string, metadata: Record<string, unknown> = {}): Promise<ManualClient> {
  const redirectUri = 'http://127.0.0.1:7777/callback';
  const response = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Manual client', redirect_uris: [redirectUri], ...metadata }),
  });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { client_id: string; redirect_uris: string[] };
  return { clientId: body.client_id, redirectUri: body.redirect_uris[0]! };
}

/** An authorization URL with every parameter a conforming client sends. */
export function authorizationUrl(base: string, client: ManualClient, challenge: string, extra: Record<string, string> = {}): URL {
  const url = new URL('/oauth/authorize', base);
  const params = {
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'state-123',
    scope: 'articles:read articles:write',
    resource: `${base}/mcp`,
    ...extra,
  };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url;
}

/** POSTs a form to the token or revocation endpoint. */
export async function postForm(base: string, path: string, form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** The whole code flow by hand: a code, then tokens; everything needed to misuse them. */
export async function manualGrant(
  base: string,
  email: string,
  options: { access?: 'read' | 'write'; jar?: CookieJar } = {},
): Promise<{ client: ManualClient; code: string; verifier: string; tokens: Record<string, unknown> }> {
  const client = await registerClient(base);
  const { verifier, challenge } = pkce();
  const { callback } = await authorizeInBrowser(base, authorizationUrl(base, client, challenge), email, options);
  const code = callback.searchParams.get('code')!;
  const exchanged = await postForm(base, '/oauth/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: client.redirectUri,
    client_id: client.clientId,
    resource: `${base}/mcp`,
  });
  expect(exchanged.status).toBe(200);
  return { client, code, verifier, tokens: exchanged.body };
}

/** One raw JSON-RPC POST to /mcp (2025 style: no envelope). */
export async function rawMcp(
  base: string,
  token: string | undefined,
  message: Record<string, unknown> = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...headers,
    },
    body: JSON.stringify(message),
  });
}

/** A served harness, a client's redirect URI that records what reaches it, and Chromium to click through. */
export interface BrowserOAuth {
  harness: Harness;
  browser: Browser;
  /** The origin of the redirect URI: register `${callbackBase}/callback`. */
  callbackBase: string;
  /** Every request to /callback, in order. */
  received: URL[];
  close(): Promise<void>;
}

/** The set-up, started before the enclosing describe block's tests and closed after them: read it inside a test. */
export function useBrowserOAuth(): BrowserOAuth {
  const setup = {} as BrowserOAuth;
  beforeAll(async () => {
    Object.assign(setup, await startBrowserOAuth());
  });
  afterAll(async () => {
    await setup.close?.();
  });
  return setup;
}

async function startBrowserOAuth(): Promise<BrowserOAuth> {
  const harness = await startHarness({ listen: true });
  const received: URL[] = [];
  const callbackServer = createServer((request, response) => {
    // Only the redirect counts: the browser may also ask this origin for /favicon.ico.
    const url = new URL(request.url!, callbackBase);
    if (url.pathname === '/callback') received.push(url);
    response.end('<p>You can close this window.</p>');
  });
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
  const callbackBase = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}`;
  const closeServers = async () => {
    await new Promise((resolve) => callbackServer.close(resolve));
    await harness.close();
  };
  const browser = await launchChromium().catch(async (error: unknown) => {
    await closeServers();
    throw error;
  });
  return {
    harness,
    browser,
    callbackBase,
    received,
    async close() {
      await browser.close();
      await closeServers();
    },
  };
}
