import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, type CliSandbox, cliSandbox, runCli } from '../helpers/cli.js';
import { testDatabaseUrl } from '../helpers/harness.js';

// The built `anchorage import` streams and prints exactly what it
// printed before (progress only on a terminal); `anchorage backup` copies a SQLite database.

const owner = 'stream-owner@cli.test';
// Each command starts a process (seconds on a busy machine).
const slow = { timeout: 120_000 };

let sandbox: CliSandbox;
let dataDir: string;
let env: NodeJS.ProcessEnv;

const cli = (args: string[], input?: string) => runCli(args, { env, input });

/** The command on a pseudo-terminal (util-linux `script`), stdout to `out`: what a terminal shows. */
function onTerminal(args: string[], out: string): Promise<{ code: number; terminal: string }> {
  const command = [process.execPath, bin, ...args].map((a) => `'${a}'`).join(' ');
  return new Promise((resolve) => {
    execFile('script', ['-qec', `${command} > '${out}'`, '/dev/null'], { env }, (error, stdout) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, terminal: stdout }),
    );
  });
}

let files = 0;
/** An import file of new sites each time (its own addresses). */
const file = (backlinks: number) => {
  const website = `https://streamed-${++files}.example`;
  return {
    sites: [
      {
        owner,
        name: 'Streamed',
        website_url: website,
        articles: [{ title: 'One', url: `${website}/one`, status: 'published', published_at: '2026-10-01T09:00:00Z', body: '<p>One two</p>' }],
        backlinks: Array.from({ length: backlinks }, (_, i) => ({
          source_url: `https://source.example/${i}`,
          target_url: `${website}/`,
          anchor_text: `b${i}`,
          category: 'industry',
          acquired_at: '2026-10-02T10:00:00Z',
        })),
      },
      { owner, name: 'Empty', website_url: `${website}/empty` },
    ],
  };
};

const idsOf = (stdout: string) => JSON.parse(stdout) as { sites: { id: number; article_ids: number[]; backlink_ids: number[] }[] };

beforeAll(async () => {
  sandbox = await cliSandbox('anchorage-cli-stream-');
  ({ dataDir, env } = sandbox);
  expect((await cli(['migrate'])).code).toBe(0);
  expect((await cli(['user', 'create', '--email', owner, '--password', 'long enough password'])).code).toBe(0);
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
});

