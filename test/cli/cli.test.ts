import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSandbox, cliSandbox, runCli, startServer, stopServer } from '../helpers/cli.js';

const run = promisify(execFile);

let sandbox: CliSandbox;
let dataDir: string;
let env: NodeJS.ProcessEnv;

/** The operator CLI as outside scripts call it: the built bin/anchorage, its stdout and exit code. */
const cli = (args: string[], input?: string) => runCli(args, { env, input });

/** Rows from the service's database, read through the built connection code. */
async function rows<T>(table: string, where: [string, string | number] | null = null): Promise<T[]> {
  const filter = where ? `.where(${JSON.stringify(where[0])}, '=', ${JSON.stringify(where[1])})` : '';
  const { stdout } = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { connect } from '${join(import.meta.dirname, '../../dist/db/connect.js')}';
       const db = connect(process.env.DATABASE_URL, process.env.DATA_DIR);
       const rows = await db.kysely.selectFrom('${table}').selectAll()${filter}.orderBy('id').execute();
       console.log(JSON.stringify(rows)); await db.kysely.destroy();`,
    ],
    { env },
  );
  return JSON.parse(stdout) as T[];
}

/** Every day and month counter, in key order, read through the built connection code. */
async function counterRows(): Promise<unknown> {
  const { stdout } = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { sql } from 'kysely';
       import { connect } from '${join(import.meta.dirname, '../../dist/db/connect.js')}';
       const db = connect(process.env.DATABASE_URL, process.env.DATA_DIR);
       const tables = ['backlink_day_counts', 'backlink_month_counts', 'article_day_counts', 'article_month_counts'];
       const rows = [];
       for (const t of tables) rows.push((await sql\`select * from \${sql.table(t)} order by 1, 2, 3\`.execute(db.kysely)).rows);
       console.log(JSON.stringify(rows)); await db.kysely.destroy();`,
    ],
    { env },
  );
  return JSON.parse(stdout);
}

const site = (owner: string, extra: object = {}) => ({
  owner,
  name: 'Cli Site',
  website_url: 'https://cli.example',
  language: 'en',
  country: 'US',
  geographic_scope: 'local',
  industry: 'Testing',
  articles: [
    {
      title: 'First',
      url: 'https://cli.example/first',
      status: 'published',
      published_at: '2026-10-01T09:00:00Z',
      target_keyword: 'first',
      meta_description: 'First post',
      featured_image_url: null,
      body: '<p>Hello <a href="https://partner.example/" data-service-protected="backlink">partner</a> world</p><script>x()</script>',
    },
  ],
  backlinks: [
    {
      acquired_at: '2026-10-02T10:00:00Z',
      source_domain: 'src.example',
      source_url: 'https://src.example/a',
      target_url: 'https://cli.example/',
      anchor_text: 'cli',
      anchor_type: 'exact',
      status: 'live',
      category: 'industry',
    },
  ],
  ...extra,
});

beforeAll(async () => {
  sandbox = await cliSandbox('anchorage-cli-');
  ({ dataDir, env } = sandbox);
  expect((await cli(['migrate'])).code).toBe(0);
});

afterAll(async () => {
  await sandbox?.close();
});

