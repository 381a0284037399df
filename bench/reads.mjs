// The scale benchmark of issue 10, in one run on one machine:
//   1. scale invariance: every read on a big site (1,000,000 backlinks, 100,000 articles) against
//      the same read on a small one (1,000 of each): throughput ratio >= 0.5, p99 ratio <= 2 (each
//      the median of three rounds), no errors;
//   2. near the floor: listArticles page 2 and getArticle against a bare node:http server doing
//      the same key lookup, ownership check, query and JSON (bench/floor.mjs): ratio >= 0.5;
//   3. the loop stays free: GET /healthz and a small read answer within 100 ms (p99), and no
//      request holds the event loop over ~50 ms, while 5 MB PUTs, 50-replacement PATCHes,
//      1M-row reads, dry-run PATCHes that multiply a 5 KB body to 4.5 MB and MCP windows of a
//      4.9 MB body run, dry-run site-wide replaces search the big site, and `anchorage import`
//      imports a file again and again; PATCH alone
//      reaches 100/s;
//   4. the server's peak RSS stays under 400 MB;
//   5. a tool call of each reading tool over MCP (POST /mcp, tools/call) against the same read over
//      REST (issue 56): throughput ratio >= 0.5 and CPU per request at most 2x, side by side; and
//      update_article with replacements against the same PATCH: throughput ratio >= 0.5.
// The service runs in a child process (bench/server.mjs) so the load generator (autocannon, 50
// connections) does not share its event loop. Requests rotate over thousands of API keys and
// dozens of accounts, so neither the 60/min key limit nor the 200 edits/day allowance is measured.
//
//   npm run bench                                   # build, then the full run on SQLite
//   node bench/reads.mjs --quick                    # 100k backlinks / 10k articles, short cases
//   node bench/reads.mjs --only=floor --profile     # CPU profiles of the server and the floor (bench/profiles/)
//                                                   # and the server's event-loop stalls: bench/stall-profile.mjs
//   node bench/reads.mjs --only=scale --case=getStats --seconds=10   # some cases, longer
//   node bench/reads.mjs --only=scale --rounds=1                     # one round of the scale cases
//   node bench/reads.mjs --quick --only=mcp --case=get_stats         # a reading tool against its REST twin
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/reads.mjs   # schema "bench"
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pino from 'pino';
import { dist, freshDatabase, start } from './service.mjs';

const { loadSettings } = await import(`${dist}/config.js`);
const { openRuntime } = await import(`${dist}/runtime.js`);
const { newApiKey, sha256 } = await import(`${dist}/core/secrets.js`);
const { sanitizeTrusted, SANITIZER_VERSION } = await import(`${dist}/core/html.js`);
const { protectedLinksOf, wordCount } = await import(`${dist}/core/protected-anchors.js`);
const { oauthUrlsOf } = await import(`${dist}/services/oauth/index.js`);
const { scopeOf } = await import(`${dist}/services/oauth/scopes.js`);

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const profile = args.includes('--profile');
const only = (args.find((a) => a.startsWith('--only='))?.slice(7) ?? 'scale,floor,mcp,loop').split(',');

const size = {
  bigBacklinks: quick ? 100_000 : 1_000_000,
  bigArticles: quick ? 10_000 : 100_000,
  smallBacklinks: 1_000,
  smallArticles: 1_000,
};
const option = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const seconds = Number(option('seconds') ?? (quick ? 2 : 4));
/** `--case=TEXT` keeps only the cases whose name contains TEXT. */
const chosen = (name) => name.includes(option('case') ?? '');
const loopSeconds = quick ? 5 : 10;
/** Passes over every scale case; `--rounds=N` for more or fewer (an even N: the higher middle one is the median). */
const scaleRounds = Number(option('rounds') ?? 3);
if (!Number.isInteger(scaleRounds) || scaleRounds < 1) {
  console.error('--rounds must be a whole number of at least 1');
  process.exit(2);
}
const connections = 50;
/** Seconds of load before each measured round of a floor row (see `withCpu`). */
const floorWarmUpSeconds = 3;
// 60 requests a minute each: 9,000 keys carry 9,000 reads a second (6,000 ran out on a machine
// that served 6,000 a second, and the 429s counted as errors); the service keeps 10,000 keys in
// memory, so more would measure a key cache that misses on every request.
const readKeyCount = 9_000;
const writerAccounts = 60;
/** Backlinks of the import file the loop row imports with the CLI meanwhile. */
const importBacklinks = 20_000;

// ---------------------------------------------------------------------------------------------
// The database: a fresh SQLite file, or a fresh schema "bench" on the given PostgreSQL database.
const { dataDir, databaseUrl, env, remove: removeDatabase } = await freshDatabase('bench');
const dbName = databaseUrl ? 'PostgreSQL' : 'SQLite';
const settings = loadSettings(env);
const runtime = await openRuntime(settings, { logger: pino({ level: 'silent' }) });
const { services } = runtime;
const db = services.db.kysely;
const sqliteFile = join(dataDir, 'anchorage.sqlite');

// ---------------------------------------------------------------------------------------------
// Seeding, straight into the tables (not through import: that is not what is measured).
const DAY = 86_400_000;
const now = Date.now();
const span = 540 * DAY;
const iso = (ms) => new Date(ms).toISOString().slice(0, 19) + 'Z';
const day = (ms) => iso(ms).slice(0, 10);
const seedStart = performance.now();

const articleColumns = (
  await (databaseUrl
    ? sql`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = 'articles'`
    : sql`select name from pragma_table_info('articles')`
  ).execute(db)
).rows.map((r) => r.name);
const storesProtectedLinks = articleColumns.includes('protected_links');
const storesSanitizer = articleColumns.includes('body_sanitizer');

const protectedLink = (i) => `<a href="https://partner${i}.example/offer" data-service-protected="backlink">partner offer ${i}</a>`;
const internalLink = (i) => `<a href="/guides/${i}" data-service-protected="internal">guide ${i}</a>`;
const articleBody = (k) =>
  `<h2>Article ${k}</h2><p>Lorem ipsum dolor sit amet, consectetur adipiscing elit. ${protectedLink(k % 7)} sed do eiusmod tempor ` +
  `incididunt ut labore et dolore magna aliqua.</p>` +
  '<p>Ut enim ad minim veniam, quis nostrud <strong>exercitation</strong> ullamco laboris nisi ut aliquip ex ea commodo consequat. '.repeat(8) +
  `See ${internalLink(k % 5)}.</p>`;
