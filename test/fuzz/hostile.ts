import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { errorCatalogue } from '../../src/core/errors.js';
import { readScope, writeScope } from '../../src/services/oauth/index.js';
import { seedSite, type SeededSite } from '../helpers/fixtures.js';
import { createCustomer, type Harness, startHarness } from '../helpers/harness.js';

/**
 * Shared pieces of the fuzz suite: the routes of the running app, hostile values, credentials
 * that stay valid while the fuzzer revokes and signs out, and the soundness check of a response.
 */

/** Runs per property: FUZZ_RUNS scales them (CI keeps the default; a long local hunt raises it). */
export const runs = (base: number): number => Math.max(1, Math.round(base * Number(process.env.FUZZ_RUNS ?? '1')));

/** fast-check parameters: a fixed seed from FUZZ_SEED reproduces a run; otherwise fast-check prints its seed on failure. */
export const fuzzParameters = (numRuns: number): fc.Parameters<unknown> => ({
  numRuns: runs(numRuns),
  ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}),
});

/** Room for a property's runs on a busy CI machine (vitest's default of 30 s is for one example). */
export const fuzzTimeoutMs = 120_000;

/** A hang detector, not a speed assertion: no request should take anywhere near this long. */
export const hangMs = 5_000;

export interface Route {
  method: string;
  /** Fastify's pattern: `:name` parameters and `*` wildcards. */
  path: string;
}

/** Every route of the running app, read from Fastify's route tree (so new routes are fuzzed too). */
export function routesOf(app: FastifyInstance): Route[] {
  const stack: string[] = [];
  const routes: Route[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    for (const method of match[3]?.split(', ') ?? []) routes.push({ method, path: stack.join('') });
  }
  return routes;
}

/** Percent-encodes every byte outside the unreserved set; a lone surrogate becomes its (invalid) UTF-8 bytes. */
export function encodeAll(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (/^[A-Za-z0-9\-._~]$/.test(char)) out += char;
    else if (code >= 0xd800 && code <= 0xdfff) out += `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase();
    else for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).padStart(2, '0').toUpperCase()}`;
  }
  return out;
}

/** Characters that broke services before: controls, line and paragraph separators, bidi, BOM, lone surrogates, non-BMP. */
const oddUnits = [
  '\u0000', '\u0001', '\t', '\n', '\r', '\u000b', '\u001b', '\u007f', '\u0085', '\u00a0', '\u00ad', '\u2028', '\u2029',
  '\u202a', '\u202e', '\u2066', '\u2069', '\u200b', '\u200d', '\ufeff', '\ufffd', '\uffff', '\ud800', '\udbff', '\udc00', '\udfff',
  '😀', '𝕏', '👩‍👩‍👧', '\u0301', 'İ', 'ß', 'ﬀ', '%', '\\', '/', '.', '..', '?', '#', '&', '=', ';', ',', '+', ' ', '"', "'",
  '<', '>', '`', '{', '}', '[', ']', '|', '^', '$', '*', ':', '@', 'a', '0', '1', '-', '_',
];

const edgeStrings = [
  '', ' ', '0', '-0', '+1', '01', '1e3', '1E3', '1.0', '1.5', '-1', '0x10', '0b1', '1_000', 'NaN', 'Infinity', '-Infinity',
  '9999999999999999999999', '9007199254740993', '2147483648', '-9223372036854775809', '1e309', '9'.repeat(400), '１', '٣',
  'null', 'undefined', 'true', 'false', '[]', '{}', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty',
  '../../etc/passwd', '..\\..\\windows', 'javascript:alert(1)', 'data:text/html,x', '//evil.example', '/\\evil.example',
  'http://evil.example', '\\\\evil.example', '<script>alert(1)</script>', "' OR 1=1 --", '%00', '%', '%zz', '%ED%A0%80',
  'a'.repeat(5_000), '😀'.repeat(2_000), '\u0000'.repeat(50), '\ud800\ud800', '\u202e\u2066evil', '2026-02-30', '2026-13-01',
  '0000-00-00', '9999-12-31', '-271821-04-20', '2026-11-15T12:00:00Z', 'draft', 'published', 'archived', 'exact', 'local',
];

