// What reading a whole article through MCP get_article windows costs an assistant (issue 56,
// item 2): the calls, and the characters of every result (structuredContent's JSON and the text
// blocks together), for articles of about 50 KB, 250 KB and 1 MB. Deterministic: no timing.
// The bound it is held to (test/mcp/windowed-article.test.ts): at most 1.3 × the body's length in
// characters, in at most ceil(length / 30,000) + 1 calls.
//
//   npm run build && node bench/mcp-tokens.mjs        # SQLite
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/mcp-tokens.mjs   # schema "bench_tokens"
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createHash, randomBytes } from 'node:crypto';
import pino from 'pino';
import { dist, freshDatabase } from './service.mjs';

const { loadSettings } = await import(`${dist}/config.js`);
const { openRuntime } = await import(`${dist}/runtime.js`);
const { buildApp } = await import(`${dist}/app.js`);
const { oauthUrlsOf } = await import(`${dist}/services/oauth/index.js`);
const { scopeOf } = await import(`${dist}/services/oauth/scopes.js`);

const protectedLink = (i) => `<a href="https://partner${i}.example/offer" data-service-protected="backlink">partner offer ${i}</a>`;

/** About `chars` of article HTML: a heading every seven paragraphs, links with attributes, a protected link every 40. */
export function articleBody(chars) {
  const parts = [];
  for (let i = 0, length = 0; length < chars; i++) {
    const piece =
      (i % 7 === 0 ? `<h2>Section ${i}: how the routine works</h2>` : i % 7 === 4 ? `<h3>Details of part ${i}</h3>` : '') +
      `<p>Paragraph ${i}: lorem ipsum dolor sit amet, <strong>consectetur</strong> adipiscing elit, sed do ` +
      `<a href="https://site.example/p/${i}" title="page ${i}">eiusmod tempor</a> incididunt ut labore et dolore magna aliqua.` +
      (i % 40 === 0 ? ` See ${protectedLink(i % 6)}.` : '') +
      '</p>';
    parts.push(piece);
    length += piece.length;
  }
  return parts.join('').slice(0, chars).replace(/<[^>]*$/, '');
}

const { env, remove } = await freshDatabase('bench_tokens');
// One process seeds and serves: the seeding's long turns are not load to shed.
const settings = loadSettings({ ...env, PORT: '0', HOST: '127.0.0.1', OVERLOAD_EVENT_LOOP_DELAY_MS: '0' });
const runtime = await openRuntime(settings, { logger: pino({ level: 'silent' }) });
const { services } = runtime;
const { app, stop, warm } = await buildApp({ settings, services, logger: false });
await warm();
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${app.server.address().port}`;

const email = 'tokens@bench.example';
const { user_id } = await services.users.create({ email, password: 'bench-password-tokens' });
const sizes = [50_000, 250_000, 1_000_000];
const imported = await services.importer.run({
  sites: [
    {
      owner: email,
      name: 'Tokens',
      website_url: 'https://tokens.example',
      language: 'en',
      country: 'US',
      geographic_scope: 'national',
      industry: 'software',
      articles: sizes.map((size) => ({ status: 'published', title: `About ${size}`, url: `https://tokens.example/${size}`, body: articleBody(size) })),
      backlinks: [],
    },
  ],
});

// A connection as the OAuth flow makes it, for the address this server answers at; one per
// article and every 50 calls, so that no read meets the limit of 60 calls a minute per connection.
const resource = oauthUrlsOf(settings).resource;
const oauthClient = await services.oauth.register({ client_name: 'bench', redirect_uris: ['http://127.0.0.1:9/callback'] }, async () => {});
async function connect() {
  const verifier = randomBytes(32).toString('base64url');
  const redirectUri = 'http://127.0.0.1:9/callback';
  const code = await services.oauth.issueCode({
    clientId: oauthClient.client_id,
    userId: user_id,
    redirectUri,
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    resource,
    scope: scopeOf(true),
  });
  const tokens = await services.oauth.exchangeCode({ code, clientId: oauthClient.client_id, redirectUri, codeVerifier: verifier, resource });
  const client = new Client({ name: 'bench-tokens', version: '1.0.0' });
  const headers = { authorization: `Bearer ${tokens.access_token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers } }));
  return client;
}

/** Characters of one result: structuredContent's JSON and every text block. */
const charsOf = (result) =>
  (result.structuredContent === undefined ? 0 : JSON.stringify(result.structuredContent).length) +
  result.content.reduce((sum, block) => sum + (block.type === 'text' ? block.text.length : 0), 0);

const lister = await connect();
const { tools } = await lister.listTools();
await lister.close();
console.log(`tools/list: ${JSON.stringify(tools).length} characters for ${tools.length} tools`);
console.log('\n| Article | Calls (bound) | Result characters | × its length (bound 1.3) |');
console.log('|---|---|---|---|');
for (const [index, articleId] of imported.sites[0].article_ids.entries()) {
  let client = await connect();
  let offset = 0;
  let calls = 0;
  let chars = 0;
  let length = 0;
  while (offset !== null) {
    if (calls > 0 && calls % 50 === 0) {
      await client.close();
      client = await connect();
    }
    const result = await client.callTool({ name: 'get_article', arguments: { article_id: articleId, body_offset: offset } });
    if (result.isError) throw new Error(result.content[0].text);
    calls += 1;
    chars += charsOf(result);
    length = result.structuredContent.meta.body_total_length;
    offset = result.structuredContent.meta.next_offset;
  }
  const bound = Math.ceil(length / 30_000) + 1;
  await client.close();
  console.log(`| ${Math.round(sizes[index] / 1000)} KB (${length} characters) | ${calls} (${bound}) | ${chars} | ${(chars / length).toFixed(2)} |`);
}

await stop();
await runtime.close();
await remove();