// Bodies are stored as import stores them: sanitised, with what the service derives from them.
const derived = (body) => ({
  word_count: wordCount(body),
  ...(storesProtectedLinks ? { protected_links: JSON.stringify(protectedLinksOf(body)) } : {}),
  ...(storesSanitizer ? { body_sanitizer: SANITIZER_VERSION } : {}),
});

/** About `bytes` of article HTML with protected links, and `[m{i}a]` once for each i < 50. */
function longBody(bytes, variant = '') {
  const parts = [];
  let length = 0;
  for (let i = 0; length < bytes; i++) {
    const marker = i < 50 ? ` [m${i}a]` : '';
    const piece =
      (i % 7 === 0 ? `<h2>Section ${i}${variant}</h2>` : '') +
      `<p>Paragraph ${i}${marker}: lorem ipsum dolor sit amet, <strong>consectetur</strong> adipiscing elit, sed do ` +
      `<a href="https://site.example/p/${i}" title="page ${i}">eiusmod tempor</a> incididunt ut labore et dolore magna aliqua.` +
      (i % 25 === 0 ? ` See ${protectedLink(i)}.` : '') +
      '</p>' +
      (i % 11 === 0 ? `<ul><li>one ${i}</li><li>two <em>${i}</em></li></ul>` : '');
    parts.push(piece);
    length += piece.length;
  }
  return parts.join('');
}

function articleRow(siteId, accountId, k, body) {
  const kind = k % 10;
  const published = kind === 0 ? null : kind === 1 ? now + ((k % 30) + 1) * DAY : now - ((k * 829_348_951) % span);
  return {
    site_id: siteId,
    account_id: accountId,
    title: `Article ${k}`,
    url: `https://site${siteId}.example/articles/${k}`,
    status: kind === 0 ? 'draft' : kind === 1 ? 'scheduled' : kind === 2 ? 'archived' : 'published',
    published_at: published === null ? null : iso(published),
    target_keyword: `keyword ${k % 97}`,
    featured_image_url: k % 4 === 0 ? null : `https://cdn.example/${k}.jpg`,
    meta_description: `About article ${k}`,
    body,
    ...derived(body),
    version: 1,
    created_at: iso(now - span),
    updated_at: iso(now - span),
  };
}

function backlinkRow(siteId, accountId, j) {
  return {
    site_id: siteId,
    account_id: accountId,
    acquired_at: iso(now - ((j * 829_348_951 + 12_345) % span)),
    source_domain: `source${j % 500}.example`,
    source_url: `https://source${j % 500}.example/post/${j}`,
    target_url: `https://site${siteId}.example/`,
    anchor_text: `anchor ${j % 50}`,
    anchor_type: ['exact', 'partial', 'branded', 'url', 'generic'][j % 5],
    status: ['live', 'live', 'live', 'lost', 'pending'][j % 5 === 3 ? 3 : (j % 7) % 5],
    category: j % 3 === 0 ? 'local' : 'industry',
  };
}

