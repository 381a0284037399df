// The import scale bench of issue 57 (criterion 3), in one run on one database:
//   1. the first import of a file of one site with 1,000,000 backlinks (and 100 articles) through
//      `anchorage import` in a process of its own: wall time, CPU time and the process's peak RSS;
//   2. the same file again, unchanged: time ≤ the first import's;
//   3. 1,000,000 new backlinks into that site (a second file naming it, other source URLs): time
//      ≤ 1.5× the first import's;
//   4. a bare bulk insert of the rows of (1) into the same tables and indexes (its site, articles
//      with their first revisions, backlinks and counters; not the import's one activity record),
//      through the same driver, into a database migrated the same way: the import's throughput
//      ≥ 40 % of it;
//   5. memory flat in the file's size: peak RSS of the first import of the 1,000,000-backlink
//      file against that of a 100,000-backlink one: ratio ≤ 1.5.
// The bare insert runs first, then the imports; each has a fresh database. A table with a verdict
// per row; the exit code is 0 whatever they say (a bench, not a test).
//
//   node scripts/build.mjs && node bench/imports.mjs   # full size, SQLite (files of ~250 MB in the temporary directory)
//   node bench/imports.mjs --quick                     # 10× smaller: 100,000 backlinks and 10 articles
//   node bench/imports.mjs --backlinks=2000000         # another size (the memory row: a tenth of it)
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/imports.mjs   # schemas bench_imports, bench_imports_bare, bench_imports_small
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { benchArticle, benchBacklink, benchSite, writeImportFile } from './import-data.mjs';
import { dist, freshDatabase } from './service.mjs';

const { sanitizeTrusted, SANITIZER_VERSION } = await import(`${dist}/core/html.js`);
const { wordCount } = await import(`${dist}/core/protected-anchors.js`);
const { protectedLinksColumn } = await import(`${dist}/services/articles.js`);
const { cliPageCacheKib } = await import(`${dist}/cli/connection.js`);

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const option = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const backlinks = Number(option('backlinks') ?? (quick ? 100_000 : 1_000_000));
if (!Number.isInteger(backlinks) || backlinks < 10) {
  console.error('--backlinks must be a whole number of at least 10');
  process.exit(2);
}
const articles = quick ? 10 : 100;
const smallBacklinks = Math.round(backlinks / 10);
const owner = 'bench@anchorage.test';
const bin = new URL('../bin/anchorage', import.meta.url).pathname;
const usageModule = pathToFileURL(new URL('./process-usage.mjs', import.meta.url).pathname).href;

const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : String(n));
const thousands = (n) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
const mb = (bytes) => fmt(bytes / 1_048_576);

// ---------------------------------------------------------------------------------------------
// The files: the site with its backlinks 0 … N-1, the same site with N … 2N-1 (no articles), and
// a tenth of the first for the memory row.
const workDir = mkdtempSync(join(tmpdir(), 'anchorage-imports-'));
const files = {
  first: join(workDir, 'first.json'),
  added: join(workDir, 'added.json'),
  small: join(workDir, 'small.json'),
};
const writing = performance.now();
const bytes = {
  first: await writeImportFile(files.first, { backlinks, articles, owner }),
  added: await writeImportFile(files.added, { backlinks, articles: 0, owner, first: backlinks }),
  small: await writeImportFile(files.small, { backlinks: smallBacklinks, articles, owner }),
};
console.log(
  `files: ${thousands(backlinks)} backlinks (${mb(bytes.first)} MB), ${thousands(backlinks)} more (${mb(bytes.added)} MB), ` +
    `${thousands(smallBacklinks)} (${mb(bytes.small)} MB), in ${fmt((performance.now() - writing) / 1000, 1)} s`,
);

/** A fresh database, migrated and with the owner of the bench site, as an operator would prepare it. */
async function preparedDatabase(schema) {
  const db = await freshDatabase(schema);
  const cli = (...words) => execFileSync(process.execPath, [bin, ...words], { env: db.env, encoding: 'utf8' });
  cli('migrate');
  const created = JSON.parse(cli('user', 'create', '--email', owner, '--password', 'bench password 1').trim().split('\n').at(-1));
  return { ...db, accountId: created.account_id };
}