/** A hostile string: an edge case, odd units strung together, or anything fast-check makes up. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...edgeStrings), weight: 4 },
  { arbitrary: fc.string({ unit: fc.constantFrom(...oddUnits), maxLength: 24 }), weight: 4 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 24 }), weight: 2 },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
);

/** Strings an HTTP header value can carry on the wire (Node reads the bytes as latin1). */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'a'.repeat(8_000), '\t', 'null', '*', ',', ';', '=', '"', '\u00c3\u00a9\u00f0\u009f\u0098\u0080', '\u00ff\u00fe', '0', '-1', '1e3', '9'.repeat(40)),
  fc.string({ unit: fc.constantFrom(...'\t !"#%&\'()*+,-./0123456789:;<=>?@AZ[\\]^_`az{|}~\u0080\u00a0\u00ff'.split('')), maxLength: 40 }),
);

/** Path ids: real ones (so the code behind the lookup runs), the forms integers must refuse, and junk. */
export const idOf = (valid: readonly number[]): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...valid.map(String)), weight: 10 },
    { arbitrary: fc.constantFrom('0', '-0', '-1', '1e3', '+1', '01', '1.0', '0x1', '9999999999999999999999', '2147483648', ' 1', '1 ', '１'), weight: 3 },
    { arbitrary: hostileString, weight: 2 },
  );

/** A path segment as it travels: encoded, or one of the raw forms that broke routers and static handlers. */
export const segmentOf = (value: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: value.map(encodeAll), weight: 4 },
    {
      arbitrary: fc.constantFrom(
        '%2e%2e', '%2E%2E%2F%2E%2E%2Fetc%2Fpasswd', '..%5c..%5c', '..%2f', '.%2e', '%2e', '..', '.', '', '%00', '%', '%zz', '%E2%80%A8',
        '%ED%A0%80', '%C0%AE%C0%AE', '%F0%9F%98%80', '%252e%252e', ';a=b', '%3B', 'a%2Fb', '%5C', '\\..\\', '~', '%0A', '%0D%0A', '%09',
        '1e3', '-0', '9999999999999999999999', 'x'.repeat(3_000),
      ),
      weight: 2,
    },
  );

/** A URL path for a route pattern, its parameters and wildcards filled with hostile segments. */
export const pathFor = (route: Route, ids: readonly number[]): fc.Arbitrary<string> => {
  const holes = route.path.match(/:[A-Za-z_]+|\*/g) ?? [];
  return fc
    .tuple(
      fc.array(segmentOf(idOf(ids)), { minLength: holes.length, maxLength: holes.length }),
      fc.oneof(
        { arbitrary: fc.constant(''), weight: 8 },
        { arbitrary: fc.constantFrom('/', '//', '/..', '/%2e%2e', '/.', '/x', '%00', '/%2e%2e%2f%2e%2e%2fpackage.json', '.json', ';x'), weight: 3 },
      ),
    )
    .map(([values, suffix]) => {
      let index = 0;
      return route.path.replace(/:[A-Za-z_]+|\*/g, () => values[index++]!) + suffix;
    });
};

/** Query parameters every operation and page takes, plus the keys that trip parsers. */
const queryKeys = [
  'page', 'per_page', 'status', 'status[]', 'status[0]', 'from', 'to', 'period', 'sort', 'order', 'q', 'search', 'category',
  'anchor_type', 'account', 'website', 'dry_run', 'month', 'next', 'a', 'b', 'revision', 'id', 'format', 'response_type',
  'client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method', 'state', 'scope', 'resource', 'error',
  '__proto__', 'constructor', '__proto__[x]', 'a[b][c]', '', '[]', 'x'.repeat(300),
];

/** A query string: repeated and bracketed keys, huge numbers, empty values, encoded and raw. */
export const queryString: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(fc.oneof({ arbitrary: fc.constantFrom(...queryKeys), weight: 5 }, { arbitrary: hostileString, weight: 1 }), hostileString, fc.boolean()),
    { maxLength: 6 },
  )
  .chain((pairs) =>
    fc.constantFrom('&', '&&', ';').map((separator) =>
      pairs.map(([key, value, bare]) => (bare && value === '' ? encodeAll(key) : `${encodeAll(key)}=${encodeAll(value)}`)).join(separator),
    ),
  );