describe('anchorage CLI', () => {
  it('creates users, prints their ids as JSON, and refuses a duplicate e-mail', async () => {
    const created = await cli(['user', 'create', '--email', 'owner@cli.test', '--password', 'secret-pass-1', '--account', 'Cli Co']);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({ user_id: expect.any(Number), account_id: expect.any(Number) });
    const again = await cli(['user', 'create', '--email', 'OWNER@cli.test', '--password', 'x']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('exists already');
  });

  it('creates a key (id, then the key alone on the last line) that the API accepts, and revokes it', async () => {
    const created = await cli(['key', 'create', '--email', 'owner@cli.test', '--name', 'CI', '--read-only']);
    expect(created.code).toBe(0);
    const lines = created.stdout.trim().split('\n');
    expect(lines.at(-1)).toMatch(/^ak_[0-9A-Za-z]{40}$/);
    expect(lines[0]).toMatch(/^id: \d+$/);
    const id = lines[0]!.slice(4);
    expect((await cli(['key', 'revoke', id])).code).toBe(0);
    const twice = await cli(['key', 'revoke', id]);
    expect(twice.code).toBe(1);
    expect((await cli(['key', 'create', '--email', 'nobody@cli.test'])).code).toBe(1);
  });

  it('refuses a key past MAX_API_KEYS active keys with a message and exit 1', async () => {
    const saved = env;
    env = { ...env, MAX_API_KEYS: '1' };
    try {
      expect((await cli(['user', 'create', '--email', 'capped@cli.test', '--password', 'long enough password'])).code).toBe(0);
      expect((await cli(['key', 'create', '--email', 'capped@cli.test'])).code).toBe(0);
      const refused = await cli(['key', 'create', '--email', 'capped@cli.test']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('at most 1 active API keys');
      expect(refused.stdout).not.toMatch(/ak_/);
    } finally {
      env = saved;
    }
  });

  it('imports a file in input order, sanitising bodies and keeping protected links', async () => {
    const file = join(dataDir, 'import.json');
    writeFileSync(file, JSON.stringify({ sites: [site('owner@cli.test'), site('owner@cli.test', { name: 'Second', website_url: 'https://second.cli.example' })] }));
    const result = await cli(['import', file]);
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout) as { sites: { id: number; article_ids: number[]; backlink_ids: number[] }[] };
    expect(parsed.sites).toHaveLength(2);
    expect(parsed.sites[1]!.id).toBeGreaterThan(parsed.sites[0]!.id);
    expect(parsed.sites[0]!.article_ids).toHaveLength(1);
    expect(parsed.sites[0]!.backlink_ids).toHaveLength(1);
    const [article] = await rows<{ body: string; word_count: number }>('articles', ['id', parsed.sites[0]!.article_ids[0]!]);
    expect(article!.body).toBe('<p>Hello <a href="https://partner.example/" data-service-protected="backlink">partner</a> world</p>');
    expect(article!.word_count).toBe(3);
    const revisions = await rows<{ origin: string }>('revisions', ['article_id', parsed.sites[0]!.article_ids[0]!]);
    expect(revisions.map((r) => r.origin)).toEqual(['rewrite']);
  });

  it('reads the import from stdin with -', async () => {
    const result = await cli(['import', '-'], JSON.stringify({ sites: [site('owner@cli.test', { name: 'Stdin', website_url: 'https://stdin.cli.example' })] }));
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).sites).toHaveLength(1);
  });

  it('refuses a bad file with the JSON path of the first problem and imports nothing', async () => {
    const sitesBefore = (await rows('sites')).length;
    const articlesBefore = (await rows('articles')).length;
    const bad = site('owner@cli.test');
    (bad.articles[0] as { status: string }).status = 'live';
    const result = await cli(['import', '-'], JSON.stringify({ sites: [site('owner@cli.test', { name: 'Never' }), bad] }));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('$.sites[1].articles[0].status');
    const unknownOwner = await cli(['import', '-'], JSON.stringify({ sites: [site('owner@cli.test', { name: 'Never' }), site('ghost@cli.test')] }));
    expect(unknownOwner.code).toBe(1);
    expect(unknownOwner.stderr).toContain('$.sites[1].owner');
    const notJson = await cli(['import', '-'], '{"sites": [');
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain('Import failed at $');
    expect((await rows('sites')).length).toBe(sitesBefore);
    expect((await rows('articles')).length).toBe(articlesBefore);
  });

  it('serves, answers /healthz and /readyz, and on SIGTERM finishes and flushes the activity log', async () => {
    const key = (await cli(['key', 'create', '--email', 'owner@cli.test'])).stdout.trim().split('\n').at(-1)!;
    const port = 20000 + Math.floor(Math.random() * 20000);
    const server = startServer({ ...env, PORT: String(port), HOST: '127.0.0.1', DEMO_DATA: 'off' });
    const base = `http://127.0.0.1:${port}`;
    let ready = false;
    for (let i = 0; i < 100 && !ready; i++) {
      ready = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
      if (!ready) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ready).toBe(true);
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    const userAgent = `cli-test-${randomBytes(4).toString('hex')}`;
    const sites = await fetch(`${base}/api/v1/sites`, { headers: { authorization: `Bearer ${key}`, 'user-agent': userAgent } });
    expect(sites.status).toBe(200);
    expect(await stopServer(server)).toBe(0);
    // The record was buffered in memory: it must be in the database after the graceful stop.
    const logged = await rows<{ operation: string; status: number }>('activity_log', ['user_agent', userAgent]);
    expect(logged.map(({ operation, status }) => ({ operation, status }))).toEqual([{ operation: 'listSites', status: 200 }]);
  });

  it('rebuilds the counters from the rows with recount, which the imports (and no refused one) kept already', async () => {
    const before = await counterRows();
    expect(before).toEqual([
      [expect.objectContaining({ day: '2026-10-02', category: 'industry', n: 1 }), expect.anything(), expect.anything()],
      [expect.objectContaining({ month: '2026-10', category: 'industry', n: 1 }), expect.anything(), expect.anything()],
      [expect.objectContaining({ day: '2026-10-01', status: 'published', n: 1 }), expect.anything(), expect.anything()],
      [expect.objectContaining({ month: '2026-10', status: 'published', n: 1 }), expect.anything(), expect.anything()],
    ]);
    const result = await cli(['recount']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ backlinks: 3, articles: 3 });
    expect(await counterRows()).toEqual(before);
  });

  it('loads the demo data set and prints a working sign-in and key', async () => {
    const result = await cli(['demo']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('demo@anchorage.test');
    expect(result.stdout.trim().split('\n').at(-1)).toMatch(/^ak_[0-9A-Za-z]{40}$/);
  });
});