/**
 * `anchorage import FILE` in a process of its own, as an operator runs it: its wall time, its CPU
 * time and peak RSS (bench/process-usage.mjs), and what it reports of the site's rows.
 */
async function anchorageImport(db, file) {
  const usageFile = join(workDir, 'usage.json');
  rmSync(usageFile, { force: true });
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', usageModule, bin, 'import', file], {
    env: { ...db.env, USAGE_FILE: usageFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit').then(([code]) => ({ code, seconds: (performance.now() - started) / 1000 }));
  // The answer starts with the site's counts; the ids of its rows follow (megabytes of them).
  let head = '';
  let errors = '';
  child.stdout.setEncoding('utf8').on('data', (text) => {
    if (head.length < 4096) head += text;
  });
  child.stderr.setEncoding('utf8').on('data', (text) => (errors += text));
  await once(child, 'close');
  const { code, seconds } = await exited;
  if (code !== 0) console.error(`anchorage import ${file} exited with ${code}: ${errors.trim()}`);
  const usage = existsSync(usageFile) ? JSON.parse(readFileSync(usageFile, 'utf8')) : { maxRssKb: NaN, cpuMicros: NaN };
  const tally = (kind) => JSON.parse(new RegExp(`"${kind}":(\\{[^}]*\\})`).exec(head)?.[1] ?? '{}');
  return {
    ok: code === 0,
    seconds,
    cpuSeconds: usage.cpuMicros / 1e6,
    rssMb: usage.maxRssKb / 1024,
    site: /"site":"(\w+)"/.exec(head)?.[1],
    articles: tally('articles'),
    backlinks: tally('backlinks'),
  };
}

const describe = (run) =>
  `${fmt(run.seconds, 1)} s (CPU ${fmt(run.cpuSeconds, 1)} s), peak RSS ${fmt(run.rssMb)} MB; site ${run.site}, ` +
  `backlinks ${JSON.stringify(run.backlinks)}, articles ${JSON.stringify(run.articles)}`;

// ---------------------------------------------------------------------------------------------
// The bare insert: the plainest fast code through the service's driver.
const rowsPerTransaction = 100_000;

/** better-sqlite3 opened as src/db/connect.ts opens it for a command, or one pg client; statements prepared once. */
async function bareDriver({ dataDir, databaseUrl }) {
  if (!databaseUrl) {
    const { default: SQLite } = await import('better-sqlite3');
    const database = new SQLite(join(dataDir, 'anchorage.sqlite'));
    // The page size and WAL are the file's own, set as `migrate` created it.
    database.pragma(`wal_autocheckpoint = ${Math.ceil(4_096_000 / database.pragma('page_size', { simple: true }))}`);
    database.pragma('synchronous = NORMAL');
    database.pragma('foreign_keys = ON');
    database.pragma(`cache_size = -${cliPageCacheKib}`);
    const statements = new Map();
    const prepared = (text) => statements.get(text) ?? statements.set(text, database.prepare(text)).get(text);
    return {
      rowsPerStatement: 100,
      param: () => '?',
      exec: async (text) => database.exec(text),
      run: async (text, values) => prepared(text).run(values),
      insertId: async (text, values) => Number(prepared(text).run(values).lastInsertRowid),
      close: async () => database.close(),
    };
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const names = new Map();
  const named = (text) => names.get(text) ?? names.set(text, `bare_${names.size}`).get(text);
  return {
    // 10,000 parameters a statement, under PostgreSQL's 65,535.
    rowsPerStatement: 1_000,
    param: (n) => `$${n}`,
    exec: (text) => client.query(text),
    run: (text, values) => client.query({ name: named(text), text, values }),
    insertId: async (text, values) => (await client.query({ name: named(text), text: `${text} returning id`, values })).rows[0].id,
    close: () => client.end(),
  };
}

const backlinkColumns = ['site_id', 'account_id', 'acquired_at', 'source_domain', 'source_url', 'target_url', 'anchor_text', 'anchor_type', 'status', 'category'];
const counterTables = [
  ['backlink_day_counts', 'day', 'category', 10],
  ['backlink_month_counts', 'month', 'category', 7],
  ['article_day_counts', 'day', 'status', 10],
  ['article_month_counts', 'month', 'status', 7],
];

/**
 * Inserts the rows the first import stores into a fresh database: the site, each article with its
 * first revision (as the import stores them: sanitised, with what is derived from the body, made
 * before the clock starts), the backlinks in multi-row statements, and the counters summed as the
 * rows go. Its wall and CPU time.
 */
async function bareInsert(db) {
  const now = new Date().toISOString().slice(0, 19) + 'Z';
  const articleRows = Array.from({ length: articles }, (_, i) => {
    const { title, url, status, published_at, target_keyword, meta_description, featured_image_url, body: given } = benchArticle(i);
    const body = sanitizeTrusted(given);
    return { title, url, status, published_at, target_keyword, word_count: wordCount(body), protected_links: protectedLinksColumn(body), body_sanitizer: SANITIZER_VERSION, featured_image_url, meta_description, body, version: 1, created_at: now, updated_at: now };
  });
  const { owner: _, ...site } = benchSite(owner);
  const counts = new Map(counterTables.map(([table]) => [table, new Map()]));
  const count = (of, timestamp, key) => {
    for (const [table, , , length] of counterTables.filter(([table]) => table.startsWith(of))) {
      const tally = counts.get(table);
      const id = `${timestamp.slice(0, length)} ${key}`;
      tally.set(id, (tally.get(id) ?? 0) + 1);
    }
  };

  const started = performance.now();
  const cpu = process.cpuUsage();
  const driver = await bareDriver(db);
  const tuples = (rows, columns) =>
    Array.from({ length: rows }, (_, r) => `(${Array.from({ length: columns }, (_, c) => driver.param(r * columns + c + 1)).join(', ')})`).join(', ');
  const texts = new Map();
  const insert = (table, columns, rows = 1) => {
    const id = `${table} ${columns} ${rows}`;
    return texts.get(id) ?? texts.set(id, `insert into ${table} (${columns.join(', ')}) values ${tuples(rows, columns.length)}`).get(id);
  };
  await driver.exec('begin');
  const siteRow = { account_id: db.accountId, ...site, website_url_lc: site.website_url.toLowerCase(), created_at: now };
  const siteId = await driver.insertId(insert('sites', Object.keys(siteRow)), Object.values(siteRow));
  for (const row of articleRows) {
    const article = { site_id: siteId, account_id: db.accountId, ...row };
    const articleId = await driver.insertId(insert('articles', Object.keys(article)), Object.values(article));
    const revision = { article_id: articleId, account_id: db.accountId, title: row.title, body: row.body, meta_description: row.meta_description, featured_image_url: row.featured_image_url, origin: 'rewrite', created_at: now, reason: 'Imported from the content pipeline' };
    const revisionId = await driver.insertId(insert('revisions', Object.keys(revision)), Object.values(revision));
    await driver.run(`update articles set current_revision_id = ${driver.param(1)} where id = ${driver.param(2)}`, [revisionId, articleId]);
    count('article', row.published_at, row.status);
  }
  for (let from = 0; from < backlinks; from += driver.rowsPerStatement) {
    if (from > 0 && from % rowsPerTransaction === 0) await driver.exec('commit; begin');
    const rows = Math.min(driver.rowsPerStatement, backlinks - from);
    const values = [];
    for (let i = from; i < from + rows; i++) {
      const b = benchBacklink(i);
      values.push(siteId, db.accountId, b.acquired_at, b.source_domain, b.source_url, b.target_url, b.anchor_text, b.anchor_type, b.status, b.category);
      count('backlink', b.acquired_at, b.category);
    }
    await driver.run(insert('backlinks', backlinkColumns, rows), values);
  }
  for (const [table, span, key] of counterTables) {
    const rows = [...counts.get(table)].map(([id, n]) => [siteId, ...id.split(' '), n]);
    for (let i = 0; i < rows.length; i += driver.rowsPerStatement) {
      const piece = rows.slice(i, i + driver.rowsPerStatement);
      await driver.run(insert(table, ['site_id', span, key, 'n'], piece.length), piece.flat());
    }
  }
  await driver.exec('commit');
  await driver.close();
  const used = process.cpuUsage(cpu);
  return { seconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6, rowsPerStatement: driver.rowsPerStatement };
}

// ---------------------------------------------------------------------------------------------
// The runs.
const bareDb = await preparedDatabase('bench_imports_bare');
const dbName = bareDb.databaseUrl ? 'PostgreSQL' : 'SQLite';
const bare = await bareInsert(bareDb);
await bareDb.remove();
console.log(`  bare insert: ${fmt(bare.seconds, 1)} s (CPU of the bench process ${fmt(bare.cpuSeconds, 1)} s)`);

const importDb = await preparedDatabase('bench_imports');
const first = await anchorageImport(importDb, files.first);
console.log(`  first import: ${describe(first)}`);
const again = await anchorageImport(importDb, files.first);
console.log(`  the same file again: ${describe(again)}`);
const added = await anchorageImport(importDb, files.added);
console.log(`  ${thousands(backlinks)} more backlinks: ${describe(added)}`);
await importDb.remove();

const smallDb = await preparedDatabase('bench_imports_small');
const small = await anchorageImport(smallDb, files.small);
console.log(`  first import of ${thousands(smallBacklinks)} backlinks: ${describe(small)}`);
await smallDb.remove();
rmSync(workDir, { recursive: true, force: true });

const tallied = (tally, kind, n) => tally[kind] === n && Object.values(tally).reduce((a, b) => a + b, 0) === n;
const rowsOfFirst = backlinks + articles;
const rows = [
  {
    check: `First import: ${thousands(backlinks)} backlinks, ${articles} articles (anchorage import)`,
    measured: `${describe(first)}; ${thousands(rowsOfFirst / first.seconds)} rows/s`,
    ratio: `${fmt(first.seconds, 1)} s`,
    target: 'every row created',
    ok: first.ok && tallied(first.backlinks, 'created', backlinks) && tallied(first.articles, 'created', articles),
  },
  {
    check: 'Re-import unchanged / first import (time)',
    measured: `${fmt(again.seconds, 1)} / ${fmt(first.seconds, 1)} s; ${describe(again)}`,
    ratio: fmt(again.seconds / first.seconds, 2),
    target: '≤ 1.0, every row unchanged',
    ok: again.ok && again.seconds <= first.seconds && again.site === 'unchanged' && tallied(again.backlinks, 'unchanged', backlinks) && tallied(again.articles, 'unchanged', articles),
  },
  {
    check: `${thousands(backlinks)} new backlinks into the site of ${thousands(backlinks)} / first import (time)`,
    measured: `${fmt(added.seconds, 1)} / ${fmt(first.seconds, 1)} s; ${describe(added)}`,
    ratio: fmt(added.seconds / first.seconds, 2),
    target: '≤ 1.5, every backlink created',
    ok: added.ok && added.seconds <= 1.5 * first.seconds && tallied(added.backlinks, 'created', backlinks),
  },
  {
    check: 'Import / bare bulk insert of the same rows (throughput)',
    measured:
      `${thousands(rowsOfFirst / first.seconds)} / ${thousands(rowsOfFirst / bare.seconds)} rows/s (${fmt(first.seconds, 1)} / ${fmt(bare.seconds, 1)} s; ` +
      `bare: ${bare.rowsPerStatement} rows a statement, ${thousands(rowsPerTransaction)} a transaction, CPU ${fmt(bare.cpuSeconds, 1)} s)`,
    ratio: fmt(bare.seconds / first.seconds, 2),
    target: '≥ 0.4',
    ok: first.ok && bare.seconds / first.seconds >= 0.4,
  },
  {
    check: `Peak RSS: import of ${thousands(backlinks)} / of ${thousands(smallBacklinks)} backlinks`,
    measured: `${fmt(first.rssMb)} / ${fmt(small.rssMb)} MB (the same file again ${fmt(again.rssMb)} MB, ${thousands(backlinks)} more ${fmt(added.rssMb)} MB)`,
    ratio: fmt(first.rssMb / small.rssMb, 2),
    target: '≤ 1.5',
    ok: first.ok && small.ok && first.rssMb / small.rssMb <= 1.5,
  },
];

console.log(`\n${dbName}, ${quick ? 'quick' : 'full'} run (${thousands(backlinks)} backlinks, ${articles} articles; ${thousands(smallBacklinks)} for the memory row), node ${process.version}\n`);
console.log('| Check | Measured | Ratio | Target | |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(`| ${row.check} | ${row.measured} | ${row.ratio} | ${row.target} | ${verdict(row.ok)} |`);
const failed = rows.filter((r) => !r.ok).length;
console.log(`\n${rows.length - failed} passed, ${failed} failed`);