/** Content types a client may send, well-formed or not. */
export const contentType = fc.constantFrom(
  'application/json', 'application/json; charset=utf-8', 'application/json; charset=utf-16', 'application/json;;', 'APPLICATION/JSON',
  'application/merge-patch+json', 'application/x-www-form-urlencoded', 'multipart/form-data', 'multipart/form-data; boundary=',
  'multipart/form-data; boundary=x', 'text/plain', 'text/html', 'application/xml', '*/*', '', ';', 'application/json, text/html',
  'application/octet-stream', 'image/png',
);

/** Credentials for one request: what the caller holds (valid or not) and how it sends it. */
export interface Credentials {
  apiKey(): Promise<string>;
  staffKey(): Promise<string>;
  session(): Promise<{ cookie: string; csrf: string }>;
  mcpToken(): Promise<string>;
  /** Called after a request that may have signed out, revoked or rotated what it used. */
  mayHaveSpent(): void;
}

/** Headers of one request as generated: how the caller authenticates, and hostile values for everything the service reads. */
export interface HeaderSpec {
  auth: 'none' | 'key' | 'staff' | 'session' | 'mcp' | 'hostile' | 'x-api-key' | 'key+session' | 'basic' | 'two';
  authValue: string;
  rest: Record<string, string | undefined>;
}

export const headersArb: fc.Arbitrary<HeaderSpec> = fc.record({
  auth: fc.constantFrom('none', 'key', 'staff', 'session', 'mcp', 'hostile', 'x-api-key', 'key+session', 'basic', 'two'),
  authValue: headerValue,
  rest: fc.record(
    {
      cookie: fc.oneof(headerValue.map((v) => `anchorage_session=${v}`), headerValue),
      'content-type': contentType,
      'if-match': fc.oneof(headerValue, fc.constantFrom('*', 'W/"1"', '"1"', '"1", "2"')),
      'if-none-match': headerValue,
      'if-modified-since': fc.oneof(headerValue, fc.constantFrom('Thu, 01 Jan 1970 00:00:00 GMT', 'Fri, 31 Dec 9999 23:59:59 GMT')),
      'idempotency-key': headerValue,
      accept: fc.oneof(headerValue, fc.constantFrom('text/event-stream', 'application/json, text/event-stream', 'text/csv', '*/*;q=abc')),
      origin: fc.oneof(headerValue, fc.constantFrom('null', 'http://evil.example', 'http://localhost:3999', 'http://127.0.0.1')),
      host: fc.oneof(headerValue, fc.constantFrom('[::1]', 'localhost:99999', 'evil.example', '[', 'a b')),
      'x-forwarded-for': fc.oneof(headerValue, fc.constantFrom('1.1.1.1, ::ffff:1.2.3.4', 'unknown', '999.999.999.999', '[::1]:80')),
      'x-forwarded-proto': headerValue,
      'x-forwarded-host': headerValue,
      'mcp-protocol-version': fc.oneof(headerValue, fc.constantFrom('2025-06-18', '2025-11-25', '2026-07-28')),
      'mcp-method': headerValue,
      'mcp-session-id': headerValue,
      'content-length': fc.constantFrom('0', '1', '999999', '-1', 'abc', '1e3'),
      range: fc.oneof(headerValue, fc.constantFrom('bytes=0-0', 'bytes=-1', 'bytes=5-1', 'bytes=0-1,2-3,4-5', 'bytes=999999999999-')),
      'accept-encoding': headerValue,
      'accept-language': headerValue,
      'user-agent': headerValue,
      referer: headerValue,
    },
    { requiredKeys: [] },
  ),
});