/** Inserts `count` rows made by `row(i)` in large batches: one prepared statement in SQLite, `unnest` arrays in PostgreSQL. */
async function bulkInsert(table, count, row) {
  if (count === 0) return;
  const columns = Object.keys(row(0));
  const batch = databaseUrl ? 20_000 : 100_000;
  if (!databaseUrl) {
    const { default: SQLite } = await import('better-sqlite3');
    const direct = new SQLite(sqliteFile);
    direct.pragma('busy_timeout = 10000');
    const insert = direct.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
    const many = direct.transaction((from, to) => {
      for (let i = from; i < to; i++) insert.run(...Object.values(row(i)));
    });
    for (let i = 0; i < count; i += batch) many(i, Math.min(count, i + batch));
    direct.close();
    return;
  }
  const types = Object.fromEntries(columns.map((c) => [c, typeof row(0)[c] === 'number' ? 'int[]' : 'text[]']));
  for (let i = 0; i < count; i += batch) {
    const rows = [];
    for (let j = i; j < Math.min(count, i + batch); j++) rows.push(row(j));
    const arrays = columns.map((c) => sql`${rows.map((r) => r[c])}::${sql.raw(types[c])}`);
    await sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))})
      select * from unnest(${sql.join(arrays)})`.execute(db);
  }
}

async function site(accountId, name) {
  const url = `https://${name}.example`;
  const row = { account_id: accountId, name, website_url: url, website_url_lc: url, language: 'en', country: 'US', created_at: iso(now - span) };
  return (await db.insertInto('sites').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

/** `count` API keys of a user, inserted by hash. */
async function keysOf(user, count) {
  const keys = Array.from({ length: count }, () => newApiKey());
  for (let i = 0; i < keys.length; i += 500) {
    await db
      .insertInto('api_keys')
      .values(
        keys.slice(i, i + 500).map((key) => ({
          account_id: user.account_id,
          user_id: user.user_id,
          name: 'bench',
          key_hash: sha256(key),
          display_prefix: key.slice(0, 8),
          read_only: 0,
          created_at: iso(now),
        })),
      )
      .execute();
  }
  return keys;
}

const reader = await services.users.create({ email: 'reader@bench.example', password: 'bench-password' });
const readKeys = await keysOf(reader, readKeyCount);
const big = await site(reader.account_id, 'big');
const small = await site(reader.account_id, 'small');
const bodies = Array.from({ length: 35 }, (_, k) => sanitizeTrusted(articleBody(k)));
await bulkInsert('articles', size.bigArticles, (k) => articleRow(big, reader.account_id, k, bodies[k % 35]));
await bulkInsert('articles', size.smallArticles, (k) => articleRow(small, reader.account_id, k, bodies[k % 35]));
await bulkInsert('backlinks', size.bigBacklinks, (j) => backlinkRow(big, reader.account_id, j));
await bulkInsert('backlinks', size.smallBacklinks, (j) => backlinkRow(small, reader.account_id, j));
// Five articles of each site hold a word no other holds: a selective search finds the same few on both.
for (const siteId of [big, small]) {
  const chosenIds = (await db.selectFrom('articles').select('id').where('site_id', '=', siteId).orderBy('id').limit(5).execute()).map((r) => r.id);
  await db.updateTable('articles').set({ title: 'A zebra crossing' }).where('id', 'in', chosenIds).execute();
}
const smallArticleIds = (await db.selectFrom('articles').select('id').where('site_id', '=', small).orderBy('id').execute()).map((r) => r.id);

// Writers: accounts with ~100 KB articles to PATCH and ~4.9 MB ones to PUT, ten keys each.
const patchBody = sanitizeTrusted(longBody(100_000));
// Both variants end at the same paragraph, so each PUT keeps every protected link of the other.
const putBodies = (() => {
  const variants = ['', ' (revised)'].map((variant) => longBody(4_900_000, variant));
  const cut = (body, paragraphs) => body.slice(0, body.indexOf(`<p>Paragraph ${paragraphs}:`));
  let paragraphs = variants[1].split('<p>').length - 1;
  while (variants.some((body) => JSON.stringify({ body: cut(body, paragraphs) }).length > 5_000_000)) paragraphs -= 10;
  return variants.map((body) => sanitizeTrusted(cut(body, paragraphs)));
})();
const writers = [];
for (let w = 0; w < writerAccounts; w++) {
  const user = await services.users.create({ email: `writer${w}@bench.example`, password: 'bench-password' });
  const keys = await keysOf(user, 10);
  const siteId = await site(user.account_id, `writer${w}`);
  const insert = async (body) =>
    (await db.insertInto('articles').values(articleRow(siteId, user.account_id, 3, body)).returning('id').executeTakeFirstOrThrow()).id;
  const patch = [await insert(patchBody), await insert(patchBody)];
  const put = w < 6 ? [await insert(putBodies[0])] : [];
  writers.push({ keys, patch, put });
}

// Heavy work sized by what it produces (issue 53): accounts whose small articles a dry-run PATCH
// multiplies (`e` replaced by 3,000 characters: 4.5 MB of 5 KB), and accounts that read a 4.9 MB
// article window by window over MCP (a connection each: 60 calls a minute per grant).
const amplifiedBody = sanitizeTrusted('<p>Seventeen green trees <em>screen</em> the deep creek, where the geese feed, breed and sleep.</p>'.repeat(52));
const amplifiers = [];
for (let w = 0; w < 3; w++) {
  const user = await services.users.create({ email: `amplifier${w}@bench.example`, password: 'bench-password' });
  const siteId = await site(user.account_id, `amplifier${w}`);
  const { id } = await db.insertInto('articles').values(articleRow(siteId, user.account_id, 3, amplifiedBody)).returning('id').executeTakeFirstOrThrow();
  amplifiers.push({ id, keys: await keysOf(user, 10) });
}
// The resource of the server's tokens: its settings as bench/server.mjs loads them.
const mcpResource = oauthUrlsOf(loadSettings({ ...env, PORT: '0', HOST: '127.0.0.1', DEMO_DATA: 'off' })).resource;
const mcpClient = await services.oauth.register({ client_name: 'bench', redirect_uris: ['http://127.0.0.1:9/callback'] }, async () => {});
/** An MCP connection of `userId` (an access token), read-only or with the write scope too. */
async function grantOf(userId, write = false) {
  const verifier = randomBytes(32).toString('base64url');
  const code = await services.oauth.issueCode({
    clientId: mcpClient.client_id,
    userId,
    redirectUri: 'http://127.0.0.1:9/callback',
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    resource: mcpResource,
    scope: scopeOf(write),
  });
  const tokens = await services.oauth.exchangeCode({ code, clientId: mcpClient.client_id, redirectUri: 'http://127.0.0.1:9/callback', codeVerifier: verifier, resource: mcpResource });
  return tokens.access_token;
}
const windowReaders = [];
for (let w = 0; w < 10; w++) {
  const user = await services.users.create({ email: `window${w}@bench.example`, password: 'bench-password' });
  const siteId = await site(user.account_id, `window${w}`);
  const { id } = await db.insertInto('articles').values(articleRow(siteId, user.account_id, 3, putBodies[0])).returning('id').executeTakeFirstOrThrow();
  windowReaders.push({ id, token: await grantOf(user.user_id) });
}

// MCP connections of the reader, for the tool rows: 60 calls a minute each, so 9,000 of them carry
// 9,000 calls a second, as many as the read keys (3,000 ran out on a machine that served 10,000
// calls a second).
const readGrants = [];
// The update_article row's writers: accounts of their own, each with a ~100 KB article carrying the
// PATCH rows' 50 markers, 10 API keys and 10 write connections (36,000 requests a minute a side).
// An account has at most two large edits in progress: 60 of them spread 50 connections.
const toolWriters = [];
if (only.includes('mcp')) {
  for (let g = 0; g < readKeyCount; g++) readGrants.push(await grantOf(reader.user_id));
  for (let w = 0; w < 60; w++) {
    const user = await services.users.create({ email: `toolwriter${w}@bench.example`, password: 'bench-password' });
    const siteId = await site(user.account_id, `toolwriter${w}`);
    const { id } = await db.insertInto('articles').values(articleRow(siteId, user.account_id, 3, patchBody)).returning('id').executeTakeFirstOrThrow();
    const grants = [];
    for (let g = 0; g < 10; g++) grants.push(await grantOf(user.user_id, true));
    toolWriters.push({ articles: [id], keys: await keysOf(user, 10), grants });
  }
}

// The rows went in directly: build the counters from them, index the articles for search (on
// SQLite the server would otherwise index all 101,000 in the background during the first rows:
// docs/decisions/0014-search-index-in-the-background.md), then gather statistics as a live
// database has them (PRAGMA optimize / autovacuum would).
await services.counters.recount();
await runtime.searchIndex?.catchUp();
if (databaseUrl) {
  await sql`vacuum analyze`.execute(db);
} else {
  await sql`analyze`.execute(db);
  await sql`pragma wal_checkpoint(truncate)`.execute(db);
}
await runtime.close();
console.log(
  `${dbName}: seeded ${size.bigBacklinks + size.smallBacklinks} backlinks, ${size.bigArticles + size.smallArticles} articles, ` +
    `${readKeyCount + writerAccounts * 10} keys in ${((performance.now() - seedStart) / 1000).toFixed(1)} s` +
    (storesProtectedLinks ? '' : ' (no protected_links column)'),
);

// ---------------------------------------------------------------------------------------------
// Processes: the service (and, for the floor, the bare server), each reporting its port.
const profileDir = new URL('./profiles', import.meta.url).pathname;
if (profile) mkdirSync(profileDir, { recursive: true });
// The service runs as `npm start` runs it: plain node, no flags.
const server = start(
  './server.mjs',
  profile ? { ...env, STALLS_FILE: `${profileDir}/stalls.json` } : env,
  profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
);
const port = await server.ready;
// What the server's event-loop thread does, sampled from a process of the bench's own (Linux).
const watcher = start('./loop-watcher.mjs', { ...process.env, WATCHED_PID: String(server.child.pid) });
await watcher.ready;

/**
 * The server's peak resident set so far (Linux VmHWM), per phase, to tell which load grows it;
 * read once the requests of the phase have all been answered (autocannon stops without waiting
 * for them, and a large edit may still wait for its turn on the pool).
 */
const peaks = [];
async function notePeak(phase) {
  await server.ask('settle', 'settled');
  const status = await readFile(`/proc/${server.child.pid}/status`, 'utf8').catch(() => undefined);
  const mb = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status ?? '')?.[1] ?? NaN) / 1024;
  peaks.push(`${phase} ${fmt(mb('VmHWM'))}`);
  const { memory } = await server.ask('report', 'memory');
  console.log(`  server RSS after ${phase}: ${fmt(mb('VmRSS'))} MB now (main thread ${memory} MB), ${fmt(mb('VmHWM'))} MB peak`);
}

