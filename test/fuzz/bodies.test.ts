import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tools } from '../../src/operations/index.js';
import {
  check,
  contentType,
  encodeAll,
  expectSound,
  expectSoundToolResult,
  fuzzParameters,
  fuzzTimeoutMs,
  headerValue,
  hostileString,
  reportFindings,
  routesOf,
  send,
  type Sent,
  startWorld,
  type World,
} from './hostile.js';

/**
 * Bodies, signed in: hostile JSON for the REST writes with a valid API key, hostile forms for
 * every UI POST with a valid session and CSRF token, hostile JSON-RPC for /mcp with a valid
 * access token, and hostile parameters for every OAuth endpoint. Never a 5xx or a hang; the API
 * and MCP answer errors (and tool errors) in the catalogue's shape.
 */

const deep = (levels: number, open: string, close: string, leaf = '1') => `${open.repeat(levels)}${leaf}${close.repeat(levels)}`;

/** JSON texts JSON.stringify cannot make: deep nesting, huge numbers, escapes of U+0000 and lone surrogates, prototype keys. */
const hostileJsonTexts = [
  deep(10_000, '[', ']'),
  deep(10_000, '{"a":', '}'),
  deep(10_000, '{"body":', '}', '"x"'),
  `{"replacements":${deep(5_000, '[', ']', '{"find":"a"}')}}`,
  '{"body":1e400}', '{"title":-0}', `{"title":${'9'.repeat(1_000)}}`, '{"replacements":[{"find":"a","all":1e-400}]}',
  '{"__proto__":{"isAdmin":true},"title":"x"}', '{"constructor":{"prototype":{"x":1}},"title":"x"}', '{"title":"a","title":{"b":1}}',
  '{"body":"\\u0000"}', '{"title":"\\ud800"}', '{"body":"<p>\\udfff\\ud800</p>"}', '{"replacements":[{"find":"\\u0000","replace":"\\ud800"}]}',
  '\ufeff{"title":"bom"}', '', ' ', 'null', 'nul', '[', '{', '"\\u00"', '{"title":"x"}garbage', '1', '[]', '"string"', 'true',
  `{"body":"${'a'.repeat(6 * 1024 * 1024)}"}`,
];

const protectedLink = '<a href="https://partner.example/guide" data-service-protected="backlink">partner guide</a>';

/** Pieces of HTML that broke sanitisers: unclosed containers, scripts, bidi controls next to links, deep nesting. */
const htmlPieces = [
  '<svg>', '<math>', '<template>', '<noscript>', '<select>', '<textarea>', '<style>', '<script>alert(1)</script>', '<iframe src=x>',
  '<a href="javascript:alert(1)">x</a>', '<img src=x onerror=alert(1)>', '<!--', '-->', '<![CDATA[', ']]>', '<p>', '</p>', '</a>',
  '\u202e', '\u2066', '\u200b', '&#0;', '&#xD800;', '&nbsp;', '&amp', '<a data-service-protected="backlink" href="https://partner.example/guide">',
  protectedLink, protectedLink, '<div>'.repeat(3_000), '</div>'.repeat(3_000), '<table><tr><td>', '\u0000', '\r\n',
];

/** A JSON value of the wrong type, or a hostile one of the right type. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: hostileString, weight: 4 },
  { arbitrary: fc.constantFrom(null, true, false, 0, -0, -1, 1e308, Number.MAX_SAFE_INTEGER + 2, 0.5, [], {}, [''], { find: 'a' }), weight: 2 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
);

const htmlBody = fc.array(fc.oneof(fc.constantFrom(...htmlPieces), hostileString), { maxLength: 8 }).map((parts) => parts.join(''));

const replacementArb = fc.oneof(
  fc.record({ find: fc.oneof(hostileString, fc.constantFrom('intro', 'partner guide', 'Read the', '<p>', 'today')), replace: fc.oneof(hostileString, htmlBody) }, { requiredKeys: ['find'] }),
  fc.record({ find: anyValue, replace: anyValue, all: anyValue, extra: anyValue }, { requiredKeys: [] }),
);

const writeBody: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc
      .record(
        {
          body: fc.oneof(htmlBody, anyValue),
          title: anyValue,
          meta_description: anyValue,
          reason: anyValue,
          replacements: fc.oneof(fc.array(replacementArb, { maxLength: 5 }), anyValue, fc.constant(Array.from({ length: 51 }, () => ({ find: 'a' })))),
          url: fc.oneof(anyValue, fc.constantFrom('https://img.example/a.png', 'javascript:alert(1)', 'https://x.example/\u0000', 'http://[::1', 'https://a b')),
          image_base64: fc.oneof(anyValue, fc.constantFrom('iVBORw0KGgo=', '====', 'R0lGODlhAQABAAAAACw=')),
          filename: anyValue,
          dry_run: anyValue,
          unknown_field: anyValue,
        },
        { requiredKeys: [] },
      )
      .map((value) => JSON.stringify(value)),
    weight: 6,
  },
  { arbitrary: fc.constantFrom(...hostileJsonTexts), weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)), weight: 1 },
);

/** Near-valid bodies per write: only the fields it takes, the protected link kept, hostile HTML and text around it. */
const nearValid = {
  PUT: fc
    .record({ body: htmlBody.map((html) => `<p>${html}</p><p>${protectedLink}</p>`), title: hostileString, reason: hostileString }, { requiredKeys: ['body'] })
    .map((value) => JSON.stringify(value)),
  PATCH: fc
    .record({ title: hostileString, meta_description: hostileString, replacements: fc.array(replacementArb, { minLength: 1, maxLength: 3 }), reason: hostileString }, { requiredKeys: [] })
    .map((value) => JSON.stringify(value)),
  POST: fc.oneof(hostileString, fc.constantFrom('https://img.example/a.png', 'http://img.example/%00.png')).map((url) => JSON.stringify({ url })),
};