/** The headers of a spec, with real credentials fetched where it asks for them. */
export async function headersOf(spec: HeaderSpec, credentials: Credentials): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(spec.rest)) if (value !== undefined) headers[name] = value;
  const session = async () => `anchorage_session=${(await credentials.session()).cookie}`;
  switch (spec.auth) {
    case 'key': headers.authorization = `Bearer ${await credentials.apiKey()}`; break;
    case 'staff': headers.authorization = `Bearer ${await credentials.staffKey()}`; break;
    case 'mcp': headers.authorization = `Bearer ${await credentials.mcpToken()}`; break;
    case 'session': headers.cookie = `${await session()}${headers.cookie ? `; ${headers.cookie}` : ''}`; break;
    case 'hostile': headers.authorization = spec.authValue; break;
    case 'x-api-key': headers['x-api-key'] = `${await credentials.apiKey()}${spec.authValue}`; break;
    case 'key+session':
      headers.authorization = `bearer  ${await credentials.apiKey()} `;
      headers.cookie = await session();
      break;
    case 'basic': headers.authorization = `Basic ${Buffer.from(`${spec.authValue}:x`, 'latin1').toString('base64')}`; break;
    case 'two': headers.authorization = `Bearer ${await credentials.apiKey()}, Bearer ${spec.authValue}`; break;
    case 'none': break;
  }
  return headers;
}

/** A request body: none, hostile JSON text, a form, or bytes. */
export const bodyArb: fc.Arbitrary<string | Buffer | undefined> = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 3 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)), weight: 2 },
  { arbitrary: hostileString, weight: 1 },
  { arbitrary: queryString, weight: 1 },
  { arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)), weight: 1 },
);

/** The error codes of decisions.md (status fixed by the catalogue). */
export const catalogueCodes = Object.keys(errorCatalogue).filter((code) => code !== 'internal_error');

/** What one fuzzed request was, for the failure message. */
export interface Sent {
  method: string;
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer;
}

const describeSent = (sent: Sent): string =>
  JSON.stringify({ ...sent, payload: typeof sent.payload === 'string' ? sent.payload.slice(0, 500) : sent.payload?.subarray(0, 200).toString('hex') });