let keyTurn = 0;
const readKey = () => readKeys[keyTurn++ % readKeys.length];

/**
 * One autocannon run against `port`; `next(context, connection)` gives each request's method, path,
 * headers and body. `unaggregated`: autocannon's own record of the run, to be added to others'
 * (`allAnswers`).
 */
async function cannon(targetPort, { next, onResponse, conns = connections, duration = seconds, unaggregated = false }) {
  let clients = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${targetPort}`,
    connections: conns,
    duration,
    timeout: 10,
    skipAggregateResult: unaggregated,
    // autocannon keeps a built request on the request object its connections share, and each
    // sends that one first: every connection would start with the last one built (one article,
    // one account). So each connection gets request objects of its own, and its number, for `next`;
    // the shared one is never sent.
    requests: [{ method: 'GET', path: '/healthz' }],
    setupClient: (client) => {
      const connection = clients++;
      client.setRequests([
        {
          setupRequest: (request, context) => Object.assign(request, next(context, connection)),
          ...(onResponse ? { onResponse } : {}),
        },
      ]);
    },
  });
  return unaggregated ? result : {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    /** Answers other than 2xx by status, and failed requests (timeouts, resets) as "failed". */
    refusals: Object.entries({ ...result.statusCodeStats, failed: { count: result.errors } }).filter(([status, { count }]) => count > 0 && !status.startsWith('2')),
    total: result.requests.total,
  };
}

const get = (path) => () => ({ method: 'GET', path, headers: { authorization: `Bearer ${readKey()}` } });

/** Unaggregated runs of one read as one: the answers of all over their seconds, the p99 of all of them. */
function allAnswers(runs) {
  const all = autocannon.aggregateResult(runs, { url: 'http://127.0.0.1' });
  return {
    rps: runs.reduce((sum, run) => sum + run.totalCompletedRequests, 0) / runs.reduce((sum, run) => sum + run.duration, 0),
    p99: all.latency.p99,
    errors: all.errors + all.non2xx,
  };
}

/** " (429 ×3, failed ×1)": the answers behind a count of errors. */
function refusalsOf(...results) {
  const counts = new Map();
  for (const { refusals } of results) for (const [status, { count }] of refusals) counts.set(status, (counts.get(status) ?? 0) + count);
  return counts.size ? ` (${[...counts].map(([status, count]) => `${status} ×${count}`).join(', ')})` : '';
}

const rows = [];
const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : String(n));
const verdict = (ok) => (ok ? 'PASS' : 'FAIL');

// ---------------------------------------------------------------------------------------------
// 1. Scale invariance.
const month = (back) => {
  const d = new Date(now);
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() - back);
  return d.toISOString().slice(0, 7);
};
const lastDayOf = (ym) => day(Date.UTC(Number(ym.slice(0, 4)), Number(ym.slice(5, 7)), 0));
const deepPage = (count) => Math.max(1, Math.floor((count * 0.975) / 25));
const lastPage = (count) => Math.max(1, Math.ceil(count / 25));
const scaleCases = [
  ['getStats this_month', (s) => `/api/v1/sites/${s}/stats?period=this_month`],
  ['getStats last_month', (s) => `/api/v1/sites/${s}/stats?period=last_month`],
  ['getStats last_30_days', (s) => `/api/v1/sites/${s}/stats?period=last_30_days`],
  ['getStats YYYY-MM', (s) => `/api/v1/sites/${s}/stats?period=${month(3)}`],
  ['getStats YYYY-MM-DD', (s) => `/api/v1/sites/${s}/stats?period=${day(now - 45 * DAY)}`],
  ['getStats 12 months from/to', (s) => `/api/v1/sites/${s}/stats?from=${month(12)}-01&to=${lastDayOf(month(1))}`],
  ['listBacklinks page 1', (s) => `/api/v1/sites/${s}/backlinks`],
  ['listBacklinks one month, page 2', (s) => `/api/v1/sites/${s}/backlinks?from=${month(2)}-01&to=${lastDayOf(month(2))}&page=2`],
  ['listBacklinks deep page', (s, big) => `/api/v1/sites/${s}/backlinks?page=${big ? deepPage(size.bigBacklinks) : lastPage(size.smallBacklinks)}`],
  ['listArticles page 1', (s) => `/api/v1/sites/${s}/articles`],
  ['listArticles date range', (s) => `/api/v1/sites/${s}/articles?from=${month(6)}-01&to=${lastDayOf(month(4))}`],
  ['listArticles status=draft', (s) => `/api/v1/sites/${s}/articles?status=draft`],
  ['listArticles deep page', (s, big) => `/api/v1/sites/${s}/articles?page=${big ? deepPage(size.bigArticles) : lastPage(size.smallArticles)}`],
  ['searchArticles selective', (s) => `/api/v1/sites/${s}/search?q=zebra`],
  ['searchArticles selective, match_case', (s) => `/api/v1/sites/${s}/search?q=A%20zebra&match_case=true`],
];
if (only.includes('scale')) {
  // Three rounds over every case, each case in a round small, big, big, small: each side half its
  // seconds twice, after a warm-up second. This machine's speed can change by half within
  // seconds: the halves weigh a drift on both sides alike, and a case's verdict is the median of
  // its three rounds, each a pass over all the cases apart (about two minutes at full size), so
  // one slow spell weighs on one round of a case, not its verdict.
  const cases = scaleCases.filter(([name]) => chosen(name));
  const rounds = new Map(cases.map(([name]) => [name, []]));
  const half = { duration: seconds / 2, unaggregated: true };
  for (let round = 0; round < scaleRounds; round++) {
    for (const [name, path] of cases) {
      const smallNext = get(path(small, false));
      const bigNext = get(path(big, true));
      await cannon(port, { next: smallNext, duration: 1 });
      const small1 = await cannon(port, { next: smallNext, ...half });
      await cannon(port, { next: bigNext, duration: 1 });
      const big1 = await cannon(port, { next: bigNext, ...half });
      const big2 = await cannon(port, { next: bigNext, ...half });
      const small2 = await cannon(port, { next: smallNext, ...half });
      rounds.get(name).push({ small: [small1, small2], big: [big1, big2] });
    }
    console.log(`  scale round ${round + 1} of ${scaleRounds} done`);
  }
  const median = (values) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];
  const list = (values) => values.map((v) => fmt(v, 2)).join(', ');
  for (const [name] of cases) {
    const each = rounds.get(name).map(({ small: s, big: b }) => {
      const [sr, br] = [allAnswers(s), allAnswers(b)];
      return { throughput: br.rps / sr.rps, latency: br.p99 / Math.max(1, sr.p99) };
    });
    const [s, b] = [allAnswers(rounds.get(name).flatMap((r) => r.small)), allAnswers(rounds.get(name).flatMap((r) => r.big))];
    const throughput = median(each.map((r) => r.throughput));
    const latency = median(each.map((r) => r.latency));
    rows.push({
      check: `${name}: big / small`,
      measured: `${fmt(b.rps)} / ${fmt(s.rps)} req/s; p99 ${b.p99} / ${s.p99} ms; errors ${b.errors + s.errors} (all ${scaleRounds} rounds)`,
      ratio: `${fmt(throughput, 2)} / ${fmt(latency, 2)} (rounds ${list(each.map((r) => r.throughput))} / ${list(each.map((r) => r.latency))})`,
      target: `median of ${scaleRounds} rounds: req/s ≥ 0.5, p99 ≤ 2; 0 errors`,
      ok: throughput >= 0.5 && latency <= 2 && b.errors + s.errors === 0,
    });
    console.log(`  ${rows.at(-1).check}: ${rows.at(-1).measured}; ${rows.at(-1).ratio}`);
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Near the floor.
if (only.includes('scale')) await notePeak('scale');
if (only.includes('floor')) {
  const floor = start('./floor.mjs', { ...process.env, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { SQLITE_FILE: sqliteFile }) }, profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--cpu-prof-name=floor.cpuprofile'] : []);
  const floorPort = await floor.ready;
  let articleTurn = 0;
  const floorCases = [
    ['listArticles page 2', () => get(`/api/v1/sites/${small}/articles?page=2`)()],
    ['getArticle', () => get(`/api/v1/articles/${smallArticleIds[articleTurn++ % smallArticleIds.length]}`)()],
  ];
  for (const [name, next] of floorCases.filter(([name]) => chosen(name))) {
    // Three alternating rounds, the median pair: on a shared machine one round can be unlucky.
    // CPU time per request (process.cpuUsage of each server) does not depend on what else the
    // machine runs, where req/s does: it is shown beside the throughput. Each round starts with
    // `floorWarmUpSeconds` unmeasured: after one second, a first getArticle round was still cold
    // (README, “Scale benchmark”: what the late night measured).
    const withCpu = async (target, targetPort) => {
      await cannon(targetPort, { next, duration: floorWarmUpSeconds });
      const before = (await target.ask('cpu', 'cpuMicros')).cpuMicros;
      const result = await cannon(targetPort, { next });
      result.cpuPerRequest = ((await target.ask('cpu', 'cpuMicros')).cpuMicros - before) / result.total;
      return result;
    };
    const rounds = [];
    for (let round = 0; round < 3; round++) rounds.push({ service: await withCpu(server, port), bare: await withCpu(floor, floorPort) });
    rounds.sort((a, b) => a.service.rps / a.bare.rps - b.service.rps / b.bare.rps);
    const { service, bare } = rounds[1];
    const errors = rounds.reduce((sum, r) => sum + r.service.errors + r.bare.errors, 0);
    const ratio = service.rps / bare.rps;
    rows.push({
      check: `${name}: service / bare floor (median of 3 rounds)`,
      measured: `${fmt(service.rps)} / ${fmt(bare.rps)} req/s; p99 ${service.p99} / ${bare.p99} ms; CPU ${fmt(service.cpuPerRequest)} / ${fmt(bare.cpuPerRequest)} µs per request; errors ${errors}`,
      ratio: `${fmt(ratio, 2)} (CPU ${fmt(bare.cpuPerRequest / service.cpuPerRequest, 2)})`,
      target: 'req/s ≥ 0.5',
      ok: ratio >= 0.5 && errors === 0,
    });
    console.log(`  ${rows.at(-1).check}: ${rows.at(-1).measured}`);
  }
  await floor.stopped();
}

// ---------------------------------------------------------------------------------------------
// 2b. Assistants at REST speed (issue 56): each reading tool against its REST twin, the same read;
// update_article against the same PATCH.
if (only.includes('floor')) await notePeak('floor');
if (only.includes('mcp')) {
  // The REST twins read with the read keys, which the rows before may have used up to their 60 a
  // minute (81,638 429s in a full run): their windows end first.
  if (only.includes('scale') || only.includes('floor')) await sleep(60_000);
  let grantTurn = 0;
  let articleTurn = 0;
  const toolRequest = (token, name, args) => ({
    method: 'POST',
    path: '/mcp',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const toolCall = (name, args) => () => toolRequest(readGrants[grantTurn++ % readGrants.length], name, args);
  // A tool result that is an error still answers HTTP 200: count those as errors too.
  const toolErrors = { count: 0 };
  // The first refused answer of a row (either side), printed with it: what the errors were.
  const firstRefusal = { body: null };
  const noteRefusal = (status, body) => {
    if (status >= 400) firstRefusal.body ??= `${status} ${body.slice(0, 200)}`;
  };
  const onToolResponse = (status, body) => {
    noteRefusal(status, body);
    if (status === 200 && (body.includes('"isError":true') || body.includes('"error":{'))) {
      toolErrors.count += 1;
      firstRefusal.body ??= body.slice(0, 300);
    }
  };
  const nextArticle = () => smallArticleIds[articleTurn++ % smallArticleIds.length];
  // As the floor rows: alternating rounds after an unmeasured warm-up, the median pair; CPU time
  // per request of the server beside the throughput. Each round starts once the requests the last
  // one left have been answered, so an account's large edits never overlap from round to round.
  const withCpu = async (next, onResponse) => {
    await server.ask('settle', 'settled');
    await cannon(port, { next, onResponse, duration: 1 });
    await server.ask('settle', 'settled');
    const before = (await server.ask('cpu', 'cpuMicros')).cpuMicros;
    const result = await cannon(port, { next, onResponse });
    result.cpuPerRequest = ((await server.ask('cpu', 'cpuMicros')).cpuMicros - before) / result.total;
    return result;
  };
  const sideBySide = async ({ check, target, rest: [restNext, restOnResponse = noteRefusal], mcp: tool, bothBounds }) => {
    toolErrors.count = 0;
    firstRefusal.body = null;
    const rounds = [];
    for (let round = 0; round < 3; round++) rounds.push({ rest: await withCpu(restNext, restOnResponse), mcp: await withCpu(...tool) });
    rounds.sort((a, b) => a.mcp.rps / a.rest.rps - b.mcp.rps / b.rest.rps);
    const { rest: restSide, mcp } = rounds[1];
    const errors = rounds.reduce((sum, r) => sum + r.rest.errors + r.mcp.errors, 0) + toolErrors.count;
    const ratio = mcp.rps / restSide.rps;
    const cpu = mcp.cpuPerRequest / restSide.cpuPerRequest;
    rows.push({
      check,
      measured: `${fmt(mcp.rps)} / ${fmt(restSide.rps)} req/s; p99 ${mcp.p99} / ${restSide.p99} ms; CPU ${fmt(mcp.cpuPerRequest)} / ${fmt(restSide.cpuPerRequest)} µs per request; errors ${errors}${refusalsOf(...rounds.flatMap((r) => [r.rest, r.mcp]))}${toolErrors.count ? `, ${toolErrors.count} error results` : ''}`,
      ratio: `${fmt(ratio, 2)} (CPU ${fmt(cpu, 2)})`,
      target,
      ok: ratio >= 0.5 && (!bothBounds || cpu <= 2) && errors === 0,
    });
    console.log(`  ${rows.at(-1).check}: ${rows.at(-1).measured}`);
    if (firstRefusal.body) console.log(`    the first refusal: ${firstRefusal.body}`);
  };
  const mcpCases = [
    ['get_article', () => get(`/api/v1/articles/${nextArticle()}`)(), () => toolCall('get_article', { article_id: nextArticle() })()],
    ['list_articles', get(`/api/v1/sites/${small}/articles`), toolCall('list_articles', { site_id: small })],
    ['list_backlinks', get(`/api/v1/sites/${small}/backlinks`), toolCall('list_backlinks', { site_id: small })],
    ['get_stats', get(`/api/v1/sites/${small}/stats?period=last_month`), toolCall('get_stats', { site_id: small, period: 'last_month' })],
    ['list_sites', get('/api/v1/sites'), toolCall('list_sites', {})],
  ];
  for (const [name, restNext, mcpNext] of mcpCases.filter(([name]) => chosen(name))) {
    await sideBySide({
      check: `${name}: MCP / REST (median of 3 rounds)`,
      target: 'req/s ≥ 0.5, CPU ≤ 2',
      rest: [restNext],
      mcp: [mcpNext, onToolResponse],
      bothBounds: true,
    });
  }
  // update_article with replacements against its PATCH twin: the loop rows' 50 replacements on a
  // ~100 KB article, as dry runs (every check, the new body and its answer; nothing saved): a
  // real write would change what the next request must find.
  if (chosen('update_article')) {
    const targets = toolWriters.flatMap((w) => w.articles.map((id) => ({ id, keys: w.keys, grants: w.grants })));
    const replacements = Array.from({ length: 50 }, (_, i) => ({ find: `[m${i}a]`, replace: `[m${i}b]` }));
    // A connection's own articles in turn (an account's large edits are never another connection's,
    // so none waits for a slot); their accounts' keys and grants in turn.
    const owned = Array.from({ length: connections }, (_, connection) => targets.filter((_, i) => i % connections === connection));
    const turns = owned.map(() => -1);
    const nextTarget = (connection) => {
      const own = owned[connection];
      const turn = ++turns[connection];
      const target = own[turn % own.length];
      const round = Math.floor(turn / own.length);
      return { id: target.id, key: target.keys[round % target.keys.length], grant: target.grants[round % target.grants.length] };
    };
    const patch = (_context, connection) => {
      const { id, key } = nextTarget(connection);
      return {
        method: 'PATCH',
        path: `/api/v1/articles/${id}?dry_run=true`,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ replacements }),
      };
    };
    const update = (_context, connection) => {
      const { id, grant } = nextTarget(connection);
      return toolRequest(grant, 'update_article', { article_id: id, replacements, dry_run: true });
    };
    await sideBySide({
      check: 'update_article, 50 replacements on a 100 KB article (dry run): MCP / PATCH (median of 3 rounds)',
      target: 'req/s ≥ 0.5',
      rest: [patch],
      mcp: [update, onToolResponse],
      bothBounds: false,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// 3. The loop stays free, and writes.
if (only.includes('mcp')) await notePeak('mcp');
if (only.includes('loop')) {
  // Each PATCH takes a free article, toggles its 50 markers [m{i}a] <-> [m{i}b] and gives it back.
  const patchFree = writers.flatMap((w) => w.patch.map((id) => ({ id, keys: w.keys, state: 'a' })));
  const putFree = writers.flatMap((w) => w.put.map((id) => ({ id, keys: w.keys, state: 0 })));
  let writeKeyTurn = 0;
  const writeRequest = (free, build) => (context) => {
    const article = free.shift();
    context.article = article;
    const { method, body } = build(article);
    return {
      method,
      path: `/api/v1/articles/${article.id}`,
      headers: { authorization: `Bearer ${article.keys[writeKeyTurn++ % article.keys.length]}`, 'content-type': 'application/json' },
      body,
    };
  };
  const giveBack = (free, toggle) => (status, _body, context) => {
    if (status === 200) toggle(context.article);
    free.push(context.article);
  };
  const patchOf = (article) => {
    const to = article.state === 'a' ? 'b' : 'a';
    const replacements = Array.from({ length: 50 }, (_, i) => ({ find: `[m${i}${article.state}]`, replace: `[m${i}${to}]` }));
    return { method: 'PATCH', body: JSON.stringify({ replacements }) };
  };
  const patchLoad = (conns, duration) =>
    cannon(port, {
      conns,
      duration,
      next: writeRequest(patchFree, patchOf),
      onResponse: giveBack(patchFree, (a) => (a.state = a.state === 'a' ? 'b' : 'a')),
    });
  const putJson = putBodies.map((body) => JSON.stringify({ body }));
  const putLoad = (conns, duration) =>
    cannon(port, {
      conns,
      duration,
      next: writeRequest(putFree, (a) => ({ method: 'PUT', body: putJson[1 - a.state] })),
      onResponse: giveBack(putFree, (a) => (a.state = 1 - a.state)),
    });
  const heavyReads = [
    `/api/v1/sites/${big}/backlinks`,
    `/api/v1/sites/${big}/backlinks?page=${deepPage(size.bigBacklinks)}`,
    `/api/v1/sites/${big}/stats?from=${month(12)}-01&to=${lastDayOf(month(1))}`,
    `/api/v1/sites/${big}/articles?page=${deepPage(size.bigArticles)}`,
  ];
  let heavyTurn = 0;
  let probeTurn = 0;
  let amplifierTurn = 0;
  const amplifierLoad = (conns, duration) =>
    cannon(port, {
      conns,
      duration,
      next: () => {
        const { id, keys } = amplifiers[amplifierTurn++ % amplifiers.length];
        return {
          method: 'PATCH',
          path: `/api/v1/articles/${id}?dry_run=true`,
          headers: { authorization: `Bearer ${keys[amplifierTurn % keys.length]}`, 'content-type': 'application/json' },
          body: JSON.stringify({ replacements: [{ find: 'e', replace: 'x'.repeat(3_000), all: true }] }),
        };
      },
    });
  // A site-wide replace, dry run: search every article of the big site and rewrite the five
  // that hold the word.
  const replaceLoad = (conns, duration) =>
    cannon(port, {
      conns,
      duration,
      next: () => ({
        method: 'POST',
        path: `/api/v1/sites/${big}/replace?dry_run=true`,
        headers: { authorization: `Bearer ${readKey()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ find: 'zebra', replace: 'okapi' }),
      }),
    });
  let windowTurn = 0;
  let windowErrors = 0;
  const windowLoad = (conns, duration) =>
    cannon(port, {
      conns,
      duration,
      next: () => {
        const { id, token } = windowReaders[windowTurn++ % windowReaders.length];
        const call = { name: 'get_article', arguments: { article_id: id, body_offset: (windowTurn * 400_000) % 4_800_000 } };
        return {
          method: 'POST',
          path: '/mcp',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
          body: JSON.stringify({ jsonrpc: '2.0', id: windowTurn, method: 'tools/call', params: call }),
        };
      },
      // A refused tool call is an answer of 200 with `isError`.
      onResponse: (status, body) => {
        if (status === 200 && body.includes('"isError":true')) windowErrors += 1;
      },
    });

  // `anchorage import` in a process of its own, again and again: on SQLite it shares the file's
  // write lock with the service, which must wait for it off the event loop.
  const importFile = join(dataDir, 'bench-import.json');
  execFileSync(process.execPath, [new URL('./import-file.mjs', import.meta.url).pathname, importFile, '--backlinks', String(importBacklinks), '--articles', '20', '--owner', 'reader@bench.example']);
  const importLoad = async (duration) => {
    const until = performance.now() + duration * 1000;
    const imports = { runs: 0, errors: 0 };
    while (performance.now() < until) {
      const cli = spawn(process.execPath, [new URL('../bin/anchorage', import.meta.url).pathname, 'import', importFile], { env, stdio: ['ignore', 'ignore', 'inherit'] });
      const [code] = await once(cli, 'exit');
      imports.runs += 1;
      if (code !== 0) imports.errors += 1;
    }
    return imports;
  };

  // PATCH alone first. `--case=PATCH` runs only it, `--case=under` only the mixed load.
  if (chosen('PATCH alone')) {
    await patchLoad(10, 1);
    const patchAlone = await patchLoad(10, seconds + 1);
    rows.push({
      check: 'PATCH, 50 replacements on a 100 KB article, alone (10 connections)',
      measured: `${fmt(patchAlone.rps)} req/s; p50 ${patchAlone.p50} / p99 ${patchAlone.p99} ms; errors ${patchAlone.errors}`,
      ratio: fmt(patchAlone.rps),
      target: '≥ 100/s, 0 errors',
      ok: patchAlone.rps >= 100 && patchAlone.errors === 0,
    });
    console.log(`  ${rows.at(-1).check}: ${rows.at(-1).measured}`);
    await notePeak('PATCH alone');
  }
  /**
   * The server's gaps over 50 ms between ticks of a 10 ms timer (bench/server.mjs), each with what
   * its process did meanwhile and how often the watcher saw the loop's thread in each state
   * (`samples` of bench/loop-watcher.mjs, 2 ms apart; null off Linux).
   */
  const stallsOf = (stalls, samples) =>
    stalls.length === 0
      ? ''
      : `; gaps of a 10 ms timer over 50 ms: ${stalls
          .map(({ ms, from, to, cpuMs, loop, stolenMs, gcMs, kinds }) => {
            const seen = samples && {};
            for (const [at, label] of samples ?? []) if (at > from && at <= to) seen[label] = (seen[label] ?? 0) + 1;
            return (
              `${fmt(ms)} ms (CPU ${fmt(cpuMs)} ms${loop === null ? '' : `; the loop's thread ran ${fmt(loop.ranMs)} ms and waited ${fmt(loop.waitedMs)} ms for a core`}` +
              `${stolenMs === null ? '' : `; the hypervisor took ${fmt(stolenMs)} ms of the machine's CPUs`}; collector ${fmt(gcMs)} ms${kinds ? `: ${kinds}` : ''}` +
              `${seen === null ? '' : `; the loop's thread seen every 2 ms meanwhile: ${Object.entries(seen).map(([state, n]) => `${state} ×${n}`).join(', ') || 'never'}`})`
            );
          })
          .join(', ')}`;
  if (chosen('loop under load')) {
    await Promise.all([server.ask('reset', 'reset'), watcher.ask('reset', 'reset')]);
    const [health, smallRead, puts, patches, reads, amplified, windows, replaces, imports] = await Promise.all([
      cannon(port, { conns: 1, duration: loopSeconds, next: () => ({ method: 'GET', path: '/healthz' }) }),
      cannon(port, { conns: 1, duration: loopSeconds, next: () => get(`/api/v1/articles/${smallArticleIds[probeTurn++ % 50]}`)() }),
      putLoad(2, loopSeconds),
      patchLoad(4, loopSeconds),
      cannon(port, { conns: 8, duration: loopSeconds, next: () => get(heavyReads[heavyTurn++ % heavyReads.length])() }),
      amplifierLoad(1, loopSeconds),
      windowLoad(1, loopSeconds),
      replaceLoad(1, loopSeconds),
      importLoad(loopSeconds),
    ]);
    windows.errors += windowErrors;
    if (windowErrors > 0) windows.refusals.push(['tool error', { count: windowErrors }]);
    const loop = await server.ask('report', 'delayMaxMs');
    const { samples } = await watcher.ask('samples', 'samples');
    const background =
      `under ${fmt(puts.rps, 1)} PUT/s (5 MB), ${fmt(patches.rps)} PATCH/s, ${fmt(reads.rps)} 1M-row reads/s, ` +
      `${fmt(amplified.rps, 1)} dry-run PATCH/s making 4.5 MB of 5 KB, ${fmt(windows.rps, 1)} MCP windows/s of 4.9 MB, ` +
      `${fmt(replaces.rps, 1)} dry-run site replaces/s over ${size.bigArticles} articles, ` +
      `${imports.runs} CLI imports of ${importBacklinks} backlinks (${imports.errors} failed)`;
    rows.push(
      {
        check: 'GET /healthz under write and 1M-row load',
        measured: `p50 ${health.p50} / p99 ${health.p99} ms; errors ${health.errors}; ${background}`,
        ratio: `${health.p99} ms`,
        target: 'p99 < 100 ms',
        ok: health.p99 < 100 && health.errors === 0,
      },
      {
        check: 'getArticle (small read) under the same load',
        measured: `p50 ${smallRead.p50} / p99 ${smallRead.p99} ms; errors ${smallRead.errors}`,
        ratio: `${smallRead.p99} ms`,
        target: 'p99 < 100 ms',
        ok: smallRead.p99 < 100 && smallRead.errors === 0,
      },
      {
        check: 'Longest event-loop stall in the server under that load',
        measured: `max ${fmt(loop.delayMaxMs)} ms, p99 ${fmt(loop.delayP99Ms)} ms (intervals of a 1 ms timer)${stallsOf(loop.stalls, samples)}; background errors ${puts.errors + patches.errors + reads.errors + amplified.errors + windows.errors + replaces.errors + imports.errors}${refusalsOf(puts, patches, reads, amplified, windows, replaces)}`,
        ratio: `${fmt(loop.delayMaxMs)} ms`,
        target: '≤ 50 ms',
        ok: loop.delayMaxMs <= 50,
      },
    );
    for (const row of rows.slice(-3)) console.log(`  ${row.check}: ${row.measured}`);
  }
}

