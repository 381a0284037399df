// Read-path benchmark: one account with many articles and backlinks, measured against a small
// site in the same run (ratios, not absolute targets), plus the cost of the activity log:
// batched (as shipped) against writing each record at once (the baseline batching avoids).
//
//   npm run build && node bench/reads.mjs [articles=100000] [backlinks=1000000]
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/reads.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import pino from 'pino';
import { loadSettings } from '../dist/config.js';
import { buildApp } from '../dist/http/app.js';
import { openRuntime } from '../dist/runtime.js';

const articleCount = Number(process.argv[2] ?? 100_000);
const backlinkCount = Number(process.argv[3] ?? 1_000_000);
const dataDir = mkdtempSync(join(tmpdir(), 'anchorage-bench-'));
const settings = loadSettings({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', DEMO_DATA: 'off' });
const runtime = await openRuntime(settings, { logger: pino({ level: 'silent' }) });
const { services } = runtime;
const db = services.db.kysely;

if (settings.databaseUrl) {
  // A shared benchmark database: start from empty tables.
  for (const table of ['activity_log', 'revisions', 'backlinks', 'articles', 'sites', 'api_keys', 'sessions', 'users', 'accounts']) {
    await db.deleteFrom(table).execute().catch(() => undefined);
  }
}

const { user_id, account_id } = await services.users.create({ email: `bench-${Date.now()}@example.test`, password: 'bench-password' });
const now = new Date('2026-11-15T12:00:00Z');
const iso = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const span = 540 * 86_400_000;

async function site(name) {
  return (await db.insertInto('sites').values({ account_id, name, website_url: `https://${name}.example`, website_url_lc: `https://${name}.example`, created_at: iso(now.getTime()) }).returning('id').executeTakeFirstOrThrow()).id;
}

async function seed(siteId, articles, backlinks) {
  const body = '<p>' + 'Lorem ipsum dolor sit amet. '.repeat(40) + '</p>';
  for (let i = 0; i < articles; i += 1000) {
    const rows = [];
    for (let j = i; j < Math.min(articles, i + 1000); j++) {
      const published = j % 10 === 0 ? null : iso(now.getTime() - ((j * 7919) % span));
      rows.push({ site_id: siteId, account_id, title: `Article ${j}`, url: `https://x.example/${j}`, status: published ? 'published' : 'draft', published_at: published, target_keyword: 'kw', word_count: 200, body, version: 1, created_at: iso(now.getTime()), updated_at: iso(now.getTime()) });
    }
    await db.insertInto('articles').values(rows).execute();
  }
  for (let i = 0; i < backlinks; i += 2000) {
    const rows = [];
    for (let j = i; j < Math.min(backlinks, i + 2000); j++) {
      rows.push({ site_id: siteId, account_id, acquired_at: iso(now.getTime() - ((j * 104729) % span)), source_domain: 'src.example', source_url: 'https://src.example/a', target_url: 'https://x.example/', anchor_text: 'anchor', anchor_type: 'exact', status: 'live', category: j % 3 === 0 ? 'local' : 'industry' });
    }
    await db.insertInto('backlinks').values(rows).execute();
  }
}

const seedStart = performance.now();
const big = await site('big');
const small = await site('small');
await seed(big, articleCount, backlinkCount);
await seed(small, 100, 1000);
// The rows went in directly, not through import: build the day counters from them.
await services.counters.recount();
// Measure the steady state a live database is in: statistics gathered (and, on PostgreSQL, the
// visibility map that index-only counts rely on), as autovacuum or PRAGMA optimize leave it.
await sql.raw(settings.databaseUrl ? 'vacuum analyze articles, backlinks' : 'analyze').execute(db);
console.log(`seeded ${articleCount} articles and ${backlinkCount} backlinks in ${((performance.now() - seedStart) / 1000).toFixed(1)} s (${settings.databaseUrl ? 'PostgreSQL' : 'SQLite'})`);

const { app, stop } = await buildApp({ settings, services, logger: false });
await app.ready();
/** Median milliseconds of `runs` injected GETs (the request limit is lifted by new keys). */
async function median(path, runs = 25, after) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const authorization = `Bearer ${await freshKey()}`;
    const start = performance.now();
    const response = await app.inject({ method: 'GET', url: path, headers: { authorization } });
    if (after) await after();
    times.push(performance.now() - start);
    if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode} ${response.body}`);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

// A new key per request keeps the 60/min limit out of the measurement.
const keys = [];
async function freshKey() {
  if (keys.length === 0) for (let i = 0; i < 50; i++) keys.push((await services.keys.create(user_id, { name: 'b' })).key);
  return keys.pop();
}

const cases = [
  ['listArticles page 1', (s) => `/api/v1/sites/${s}/articles`],
  ['listArticles page 1, status=published', (s) => `/api/v1/sites/${s}/articles?status=published`],
  ['listArticles one month', (s) => `/api/v1/sites/${s}/articles?from=2026-10-01&to=2026-10-31`],
  ['listArticles page 40 (per_page 100)', (s) => `/api/v1/sites/${s}/articles?page=40&per_page=100`],
  ['listBacklinks page 1', (s) => `/api/v1/sites/${s}/backlinks`],
  ['listBacklinks one month', (s) => `/api/v1/sites/${s}/backlinks?from=2026-10-01&to=2026-10-31`],
  ['getStats last_month', (s) => `/api/v1/sites/${s}/stats?period=last_month`],
  ['getStats 12 months', (s) => `/api/v1/sites/${s}/stats?from=2025-11-01&to=2026-10-31`],
];

console.log('\nmedian ms per request: big site vs small site (same run)');
console.log('case'.padEnd(42), 'big'.padStart(9), 'small'.padStart(9), 'ratio'.padStart(7));
for (const [name, path] of cases) {
  const b = await median(path(big));
  const s = await median(path(small));
  console.log(name.padEnd(42), b.toFixed(2).padStart(9), s.toFixed(2).padStart(9), (b / s).toFixed(2).padStart(7));
}

console.log('\nactivity log: 400 reads, batched records (shipped) vs one insert per request (baseline)');
const batched = await median(`/api/v1/sites/${small}/articles`, 400);
const unbatched = await median(`/api/v1/sites/${small}/articles`, 400, () => services.activity.flush());
console.log(`batched ${batched.toFixed(2)} ms, unbatched ${unbatched.toFixed(2)} ms, ratio ${(batched / unbatched).toFixed(2)}`);

await stop();
await runtime.close();
rmSync(dataDir, { recursive: true, force: true });
