import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSandbox, cliSandbox, runCli } from '../helpers/cli.js';

// Through the built bin/anchorage: the monthly delivery of
// docs/operations.md imported twice, the dry run, and every problem of a bad file.

const run = promisify(execFile);
// Each test starts several processes (seconds each on a busy machine).
const slow = { timeout: 300_000 };
const example = join(import.meta.dirname, '../../docs/examples/monthly-delivery.json');

let sandbox: CliSandbox;
const cli = (args: string[], input?: string) => runCli(args, { env: sandbox.env, input });

/** Every row an import may write, read through the built connection code. */
async function snapshot(): Promise<{ rows: unknown[]; activity: number }> {
  const { stdout } = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { sql } from 'kysely';
       import { connect } from '${join(import.meta.dirname, '../../dist/db/connect.js')}';
       const db = connect(process.env.DATABASE_URL, process.env.DATA_DIR);
       const tables = ['sites', 'articles', 'revisions', 'backlinks', 'backlink_day_counts', 'backlink_month_counts', 'article_day_counts', 'article_month_counts'];
       const rows = [];
       for (const t of tables) rows.push((await sql\`select * from \${sql.table(t)} order by 1, 2, 3\`.execute(db.kysely)).rows);
       const activity = (await sql\`select count(*) as n from activity_log where channel = 'cli' and operation = 'import'\`.execute(db.kysely)).rows[0].n;
       console.log(JSON.stringify({ rows, activity: Number(activity) })); await db.kysely.destroy();`,
    ],
    { env: sandbox.env },
  );
  return JSON.parse(stdout) as { rows: unknown[]; activity: number };
}

interface Plan {
  problems: { path: string; message: string }[];
  more_problems: number;
  sites: { id: number | null; site: string; articles: Record<string, number>; backlinks: Record<string, number> }[];
}

beforeAll(async () => {
  sandbox = await cliSandbox('anchorage-upsert-');
  expect((await cli(['migrate'])).code).toBe(0);
  expect((await cli(['user', 'create', '--email', 'owner@riverside.example', '--password', 'long enough password'])).code).toBe(0);
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
});

describe('anchorage import of a monthly delivery', () => {
  it('plans the example with --dry-run and writes nothing', slow, async () => {
    const before = await snapshot();
    const result = await cli(['import', '--dry-run', example]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      problems: [],
      more_problems: 0,
      sites: [{ id: null, site: 'created', articles: { created: 3, updated: 0, unchanged: 0 }, backlinks: { created: 3, updated: 0, unchanged: 0 } }],
    });
    expect(result.stderr).toContain('Dry run: nothing was written.');
    expect(await snapshot()).toEqual(before);
  });

  it('imports the example twice: the second time changes nothing but adds one activity record', slow, async () => {
    const first = await cli(['import', example]);
    expect(first.code).toBe(0);
    const created = JSON.parse(first.stdout) as { sites: { id: number; site: string; article_ids: number[]; backlink_ids: number[] }[] };
    expect(created.sites[0]).toMatchObject({ site: 'created', articles: { created: 3, updated: 0, unchanged: 0 }, backlinks: { created: 3, updated: 0, unchanged: 0 } });
    const before = await snapshot();
    const second = await cli(['import', example]);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({
      sites: [{ ...created.sites[0], site: 'unchanged', articles: { created: 0, updated: 0, unchanged: 3 }, backlinks: { created: 0, updated: 0, unchanged: 3 } }],
    });
    const after = await snapshot();
    expect(after.rows).toEqual(before.rows);
    expect(after.activity).toBe(before.activity + 1);
    const plan = JSON.parse((await cli(['import', '--dry-run', '-'], readFileSync(example, 'utf8'))).stdout) as Plan;
    expect(plan.sites).toEqual([{ id: created.sites[0]!.id, site: 'unchanged', articles: { created: 0, updated: 0, unchanged: 3 }, backlinks: { created: 0, updated: 0, unchanged: 3 } }]);
  });

  it("takes next month's delivery: a rewritten article, a new one, a backlink lost", slow, async () => {
    const delivery = JSON.parse(readFileSync(example, 'utf8')) as { sites: { articles: Record<string, unknown>[]; backlinks: Record<string, unknown>[] }[] };
    const site = delivery.sites[0]!;
    site.articles = [
      { ...site.articles[1], body: '<p>Rewritten: whitening toothpaste removes surface stains only.</p>' },
      { url: 'https://riverside.example/blog/new', title: 'New', status: 'draft', body: '<p>New.</p>' },
    ];
    site.backlinks = [{ ...site.backlinks[0], status: 'lost' }];
    const file = join(sandbox.dataDir, 'december.json');
    writeFileSync(file, JSON.stringify(delivery));
    const planned = JSON.parse((await cli(['import', '--dry-run', file])).stdout) as Plan;
    const result = await cli(['import', file]);
    expect(result.code).toBe(0);
    const done = JSON.parse(result.stdout) as Plan;
    expect(done.sites[0]).toMatchObject({ site: 'unchanged', articles: { created: 1, updated: 1, unchanged: 0 }, backlinks: { created: 0, updated: 1, unchanged: 0 } });
    expect(planned.sites[0]).toEqual({ id: done.sites[0]!.id, site: done.sites[0]!.site, articles: done.sites[0]!.articles, backlinks: done.sites[0]!.backlinks });
    // The counters kept by the imports are what a rebuild from the rows gives.
    const kept = (await snapshot()).rows.slice(4);
    expect((await cli(['recount'])).code).toBe(0);
    expect((await snapshot()).rows.slice(4)).toEqual(kept);
  });
});

