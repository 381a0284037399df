// Reads while other articles change (issue 55, the kept article answers of ADR 0002): GETs of 100
// articles, alone and while another writer (a second node, the CLI: SQL from this process) changes
// the titles of 100 others of the same account 20 times a second. The row is the GETs' throughput
// during the changes against alone, in one run, for each build given; builds take turns, round by
// round, on one database. Requests rotate over 3,000 API keys (60 a minute each).
//
//   node scripts/build.mjs && node bench/mixed-reads.mjs                       # this build, SQLite
//   node bench/mixed-reads.mjs --dist=/tmp/before/dist --dist=dist --rounds=3  # two builds, interleaved
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/mixed-reads.mjs
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { writeImportFile } from './import-data.mjs';
import { dist as defaultDist, freshDatabase, start } from './service.mjs';

const { newApiKey, sha256 } = await import(`${defaultDist}/core/secrets.js`);

const args = process.argv.slice(2);
const option = (name) => args.filter((a) => a.startsWith(`--${name}=`)).map((a) => a.slice(name.length + 3));
const dists = option('dist').length > 0 ? option('dist') : [defaultDist];
const rounds = Number(option('rounds')[0] ?? 1);
const seconds = Number(option('seconds')[0] ?? 5);
const owner = 'bench@anchorage.test';

/**
 * A fresh database for `dist`, migrated and filled by its own CLI: 200 articles of one account,
 * 3,000 API keys of its user, and the other writer's connection.
 */
async function prepared(dist, n) {
  const db = await freshDatabase(`bench_mixed_${n}`);
  const cli = (...words) =>
    execFileSync(process.execPath, [join(dist, 'cli/index.js'), ...words], { env: db.env, encoding: 'utf8', maxBuffer: 1 << 26 }).trim().split('\n').at(-1);
  cli('migrate');
  const user = JSON.parse(cli('user', 'create', '--email', owner, '--password', 'bench password 1'));
  const file = join(db.dataDir, 'articles.json');
  await writeImportFile(file, { backlinks: 10, articles: 200, owner });
  const ids = JSON.parse(cli('import', file)).sites[0].article_ids;
  rmSync(file);
  const elsewhere = await writer(db);
  const now = new Date().toISOString().slice(0, 19) + 'Z';
  for (const key of keys) {
    const values = [user.account_id, user.user_id, 'bench', sha256(key), key.slice(0, 8), 0, now];
    await elsewhere.run('insert into api_keys (account_id, user_id, name, key_hash, display_prefix, read_only, created_at) values (?, ?, ?, ?, ?, ?, ?)', values);
  }
  return { db, elsewhere, read: ids.slice(0, 100), changed: ids.slice(100) };
}

/** The other writer: statements on a connection of its own. */
async function writer(db) {
  if (db.databaseUrl) {
    const client = new pg.Client({ connectionString: db.databaseUrl });
    await client.connect();
    const numbered = (text) => {
      let n = 0;
      return text.replace(/\?/g, () => `$${++n}`);
    };
    return { run: (text, values) => client.query(numbered(text), values), close: () => client.end() };
  }
  const database = new SQLite(join(db.dataDir, 'anchorage.sqlite'));
  database.pragma('busy_timeout = 5000');
  return { run: async (text, values) => database.prepare(text).run(values), close: async () => database.close() };
}

const keys = Array.from({ length: 3_000 }, () => newApiKey());
const databases = new Map();
for (const [n, dist] of dists.entries()) databases.set(dist, await prepared(dist, n));
let keyTurn = 0;

/** `connections` loops of requests `next()` makes, for `seconds`: requests answered per second, and how many failed. */
async function load(port, connections, next) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const until = performance.now() + seconds * 1000;
  let done = 0;
  let failed = 0;
  const once = ({ method, path }) =>
    new Promise((resolve) => {
      const request = http.request({ agent, port, host: '127.0.0.1', method, path, headers: { authorization: `Bearer ${keys[keyTurn++ % keys.length]}` } }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      });
      request.on('error', () => resolve(0));
      request.end();
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const status = await once(next());
        if (status === 200) done += 1;
        else failed += 1;
      }
    }),
  );
  agent.destroy();
  return { perSecond: done / seconds, failed };
}

let readTurn = 0;
const gets = (read) => () => ({ method: 'GET', path: `/api/v1/articles/${read[readTurn++ % read.length]}` });

/** Changes of other articles' titles elsewhere, 20 a second, for `seconds`: how many a second it made. */
async function changes({ elsewhere, changed }) {
  const until = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < until) {
    await elsewhere.run('update articles set title = ?, version = version + 1 where id = ?', [`Changed ${n}`, changed[n % changed.length]]);
    n += 1;
    await sleep(50);
  }
  return { perSecond: n / seconds };
}

const results = new Map(dists.map((dist) => [dist, []]));
for (let round = 0; round < rounds; round++) {
  for (const dist of dists) {
    const prepared = databases.get(dist);
    const get = gets(prepared.read);
    const server = start('./server.mjs', { ...prepared.db.env, ANCHORAGE_DIST: dist });
    const port = await server.ready;
    await load(port, 4, get);
    const alone = await load(port, 4, get);
    const [mixed, edits] = await Promise.all([load(port, 4, get), changes(prepared)]);
    await server.stopped();
    const row = { alone: alone.perSecond, mixed: mixed.perSecond, edits: edits.perSecond, failed: alone.failed + mixed.failed };
    results.get(dist).push(row);
    console.log(`round ${round + 1} ${dist}: GET alone ${row.alone.toFixed(0)}/s, with edits ${row.mixed.toFixed(0)}/s (${(row.mixed / row.alone).toFixed(2)}), changes ${row.edits.toFixed(0)}/s, failed ${row.failed}`);
  }
}
for (const [dist, rows] of results) {
  const ratios = rows.map((row) => (row.mixed / row.alone).toFixed(2)).join(', ');
  console.log(`${dist}: GETs with edits / alone: ${ratios}`);
}
for (const { db, elsewhere } of databases.values()) {
  await elsewhere.close();
  await db.remove();
}