const multipartBodies = (boundary: string) => [
  `--${boundary}\r\nContent-Disposition: form-data; name="url"\r\n\r\nhttps://img.example/a.png\r\n--${boundary}--\r\n`,
  `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\r\n--${boundary}--\r\n`,
  `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\nGIF89a\r\n--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="b.png"\r\n\r\nGIF89a\r\n--${boundary}--\r\n`,
  `--${boundary}\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\nx\r\n--${boundary}--\r\n`,
  `--${boundary}\r\nContent-Disposition: form-data; name="url"\r\n\r\nhttps://img.example/a.png`,
  `--${boundary}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${boundary}--\r\n`,
  `--wrong\r\nContent-Disposition: form-data; name="url"\r\n\r\nx\r\n--wrong--\r\n`,
  '',
];

describe('fuzz: hostile bodies, signed in', () => {
  let world: World;

  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(async () => {
    await world?.harness.close();
  });

  /** After a day's allowance is spent, the next day starts (with fresh credentials: tokens live an hour). */
  const nextDayIfSpent = (status: number | undefined, body: string | undefined) => {
    if (status === 429 && body?.includes('edit_limit_exceeded')) {
      world.harness.clock.set(new Date(world.harness.clock.now().getTime() + 86_400_000).toISOString());
      world.credentials.mayHaveSpent();
    }
  };

  it('REST writes: hostile JSON and multipart bodies with a valid API key', async () => {
    const { app, credentials, site, otherSite } = world;
    const articleIds = [...site.articleIds, ...otherSite.articleIds];
    const request = fc.record({
      id: fc.oneof({ arbitrary: fc.constantFrom(...articleIds.map(String)), weight: 6 }, { arbitrary: fc.constantFrom('1e3', '-0', '0', '9999999999999999999999'), weight: 1 }),
      target: fc.constantFrom('PUT', 'PATCH', 'PATCH', 'POST image', 'POST image multipart'),
      dryRun: fc.option(fc.constantFrom('true', 'false', '1', '', 'TRUE'), { nil: undefined }),
      ifMatch: fc.option(fc.oneof(headerValue, fc.constantFrom('*', 'current', 'current')), { nil: undefined, freq: 2 }),
      idempotencyKey: fc.option(fc.oneof({ arbitrary: fc.uuid(), weight: 3 }, { arbitrary: headerValue, weight: 1 }, { arbitrary: fc.constant('same-key'), weight: 1 }), {
        nil: undefined,
        freq: 2,
      }),
      type: fc.oneof({ arbitrary: fc.constant('application/json'), weight: 6 }, { arbitrary: contentType, weight: 1 }),
      body: writeBody,
      near: fc.record({ use: fc.boolean(), PUT: nearValid.PUT, PATCH: nearValid.PATCH, POST: nearValid.POST }),
      multipart: fc.nat({ max: 7 }),
      boundary: fc.constantFrom('xYz', 'a'.repeat(80), '', '"q"'),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ id, target, dryRun, ifMatch, idempotencyKey, type, body, near, multipart, boundary }) => {
        const key = await credentials.apiKey();
        const path = `/api/v1/articles/${id}${target.startsWith('POST') ? '/featured-image' : ''}${dryRun === undefined ? '' : `?dry_run=${dryRun}`}`;
        const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': type };
        if (ifMatch === 'current') {
          const current = await app.inject({ method: 'GET', url: `/api/v1/articles/${id}`, headers: { authorization: `Bearer ${key}` } });
          headers['if-match'] = String(current.headers.etag ?? '"0"');
        } else if (ifMatch !== undefined) headers['if-match'] = ifMatch;
        if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
        const method = target.split(' ')[0] as 'PUT' | 'PATCH' | 'POST';
        let payload = near.use ? near[method] : body;
        if (target === 'POST image multipart') {
          headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
          payload = multipartBodies(boundary)[multipart]!;
        }
        const sent: Sent = { method, url: path, headers, payload };
        const response = await send(app, sent);
        nextDayIfSpent(response?.statusCode, response?.body);
        check(`${target} ${response?.statusCode}`, () => expectSound(sent, response));
      }),
      fuzzParameters(250),
    );
    reportFindings();
  }, fuzzTimeoutMs);

  it('UI forms: every POST of the UI and the consent page, with a valid session and CSRF token and without', async () => {
    const { app, credentials, site, ids } = world;
    const posts = routesOf(app).filter((r) => r.method === 'POST' && (r.path.startsWith('/app') || r.path === '/oauth/authorize'));
    expect(posts.map((r) => r.path)).toEqual(expect.arrayContaining(['/app/sign-in', '/app/sign-up', '/app/connect/keys', '/app/articles/:id', '/oauth/authorize']));
    const fieldNames = [
      '_csrf', 'email', 'password', 'next', 'account', 'name', 'read_only', 'title', 'body', 'meta_description', 'etag', 'reason', 'decision',
      'access', 'client_id', 'redirect_uri', 'response_type', 'code_challenge', 'code_challenge_method', 'state', 'scope', 'resource',
    ];
    const request = fc.record({
      route: fc.constantFrom(...posts),
      ids: fc.array(fc.oneof(fc.constantFrom(...[...site.articleIds, ...ids].map(String)), fc.constantFrom('1e3', '-0', '9999999999999999999999', '%2e%2e', 'x')), { minLength: 2, maxLength: 2 }),
      csrf: fc.constantFrom('valid', 'valid', 'valid', 'missing', 'wrong', 'repeated'),
      signedIn: fc.boolean(),
      fields: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...fieldNames), hostileString), fc.oneof(hostileString, htmlBody, fc.constantFrom('allow', 'deny', 'write', 'read', 'on', 'current'))), { maxLength: 8 }),
      encoding: fc.constantFrom('form', 'form', 'form', 'json', 'none', 'multipart'),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ route, ids: pathIds, csrf, signedIn, fields, encoding }) => {
        const session = await credentials.session();
        const form: [string, string][] = [];
        if (csrf === 'valid' || csrf === 'repeated') form.push(['_csrf', session.csrf]);
        if (csrf === 'repeated') form.push(['_csrf', 'other']);
        if (csrf === 'wrong') form.push(['_csrf', 'x'.repeat(32)]);
        for (const [name, value] of fields) form.push([name, value === 'current' ? session.csrf : value]);
        let index = 0;
        const url = route.path.replace(/:[A-Za-z_]+/g, () => encodeAll(pathIds[index++]!));
        const headers: Record<string, string> = signedIn ? { cookie: `anchorage_session=${session.cookie}` } : {};
        let payload: string | undefined;
        if (encoding === 'form') {
          headers['content-type'] = 'application/x-www-form-urlencoded';
          payload = form.map(([n, v]) => `${encodeAll(n)}=${encodeAll(v)}`).join('&');
        } else if (encoding === 'json') {
          headers['content-type'] = 'application/json';
          payload = JSON.stringify(Object.fromEntries(form));
        } else if (encoding === 'multipart') {
          headers['content-type'] = 'multipart/form-data; boundary=b';
          payload = `${form.map(([n, v]) => `--b\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`).join('')}--b--\r\n`;
        }
        const sent: Sent = { method: 'POST', url, headers, payload };
        const response = await send(app, sent);
        // Sign-in, sign-out, revocations and key changes may end the credentials in use.
        credentials.mayHaveSpent();
        check(`POST ${route.path} ${response?.statusCode}`, () => expectSound(sent, response));
      }),
      fuzzParameters(250),
    );
    reportFindings();
  }, fuzzTimeoutMs);

  it('MCP: hostile JSON-RPC messages, batches and tool calls, with a valid access token and without', async () => {
    const { app, credentials, ids } = world;
    const toolNames = tools.map((t) => t.name);
    const argumentNames = [...new Set(tools.flatMap((t) => Object.keys(t.input.shape)))];
    const jsonRpcId = fc.oneof(
      { arbitrary: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })), weight: 6 },
      { arbitrary: fc.constantFrom(1e308, 0.5, -0, null, [], {}, true, 'a'.repeat(10_000)), weight: 1 },
    );
    const toolArguments = fc.dictionary(
      fc.oneof({ arbitrary: fc.constantFrom(...argumentNames), weight: 5 }, { arbitrary: hostileString, weight: 1 }),
      fc.oneof(anyValue, fc.constantFrom(...ids), htmlBody, fc.array(replacementArb, { maxLength: 3 })),
      { maxKeys: 6 },
    );
    const message = fc.record(
      {
        jsonrpc: fc.oneof({ arbitrary: fc.constant('2.0'), weight: 6 }, { arbitrary: fc.constantFrom('1.0', 2, null, '2.0 '), weight: 1 }),
        id: jsonRpcId,
        method: fc.oneof(
          { arbitrary: fc.constantFrom('tools/call', 'tools/call', 'tools/call', 'tools/list', 'initialize', 'ping', 'notifications/initialized'), weight: 6 },
          { arbitrary: fc.constantFrom('resources/list', 'prompts/list', 'logging/setLevel', 'completion/complete', 'server/discover'), weight: 1 },
          { arbitrary: hostileString, weight: 1 },
        ),
        params: fc.oneof(
          { arbitrary: fc.record({ name: fc.oneof(fc.constantFrom(...toolNames), hostileString), arguments: fc.oneof({ arbitrary: toolArguments, weight: 5 }, { arbitrary: anyValue, weight: 1 }) }), weight: 6 },
          { arbitrary: fc.record({ protocolVersion: fc.oneof(fc.constantFrom('2025-06-18', '2025-11-25', '2026-07-28'), hostileString), capabilities: anyValue, clientInfo: anyValue }), weight: 1 },
          { arbitrary: anyValue, weight: 1 },
        ),
      },
      { requiredKeys: ['method'] },
    );
    const request = fc.record({
      body: fc.oneof(
        { arbitrary: message.map((m) => JSON.stringify(m)), weight: 8 },
        { arbitrary: fc.array(message, { maxLength: 4 }).map((m) => JSON.stringify(m)), weight: 1 },
        { arbitrary: fc.constantFrom(...hostileJsonTexts.filter((t) => t.length < 1_000_000)), weight: 1 },
        { arbitrary: fc.constantFrom('{"jsonrpc":"2.0","id":99999999999999999999999999,"method":"tools/list"}', '{"jsonrpc":"2.0","id":1e400,"method":"ping"}'), weight: 1 },
      ),
      token: fc.constantFrom('valid', 'valid', 'valid', 'none', 'hostile'),
      accept: fc.oneof(
        { arbitrary: fc.constant('application/json, text/event-stream'), weight: 6 },
        { arbitrary: fc.constantFrom('application/json', 'text/event-stream', '*/*', ''), weight: 1 },
      ),
      version: fc.option(
        fc.oneof({ arbitrary: fc.constantFrom('2025-06-18', '2025-11-25'), weight: 6 }, { arbitrary: fc.constantFrom('2026-07-28', '2024-11-05'), weight: 1 }, { arbitrary: headerValue, weight: 1 }),
        { nil: undefined },
      ),
      address: fc.ipV4(),
      type: fc.oneof({ arbitrary: fc.constant('application/json'), weight: 8 }, { arbitrary: contentType, weight: 1 }),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ body, token, accept, version, type, address }) => {
        // Callers without a valid token come from many addresses, as an attacker's would (not all from one limited address).
        const headers: Record<string, string> = { 'content-type': type, accept, 'x-forwarded-for': address };
        if (token === 'valid') headers.authorization = `Bearer ${await credentials.mcpToken()}`;
        if (token === 'hostile') headers.authorization = `Bearer mcp_at_${'A'.repeat(40)}`;
        if (version !== undefined) headers['mcp-protocol-version'] = version;
        const sent: Sent = { method: 'POST', url: '/mcp', headers, payload: body };
        const response = await send(app, sent);
        nextDayIfSpent(response?.statusCode, response?.body);
        if (response?.body.includes('edit_limit_exceeded')) nextDayIfSpent(429, 'edit_limit_exceeded');
        check(`MCP ${response?.statusCode}`, () => expectSoundToolResult(sent, response));
      }),
      fuzzParameters(250),
    );
    reportFindings();
  }, fuzzTimeoutMs);

  it('OAuth: hostile registrations, authorization requests, token and revocation requests', async () => {
    const { app, credentials, harness } = world;
    const redirectUri = 'http://127.0.0.1:7777/callback';
    const registered = await harness.services.oauth.register({ client_name: 'Fuzz OAuth', redirect_uris: [redirectUri] }, async () => undefined);
    const urlish = fc.oneof(
      fc.constantFrom(redirectUri, 'https://app.example/cb', 'http://evil.example/cb', 'javascript:alert(1)', 'http://127.0.0.1:7777/callback#x', 'https://a b', `${harness.settings.mcpPublicUrl}`, 'urn:ietf:wg:oauth:2.0:oob'),
      hostileString,
    );
    const param = (names: string[]) =>
      fc.array(fc.tuple(fc.constantFrom(...names), fc.oneof(urlish, hostileString, fc.constantFrom('valid-client', 'code', 'S256', 'plain', 'authorization_code', 'refresh_token', 'articles:read articles:write'))), { maxLength: 9 });
    const authorizeNames = ['response_type', 'client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method', 'state', 'scope', 'resource', 'prompt', 'request', 'request_uri'];
    const request = fc.oneof(
      fc.record({
        kind: fc.constant('register' as const),
        body: fc.oneof(
          fc
            .record(
              {
                client_name: anyValue,
                redirect_uris: fc.oneof(fc.array(urlish, { maxLength: 4 }), anyValue),
                grant_types: anyValue,
                response_types: anyValue,
                token_endpoint_auth_method: fc.oneof(anyValue, fc.constantFrom('none', 'client_secret_basic')),
                scope: anyValue,
                client_uri: urlish,
                logo_uri: urlish,
                jwks: anyValue,
                __proto__: anyValue,
              },
              { requiredKeys: [] },
            )
            .map((v) => JSON.stringify(v)),
          fc.constantFrom(...hostileJsonTexts.filter((t) => t.length < 1_000_000)),
        ),
      }),
      fc.record({ kind: fc.constantFrom('authorize GET' as const, 'authorize POST' as const), params: param([...authorizeNames, '_csrf', 'decision', 'access']), signedIn: fc.boolean() }),
      fc.record({ kind: fc.constant('token' as const), params: param(['grant_type', 'code', 'code_verifier', 'redirect_uri', 'client_id', 'refresh_token', 'resource', 'scope', 'client_secret']) }),
      fc.record({ kind: fc.constant('revoke' as const), params: param(['token', 'token_type_hint', 'client_id']) }),
    );
    const fill = async (value: string) => {
      if (value === 'valid-client') return registered.client_id;
      return value;
    };
    await fc.assert(
      fc.asyncProperty(request, fc.ipV4(), async (generated, address) => {
        const headers: Record<string, string> = { 'x-forwarded-for': address };
        let sent: Sent;
        if (generated.kind === 'register') {
          sent = { method: 'POST', url: '/oauth/register', headers: { ...headers, 'content-type': 'application/json' }, payload: generated.body };
        } else {
          const pairs: [string, string][] = [];
          for (const [name, value] of generated.params) pairs.push([name, await fill(value)]);
          if (generated.kind === 'revoke' && pairs.length % 2 === 0) pairs.push(['token', await credentials.mcpToken()]);
          const encoded = pairs.map(([n, v]) => `${encodeAll(n)}=${encodeAll(v)}`).join('&');
          if (generated.kind === 'authorize GET' || generated.kind === 'authorize POST') {
            const session = await credentials.session();
            if (generated.signedIn) headers.cookie = `anchorage_session=${session.cookie}`;
            sent =
              generated.kind === 'authorize GET'
                ? { method: 'GET', url: `/oauth/authorize?${encoded}`, headers }
                : { method: 'POST', url: '/oauth/authorize', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: `_csrf=${session.csrf}&${encoded}` };
          } else {
            sent = { method: 'POST', url: `/oauth/${generated.kind}`, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: encoded };
          }
        }
        const response = await send(app, sent);
        if (generated.kind === 'revoke') credentials.mayHaveSpent();
        check(`${generated.kind} ${response?.statusCode}`, () => expectSound(sent, response));
        // Before the user has signed in and decided, no redirect leaves the service.
        if (generated.kind === 'authorize GET' && !generated.signedIn && response && response.statusCode >= 300 && response.statusCode < 400) {
          check(`authorize redirect ${response.statusCode}`, () => expect(String(response.headers.location), JSON.stringify(sent)).toMatch(/^\/(?!\/)/));
        }
      }),
      fuzzParameters(250),
    );
    reportFindings();
  }, fuzzTimeoutMs);
});