if (only.includes('loop')) await notePeak('loop');
// The kernel's high-water mark of the server's resident set (Linux); elsewhere, RSS at the end.
const peakRssMb = await readFile(`/proc/${server.child.pid}/status`, 'utf8')
  .then((status) => Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) / 1024)
  .catch(async () => (await server.ask('report', 'delayMaxMs')).rssMb);
rows.push({
  check: 'Server peak RSS over the whole run',
  measured: `${fmt(peakRssMb)} MB (peak after ${peaks.join(', ')} MB)`,
  ratio: `${fmt(peakRssMb)} MB`,
  target: '< 400 MB',
  ok: peakRssMb < 400,
});
await Promise.all([server.stopped(), watcher.stopped()]);

console.log(`\n${dbName}, ${quick ? 'quick' : 'full'} run (${size.bigBacklinks} vs ${size.smallBacklinks} backlinks, ${size.bigArticles} vs ${size.smallArticles} articles), ${connections} connections, ${seconds} s per case, node ${process.version}\n`);
console.log('| Check | Measured | Ratio | Target | |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(`| ${row.check} | ${row.measured} | ${row.ratio} | ${row.target} | ${verdict(row.ok)} |`);
const failed = rows.filter((r) => !r.ok).length;
console.log(`\n${rows.length - failed} passed, ${failed} failed`);

if (args.includes('--keep')) console.log(`kept ${databaseUrl ? 'the schema bench' : sqliteFile}`);
else await removeDatabase();
process.exitCode = failed > 0 ? 1 : 0;