describe('anchorage import, streamed', () => {
  it('prints the result as one line of compact JSON, every id in input order, and nothing on stderr when it is not a terminal', slow, async () => {
    const path = join(dataDir, 'many.json');
    writeFileSync(path, JSON.stringify(file(1500)));
    const result = await cli(['import', path]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const printed = idsOf(result.stdout);
    expect(result.stdout).toBe(`${JSON.stringify(printed)}\n`);
    expect(printed.sites.map((s) => [s.article_ids.length, s.backlink_ids.length])).toEqual([[1, 1500], [0, 0]]);
    const backlinks = printed.sites[0]!.backlink_ids;
    expect(backlinks.slice(1).every((id, i) => id > backlinks[i]!)).toBe(true);

    const fromStdin = await cli(['import', '-'], JSON.stringify(file(3)));
    expect(fromStdin).toMatchObject({ code: 0, stderr: '' });
    expect(idsOf(fromStdin.stdout).sites[0]!.backlink_ids[0]).toBe(backlinks.at(-1)! + 1);
  });

  it('shows progress on a terminal, on stderr only: the JSON on stdout is unchanged', slow, async () => {
    const path = join(dataDir, 'tty.json');
    const out = join(dataDir, 'tty-out.json');
    writeFileSync(path, JSON.stringify(file(900)));
    const { code, terminal } = await onTerminal(['import', path], out);
    expect(code).toBe(0);
    expect(terminal).toMatch(/Checking, then importing \[.*\] 100% \| [\d.]+ of [\d.]+ MB \| 1 articles, 900 backlinks, 2 sites/);
    const printed = readFileSync(out, 'utf8');
    expect(printed).toBe(`${JSON.stringify(idsOf(printed))}\n`);
    expect(idsOf(printed).sites[0]!.backlink_ids).toHaveLength(900);

    const refused = await onTerminal(['import', join(dataDir, 'absent.json')], out);
    expect(refused.code).toBe(1);
    expect(refused.terminal).toContain('ENOENT');
  });

  it('refuses a bad file at its path, writing nothing', slow, async () => {
    const bad = file(1200);
    (bad.sites[1] as Record<string, unknown>).articles = [{ url: 'https://streamed.example/bad', status: 'live', body: '' }];
    const before = await cli(['import', '-'], JSON.stringify(file(0)));
    const result = await cli(['import', '-'], JSON.stringify(bad));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^Import failed at \$\.sites\[1\]\.articles\[0\]\.status: .+\nNothing was imported\.\n$/);
    const after = await cli(['import', '-'], JSON.stringify(file(0)));
    // The refused rows' ids may be skipped, never reused: PostgreSQL's sequences move on, and
    // SQLite's import, committed in batches, deleted what it had written (its ids stay taken).
    expect(idsOf(after.stdout).sites[0]!.id).toBeGreaterThan(idsOf(before.stdout).sites[1]!.id);
    if (!testDatabaseUrl) {
      // Nothing of the refused import is left: no row of a site between the two good imports' sites.
      const between = [idsOf(before.stdout).sites[1]!.id, idsOf(after.stdout).sites[0]!.id];
      const left = {
        sites: 'select count(*) as n from sites where id > ? and id < ?',
        articles: 'select count(*) as n from articles where site_id > ? and site_id < ?',
        backlinks: 'select count(*) as n from backlinks where site_id > ? and site_id < ?',
        backlink_day_counts: 'select count(*) as n from backlink_day_counts where site_id > ? and site_id < ?',
        revisions: 'select count(*) as n from revisions where article_id not in (select id from articles) and ? < ?',
      };
      const db = new SQLite(join(dataDir, 'anchorage.sqlite'), { readonly: true });
      try {
        for (const [table, query] of Object.entries(left)) expect(db.prepare(query).get(...between), table).toEqual({ n: 0 });
      } finally {
        db.close();
      }
    }
  });
});

describe('anchorage backup', () => {
  it.skipIf(testDatabaseUrl)('copies the SQLite database into a new file that opens and holds the rows', slow, async () => {
    const target = join(dataDir, 'backups-here', '..', 'backup.sqlite');
    const result = await cli(['backup', target]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(`Backup written to ${join(dataDir, 'backup.sqlite')}\n`);
    const live = new SQLite(join(dataDir, 'anchorage.sqlite'), { readonly: true });
    const copy = new SQLite(join(dataDir, 'backup.sqlite'), { readonly: true });
    try {
      for (const table of ['users', 'sites', 'articles', 'revisions', 'backlinks', 'backlink_day_counts']) {
        expect(count(copy, table), table).toBe(count(live, table));
      }
      expect(count(copy, 'backlinks')).toBeGreaterThan(1500);
      expect((copy.pragma('integrity_check') as { integrity_check: string }[])[0]!.integrity_check).toBe('ok');
    } finally {
      live.close();
      copy.close();
    }
    const again = await cli(['backup', target]);
    expect(again).toMatchObject({ code: 1, stdout: '' });
    expect(again.stderr).toBe(`${join(dataDir, 'backup.sqlite')} exists already; backup writes a new file\n`);
    const nowhere = await cli(['backup', join(dataDir, 'no-such-dir', 'b.sqlite')]);
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).not.toBe('');
  });

  it.runIf(testDatabaseUrl)('on PostgreSQL points to pg_dump, exits 2, writes nothing and never prints the database URL', slow, async () => {
    const target = join(dataDir, 'pg-backup.sqlite');
    const result = await cli(['backup', target]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('pg_dump --format=custom --file=FILE "$DATABASE_URL"');
    expect(result.stderr).not.toContain(new URL(testDatabaseUrl!).host);
    expect(existsSync(target)).toBe(false);
  });

  it('without a file prints the usage, which names backup', slow, async () => {
    const result = await cli(['backup']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('backup FILE');
  });
});

function count(db: SQLite.Database, table: string): number {
  return (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
}