/** Sends a request through `app.inject`; a request that does not complete within the hang bound fails. */
export async function send(app: FastifyInstance, sent: Sent, extra: Partial<InjectOptions> = {}): Promise<LightMyRequestResponse | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: no answer within ${hangMs} ms to ${describeSent(sent)}`)), hangMs);
  });
  try {
    const response = await Promise.race([
      app
        .inject({ method: sent.method as InjectOptions['method'], url: sent.url, headers: sent.headers, payload: sent.payload, ...extra })
        .catch((error: Error) => {
          // light-my-request refuses some requests before the app sees them (no server involved): not a finding.
          if (/Invalid|must be|not a valid|ERR_/i.test(`${error.message} ${(error as { code?: string }).code}`) && !/hang/.test(error.message)) return undefined;
          throw error;
        }),
      hang,
    ]);
    if (hunting) statuses.set(response?.statusCode ?? 0, (statuses.get(response?.statusCode ?? 0) ?? 0) + 1);
    return response;
  } finally {
    clearTimeout(timer);
  }
}

/** Which contract a path answers under. */
export function surfaceOf(url: string): 'api' | 'mcp' | 'oauth' | 'other' {
  const path = url.split('?')[0]!;
  if (/^\/+api\/v1(\/|$)/.test(path) && !/^\/+api\/v1\/openapi\.json$/.test(path)) return 'api';
  if (/^\/+mcp(\/|$)/.test(path)) return 'mcp';
  if (/^\/+oauth\/(token|register|revoke)$/.test(path)) return 'oauth';
  return 'other';
}

/**
 * FUZZ_HUNT=1 collects every finding of a run instead of stopping (and shrinking) at the first:
 * for hunting bugs in bulk. CI leaves it unset, so a finding fails with fast-check's seed and path.
 */
export const hunting = process.env.FUZZ_HUNT === '1';
export const findings = new Map<string, string>();
/** While hunting: how many answers of each status a property got (0: refused by inject itself), to see how deep it reached. */
const statuses = new Map<number, number>();

/** Runs a check; while hunting, keeps its first failure per `kind` (say, method and route) and goes on. */
export function check(kind: string, run: () => void): void {
  if (!hunting) return run();
  try {
    run();
  } catch (error) {
    const message = (error as Error).message;
    const key = `${kind} ${/^\S+/.exec(message)?.[0] ?? ''}`;
    if (!findings.has(key)) findings.set(key, message);
  }
}

/** While hunting, prints what the run found and fails if it found anything. */
export function reportFindings(): void {
  if (!hunting) return;
  const found = [...findings];
  findings.clear();
  console.log(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
  statuses.clear();
  for (const [key, message] of found) console.log(`FINDING ${key}\n${message}\n`);
  expect(found.map(([key]) => key)).toEqual([]);
}

/** The checks every answer passes: no 5xx, and error bodies of the API and MCP in the catalogue's shape. */
export function expectSound(sent: Sent, response: LightMyRequestResponse | undefined): void {
  if (!response) return;
  const context = `${response.statusCode} ${response.body.slice(0, 400)}\nfor ${describeSent(sent)}`;
  expect(response.statusCode, context).toBeLessThan(500);
  expect(response.body, context).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)|node_modules\//);
  const surface = surfaceOf(sent.url);
  const json = /json/.test(String(response.headers['content-type'] ?? ''));
  if (response.statusCode < 400 || sent.method === 'HEAD') return;
  if (surface === 'api' || surface === 'mcp') {
    expect(json, context).toBe(true);
    const body = JSON.parse(response.body) as Record<string, unknown>;
    expect(body, context).not.toHaveProperty('statusCode');
    expect(body, context).not.toHaveProperty('code');
    if (surface === 'mcp' && body.jsonrpc === '2.0') {
      // A JSON-RPC protocol error (the transport's own answer) is the other shape /mcp may give.
      expect(body.error, context).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
      return;
    }
    expect(catalogueCodes, context).toContain(body.error);
    expect(typeof body.message, context).toBe('string');
    expect(errorCatalogue[body.error as keyof typeof errorCatalogue], context).toBe(response.statusCode);
  }
  if (surface === 'oauth' && json) {
    const body = JSON.parse(response.body) as Record<string, unknown>;
    expect(typeof body.error, context).toBe('string');
    expect(body, context).not.toHaveProperty('statusCode');
  }
}

/** A tools/call answer: an error result carries an Error body of the catalogue, never internal_error. */
export function expectSoundToolResult(sent: Sent, response: LightMyRequestResponse | undefined): void {
  expectSound(sent, response);
  if (!response || response.statusCode !== 200 || !/json/.test(String(response.headers['content-type']))) return;
  const messages = ([] as unknown[]).concat(JSON.parse(response.body)) as { result?: { isError?: boolean; content?: { text?: string }[] } }[];
  for (const message of messages) {
    if (!message?.result?.isError) continue;
    const text = message.result.content?.[0]?.text ?? '';
    const context = `${text.slice(0, 400)}\nfor ${describeSent(sent)}`;
    let body: { error?: string; message?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // The SDK's own refusals (unknown tool, schema) are plain text: fine, as long as they are not internal errors.
      expect(text, context).not.toMatch(/internal/i);
      continue;
    }
    expect(catalogueCodes, context).toContain(body.error);
    expect(typeof body.message, context).toBe('string');
  }
}

/** The world the fuzzer attacks: two customers with data, a staff user, and credentials that renew themselves. */
export interface World {
  harness: Harness;
  app: FastifyInstance;
  customer: Awaited<ReturnType<typeof createCustomer>>;
  other: Awaited<ReturnType<typeof createCustomer>>;
  staff: Awaited<ReturnType<typeof createCustomer>>;
  site: SeededSite;
  otherSite: SeededSite;
  /** Ids worth trying in paths and bodies: own, foreign and unknown. */
  ids: number[];
  credentials: Credentials;
}

/** An access token for /mcp, issued through the authorization server's service (the browser part is tested elsewhere). */
export async function issueMcpToken(harness: Harness, userId: number, scope = `${readScope} ${writeScope}`): Promise<string> {
  const { services } = harness;
  const redirectUri = 'http://127.0.0.1:7777/callback';
  const client = await services.oauth.register({ client_name: 'Fuzz client', redirect_uris: [redirectUri] }, async () => undefined);
  const verifier = randomBytes(32).toString('base64url');
  const code = await services.oauth.issueCode({
    clientId: client.client_id,
    userId,
    redirectUri,
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    resource: harness.settings.mcpPublicUrl,
    scope,
  });
  const tokens = await services.oauth.exchangeCode({ code, clientId: client.client_id, redirectUri, codeVerifier: verifier, resource: undefined });
  return tokens.access_token;
}

const protectedLink = '<a href="https://partner.example/guide" data-service-protected="backlink">partner guide</a>';

/** Uses of one key or token before a new one is made: stays under the 60-per-minute request limit. */
const usesPerCredential = 50;

export async function startWorld(): Promise<World> {
  const harness = await startHarness({ redis: true, env: { ALLOW_SIGNUP: 'true', TRUST_PROXY: 'true' } });
  const { services, app } = harness;
  const customer = await createCustomer(services);
  const other = await createCustomer(services);
  const staff = await createCustomer(services, { staff: true });
  const article = (title: string, status: 'draft' | 'published') => ({
    status,
    title,
    url: `https://example.test/${title}`,
    published_at: status === 'published' ? '2026-11-02T09:00:00Z' : null,
    body: `<p>${title} intro.</p><p>Read the ${protectedLink} today.</p>`,
  });
  const site = await seedSite(services, customer.email, {
    name: 'Fuzzed site',
    website_url: 'https://fuzzed.example',
    articles: [article('one', 'published'), article('two', 'draft'), article('three', 'published')],
    backlinks: [
      { category: 'industry', acquired_at: '2026-11-03T10:00:00Z', source_domain: 'news.example', anchor_type: 'exact', status: 'live' },
      { category: 'local', acquired_at: '2026-10-03T10:00:00Z', source_domain: 'city.example' },
    ],
  });
  const otherSite = await seedSite(services, other.email, { name: 'Not yours', articles: [article('theirs', 'published')] });

  const rotating = (make: () => Promise<string>) => {
    let current: Promise<string> | undefined;
    let uses = 0;
    return {
      get: () => {
        if (!current || uses >= usesPerCredential) {
          current = make();
          uses = 0;
        }
        uses += 1;
        return current;
      },
      spend: () => {
        current = undefined;
      },
    };
  };
  /** A new key for the user; the one before is revoked, so the account stays under its key limit. */
  const freshKey = (user: { userId: number; accountId: number }) => {
    let previous: number | undefined;
    return async () => {
      if (previous !== undefined) await services.keys.revoke(previous);
      // The fuzzed UI creates keys too: when the account is full, clear it first.
      const create = () => services.keys.create(user.userId, { name: `fuzz ${randomBytes(2).toString('hex')}` });
      const created = await create().catch(async () => {
        for (const key of await services.keys.list(user.accountId)) await services.keys.revoke(key.id);
        return create();
      });
      previous = created.id;
      return created.key;
    };
  };
  const apiKey = rotating(freshKey(customer));
  const staffKey = rotating(freshKey(staff));
  const mcpToken = rotating(() => issueMcpToken(harness, customer.userId));
  let session: Promise<{ cookie: string; csrf: string }> | undefined;
  const credentials: Credentials = {
    apiKey: apiKey.get,
    staffKey: staffKey.get,
    mcpToken: mcpToken.get,
    session: () =>
      (session ??= services.sessions.start(customer.userId).then((started) => ({ cookie: started.id, csrf: started.csrfToken }))),
    mayHaveSpent: () => {
      // Fuzzed sign-outs, revocations and sign-ins may have ended any of these: start afresh.
      apiKey.spend();
      staffKey.spend();
      mcpToken.spend();
      session = undefined;
    },
  };
  const ids = [...site.articleIds, ...site.backlinkIds, site.siteId, otherSite.siteId, ...otherSite.articleIds, 0, 1, 2, 999_999];
  return { harness, app, customer, other, staff, site, otherSite, ids, credentials };
}
