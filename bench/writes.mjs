// Write-path benchmark (issue 10, items 3 and 4): PATCH throughput with 50 replacements on a
// ~100 KB article, and how long a 5 MB PUT holds the event loop (max event-loop delay, and the
// slowest GET /healthz answered while the PUTs run). The load runs in a worker thread of its own
// over real HTTP, so the server's event loop measures only the server.
//
//   npm run build && node bench/writes.mjs [seconds=10] [connections=50]
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/writes.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import pino from 'pino';

// ANCHORAGE_DIST lets a profile run use a build of its own.
const dist = process.env.ANCHORAGE_DIST ?? new URL('../dist', import.meta.url).pathname;
const { loadSettings } = await import(`${dist}/config.js`);
const { buildApp } = await import(`${dist}/app.js`);
const { openRuntime } = await import(`${dist}/runtime.js`);

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 50);
const dataDir = mkdtempSync(join(tmpdir(), 'anchorage-bench-'));
const settings = loadSettings({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', DEMO_DATA: 'off', PORT: '0', HOST: '127.0.0.1' });
const runtime = await openRuntime(settings, { logger: pino({ level: 'silent' }) });
const { services } = runtime;

const PROTECTED = (i) => `<a href="https://partner${i}.example/page" data-service-protected="backlink">partner ${i}</a>`;

/** About `bytes` of article HTML; `marker{i}a` appears once for each i < 50. */
function articleBody(bytes) {
  const parts = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const marker = i < 50 ? ` marker${i}a` : '';
    const piece =
      (i % 7 === 0 ? `<h2>Section ${i}</h2>` : '') +
      `<p>Paragraph ${i}${marker}: lorem ipsum dolor sit amet, <strong>consectetur</strong> adipiscing elit, ` +
      `sed do <a href="https://site.example/p/${i}" title="page ${i}">eiusmod tempor</a> incididunt ut labore ` +
      `et dolore magna aliqua.${i % 25 === 0 ? ` See ${PROTECTED(i)}.` : ''}</p>` +
      (i % 11 === 0 ? `<ul><li>one ${i}</li><li>two <em>${i}</em></li></ul>` : '');
    parts.push(piece);
    size += piece.length;
  }
  return parts.join('');
}

async function customerWithArticle(body, keys) {
  const email = `bench-${Math.random().toString(36).slice(2)}@example.test`;
  const { user_id } = await services.users.create({ email, password: 'bench-password' });
  const [site] = (
    await services.importer.run({
      sites: [{ owner: email, name: 'Bench', website_url: 'https://site.example', language: 'en', country: 'US', geographic_scope: 'national', industry: 'software', articles: [{ status: 'published', title: 'Bench', url: 'https://site.example/a', published_at: '2026-10-01T09:00:00Z', body }] }],
    })
  ).sites;
  const created = [];
  for (let i = 0; i < keys; i++) created.push((await services.keys.create(user_id, { name: `b${i}` })).key);
  return { articleId: site.article_ids[0], keys: created };
}

const patchBody = articleBody(100_000);
const clients = [];
for (let c = 0; c < connections; c++) clients.push(await customerWithArticle(patchBody, 6));
const bigOwner = await customerWithArticle('<p>small</p>', 3);

const { app, stop } = await buildApp({ settings, services, logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${app.server.address().port}`;

// The load generator: its own thread, its own event loop.
const loadScript = `
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const { base, mode, clients, seconds, put } = workerData;
const statuses = {};
const times = [];
async function patchLoop(client) {
  const state = new Array(50).fill('a');
  let k = 0;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const replacements = state.map((s, i) => ({ find: 'marker' + i + s, replace: 'marker' + i + (s === 'a' ? 'b' : 'a') }));
    const start = performance.now();
    const response = await fetch(base + '/api/v1/articles/' + client.articleId, {
      method: 'PATCH',
      headers: { authorization: 'Bearer ' + client.keys[k++ % client.keys.length], 'content-type': 'application/json' },
      body: JSON.stringify({ replacements }),
    });
    await response.arrayBuffer();
    times.push(performance.now() - start);
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    if (response.status === 200) state.forEach((s, i) => (state[i] = s === 'a' ? 'b' : 'a'));
  }
}
async function healthDuringPuts() {
  const health = [];
  let running = true;
  const puts = (async () => {
    for (let i = 0; i < put.count; i++) {
      const start = performance.now();
      const response = await fetch(base + '/api/v1/articles/' + put.articleId, {
        method: 'PUT',
        headers: { authorization: 'Bearer ' + put.keys[i % put.keys.length], 'content-type': 'application/json' },
        body: JSON.stringify({ body: put.body }),
      });
      await response.arrayBuffer();
      times.push(performance.now() - start);
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
    running = false;
  })();
  while (running) {
    const start = performance.now();
    await (await fetch(base + '/healthz')).arrayBuffer();
    health.push(performance.now() - start);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await puts;
  return health;
}
(async () => {
  const started = performance.now();
  const health = mode === 'patch' ? (await Promise.all(clients.map(patchLoop)), []) : await healthDuringPuts();
  parentPort.postMessage({ elapsed: performance.now() - started, statuses, times, health });
})();
`;

function runLoad(workerData) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(loadScript, { eval: true, workerData });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const loop = monitorEventLoopDelay({ resolution: 5 });

const revisionsBefore = Number((await services.db.kysely.selectFrom('revisions').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
loop.enable();
const patched = await runLoad({ base, mode: 'patch', clients, seconds });
loop.disable();
const revisionsAfter = Number((await services.db.kysely.selectFrom('revisions').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
const patchTimes = patched.times.sort((a, b) => a - b);
console.log(`PATCH, 50 replacements on a ${(patchBody.length / 1000).toFixed(0)} KB article, ${connections} connections, ${seconds} s (${settings.databaseUrl ? 'PostgreSQL' : 'SQLite'})`);
console.log(`  ${((patched.statuses[200] ?? 0) / (patched.elapsed / 1000)).toFixed(1)} req/s ok; statuses ${JSON.stringify(patched.statuses)}; p50 ${pct(patchTimes, 50).toFixed(0)} ms, p99 ${pct(patchTimes, 99).toFixed(0)} ms; new revisions ${revisionsAfter - revisionsBefore}`);
console.log(`  event-loop delay: max ${(loop.max / 1e6).toFixed(0)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms`);

const bigBody = articleBody(4_800_000);
loop.reset();
loop.enable();
const putCount = 3;
const putRun = await runLoad({ base, mode: 'put', seconds, put: { articleId: bigOwner.articleId, keys: bigOwner.keys, body: bigBody, count: putCount } });
loop.disable();
const health = putRun.health.sort((a, b) => a - b);
console.log(`PUT of a ${(bigBody.length / 1e6).toFixed(1)} MB body, ${putCount} in a row`);
console.log(`  statuses ${JSON.stringify(putRun.statuses)}; each ${putRun.times.map((t) => t.toFixed(0)).join(', ')} ms`);
console.log(`  event-loop delay: max ${(loop.max / 1e6).toFixed(0)} ms; GET /healthz during the PUTs: ${health.length} answers, p99 ${pct(health, 99).toFixed(0)} ms, max ${(health.at(-1) ?? 0).toFixed(0)} ms`);

await stop();
await runtime.close();
rmSync(dataDir, { recursive: true, force: true });
