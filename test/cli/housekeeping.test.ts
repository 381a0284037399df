import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Db } from '../../src/db/connect.js';
import { type CliSandbox, cliSandbox, runCli, startServer, stopServer } from '../helpers/cli.js';
import { freePort, testDatabaseUrl } from '../helpers/harness.js';

let sandbox: CliSandbox;
let db: Db;

const cli = (args: string[]) => runCli(args, { env: sandbox.env });

const iso = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Rows past their time in every table housekeeping looks at, and one current activity record. */
async function expiredRows(accountId: number, userId: number): Promise<void> {
  await db.kysely
    .insertInto('sessions')
    .values({ id_hash: randomBytes(8).toString('hex'), user_id: userId, csrf_token: 'x', created_at: iso(-8), expires_at: iso(-1), flash: null })
    .execute();
  await db.kysely
    .insertInto('idempotency_keys')
    .values({ account_id: accountId, key: randomBytes(8).toString('hex'), fingerprint: 'f', state: 'done', response: '{}', created_at: iso(-2) })
    .execute();
  await db.kysely
    .insertInto('activity_log')
    .values([iso(-401), iso(0)].map((created_at) => ({ created_at, channel: 'api' as const, status: 200, duration_ms: 1 })))
    .execute();
}

async function count(table: 'sessions' | 'idempotency_keys' | 'activity_log'): Promise<number> {
  const row = await db.kysely
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function oldActivity(): Promise<number> {
  const row = await db.kysely
    .selectFrom('activity_log')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('created_at', '<', iso(-400))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

let owner: { user_id: number; account_id: number };

beforeAll(async () => {
  sandbox = await cliSandbox('anchorage-cli-housekeeping-', { DEMO_DATA: 'off' });
  const created = await cli(['user', 'create', '--email', 'housekeeping@cli.test', '--password', 'long enough password']);
  expect(created.code, created.stderr).toBe(0);
  owner = JSON.parse(created.stdout);
  db = connect(sandbox.env.DATABASE_URL, sandbox.dataDir);
});

afterAll(async () => {
  await db?.kysely.destroy();
  await sandbox?.close();
});

describe('anchorage housekeeping', () => {
  it('deletes what is past its time and prints the counts as JSON', { timeout: 120_000 }, async () => {
    await expiredRows(owner.account_id, owner.user_id);
    const result = await cli(['housekeeping']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ sessions: 1, idempotency_keys: 1, oauth_codes: 0, oauth_tokens: 0, activity_log: 1, import_uploads: 0 });
    expect(await oldActivity()).toBe(0);
    expect(await count('activity_log')).toBe(1);
    const again = await cli(['housekeeping']);
    expect(JSON.parse(again.stdout)).toEqual({ sessions: 0, idempotency_keys: 0, oauth_codes: 0, oauth_tokens: 0, activity_log: 0, import_uploads: 0 });
  });

  it.skipIf(!testDatabaseUrl)('exits 1 and deletes nothing while another node holds the housekeeping lock', { timeout: 120_000 }, async () => {
    await expiredRows(owner.account_id, owner.user_id);
    const other = new pg.Client({ connectionString: testDatabaseUrl });
    await other.connect();
    try {
      await other.query('select pg_advisory_lock(7321002)');
      const refused = await cli(['housekeeping']);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain('Another node is running housekeeping right now; nothing was deleted.');
      expect(await oldActivity()).toBe(1);
    } finally {
      await other.end();
    }
    expect(JSON.parse((await cli(['housekeeping'])).stdout)).toMatchObject({ sessions: 1, activity_log: 1 });
  });

  it('runs on its own in a serving node, at start and then every HOUSEKEEPING_INTERVAL_MS', { timeout: 120_000 }, async () => {
    await expiredRows(owner.account_id, owner.user_id);
    const current = (await count('activity_log')) - (await oldActivity());
    const port = await freePort();
    const server = startServer({ ...sandbox.env, PORT: String(port), HOST: '127.0.0.1', HOUSEKEEPING_INTERVAL_MS: '500' });
    try {
      const emptied = async () => (await count('sessions')) === 0 && (await count('idempotency_keys')) === 0 && (await oldActivity()) === 0;
      for (let i = 0; i < 300 && !(await emptied()); i++) await sleep(200);
      expect(await emptied()).toBe(true);
      await expiredRows(owner.account_id, owner.user_id);
      for (let i = 0; i < 100 && !(await emptied()); i++) await sleep(200);
      expect(await emptied()).toBe(true);
      // The current records stay.
      expect(await count('activity_log')).toBe(current + 1);
    } finally {
      await stopServer(server);
    }
  });
});