describe('anchorage export', () => {
  it('writes the account in the import format: imported back, nothing changes; into an empty database, it exports byte for byte the same', slow, async () => {
    const exported = await cli(['export', '--account', 'owner@riverside.example']);
    expect(exported.code).toBe(0);
    const file = JSON.parse(exported.stdout) as { sites: { owner: string; articles: unknown[]; backlinks: unknown[] }[] };
    expect(file.sites.map((s) => [s.owner, s.articles.length, s.backlinks.length])).toEqual([['owner@riverside.example', 4, 3]]);
    const again = JSON.parse((await cli(['import', '-'], exported.stdout)).stdout) as Plan;
    expect(again.sites).toEqual([expect.objectContaining({ site: 'unchanged', articles: { created: 0, updated: 0, unchanged: 4 }, backlinks: { created: 0, updated: 0, unchanged: 3 } })]);

    const empty = await cliSandbox('anchorage-export-');
    try {
      const there = (args: string[], input?: string) => runCli(args, { env: empty.env, input });
      expect((await there(['migrate'])).code).toBe(0);
      expect((await there(['user', 'create', '--email', 'owner@riverside.example', '--password', 'long enough password'])).code).toBe(0);
      expect((await there(['import', '-'], exported.stdout)).code).toBe(0);
      const second = await there(['export', '--account', 'owner@riverside.example']);
      expect(second.code).toBe(0);
      expect(second.stdout).toBe(exported.stdout);
    } finally {
      await empty.close();
    }
  });

  it('refuses an unknown account, and a call without one', slow, async () => {
    const unknown = await cli(['export', '--account', 'nobody@nowhere.test']);
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'no account with id or user e-mail nobody@nowhere.test\n' });
    expect((await cli(['export'])).code).toBe(1);
  });
});

describe('anchorage import of a file with problems', () => {
  const bad = () => {
    const delivery = JSON.parse(readFileSync(example, 'utf8')) as { sites: Record<string, unknown>[] & { articles: Record<string, unknown>[]; backlinks: Record<string, unknown>[] }[] };
    const site = delivery.sites[0]!;
    site.articles[2] = { ...site.articles[0], title: 'Same url again' };
    site.backlinks = Array.from({ length: 120 }, (_, i) => ({ ...site.backlinks[0], source_url: `https://s${i}.example/`, category: 'national' }));
    return JSON.stringify(delivery);
  };

  it('--dry-run lists every problem up to the cap, counts the rest, exits 1 and writes nothing', slow, async () => {
    const before = await snapshot();
    const result = await cli(['import', '--dry-run', '-'], bad());
    expect(result.code).toBe(1);
    const plan = JSON.parse(result.stdout) as Plan;
    expect(plan.problems[0]).toEqual({ path: '$.sites[0].articles[2]', message: 'Same key as $.sites[0].articles[0]: an article is matched by its url, so give each once.' });
    expect(plan.problems[1]).toEqual({ path: '$.sites[0].backlinks[0].category', message: 'Must be one of "industry", "local".' });
    expect(plan.problems).toHaveLength(100);
    expect(plan.more_problems).toBe(21);
    expect(plan.sites).toEqual([]);
    expect(result.stderr).toContain('121 problems. Dry run: nothing was written.');
    expect(await snapshot()).toEqual(before);
  });

  it('without --dry-run prints every problem on stderr, exits 1 and writes nothing', slow, async () => {
    const before = await snapshot();
    const result = await cli(['import', '-'], bad());
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toBe('Import failed at $.sites[0].articles[2]: Same key as $.sites[0].articles[0]: an article is matched by its url, so give each once.');
    expect(lines.filter((line) => line.startsWith('Import failed at '))).toHaveLength(100);
    expect(lines.slice(-2)).toEqual(['… and 21 more problems.', 'Nothing was imported.']);
    expect(result.stdout).toBe('');
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a second file name or an unknown option', slow, async () => {
    expect((await cli(['import', example, example])).code).toBe(1);
    expect((await cli(['import', '--dry', example])).code).toBe(1);
  });
});
