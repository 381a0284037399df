import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ActivityLog, type ActivityEntry } from '../../src/services/activity.js';
import { ActivitySpill } from '../../src/services/activity-spill.js';
import { createCustomer, type Harness, isolatedPostgresUrl, startHarness, testDatabaseUrl } from '../helpers/harness.js';

// A batch of activity records the database refused was dropped. It is now
// tried again, then kept in a spill file under DATA_DIR, whose records are stored once the
// database takes writes again: every answered call keeps its record.

let harness: Harness | undefined;
let dropSchema: (() => Promise<void>) | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await dropSchema?.();
  dropSchema = undefined;
});

const requestIdsIn = async (h: Harness, ids: string[]) =>
  (await h.services.db.kysely.selectFrom('activity_log').select('request_id').where('request_id', 'in', ids).execute()).map((r) => r.request_id).sort();

/** A trigger that makes the database refuse every insert into activity_log, and its removal. */
async function refuseActivity(h: Harness): Promise<() => Promise<void>> {
  const db = h.services.db.kysely;
  if (h.services.db.dialect === 'postgres') {
    await sql`create function refuse_activity() returns trigger language plpgsql as $$ begin raise exception 'refused for the test'; end $$`.execute(db);
    await sql`create trigger refuse_activity before insert on activity_log for each statement execute function refuse_activity()`.execute(db);
    return async () => {
      await sql`drop trigger refuse_activity on activity_log`.execute(db);
      await sql`drop function refuse_activity()`.execute(db);
    };
  }
  await sql`create trigger refuse_activity before insert on activity_log begin select raise(abort, 'refused for the test'); end`.execute(db);
  return async () => {
    await sql`drop trigger refuse_activity`.execute(db);
  };
}

const spillDir = (h: Harness) => join(h.settings.dataDir, 'activity-spill');
const spilledLines = (h: Harness) =>
  existsSync(spillDir(h))
    ? readdirSync(spillDir(h)).flatMap((name) => readFileSync(join(spillDir(h), name), 'utf8').split('\n').filter(Boolean))
    : [];

describe('activity records the database refuses', () => {
  it('are kept in the spill file, then stored once it takes writes again: every answered call has its record, once', { timeout: 60_000 }, async () => {
    harness = await startHarness();
    const h = harness;
    const customer = await createCustomer(h.services);
    const allow = await refuseActivity(h);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = `refused-${i}`;
      const response = await h.app.inject({ method: 'GET', url: '/api/v1/sites', headers: { authorization: `Bearer ${customer.key}`, 'x-request-id': id } });
      expect(response.statusCode).toBe(200);
      ids.push(id);
    }
    // Tried again (250 ms, 1 s later), then spilled.
    await h.services.activity.flush();
    expect(await requestIdsIn(h, ids)).toEqual([]);
    const spilled = spilledLines(h).map((line) => (JSON.parse(line) as { request_id: string }).request_id);
    expect(spilled).toEqual(ids);

    // Still refused: the replay keeps them (nothing lost, nothing stored twice).
    const unread = await h.app.inject({ method: 'GET', url: '/api/v1/sites', headers: { authorization: `Bearer ${customer.key}`, 'x-request-id': 'refused-5' } });
    expect(unread.statusCode).toBe(200);
    ids.push('refused-5');
    await h.services.activity.flush();
    expect(spilledLines(h).map((line) => (JSON.parse(line) as { request_id: string }).request_id).sort()).toEqual([...ids].sort());

    await allow();
    const after = await h.app.inject({ method: 'GET', url: '/api/v1/sites', headers: { authorization: `Bearer ${customer.key}`, 'x-request-id': 'accepted' } });
    expect(after.statusCode).toBe(200);
    await h.services.activity.flush();
    expect(await requestIdsIn(h, [...ids, 'accepted'])).toEqual([...ids, 'accepted'].sort());
    expect(spilledLines(h)).toEqual([]);
    const stored = await h.services.db.kysely.selectFrom('activity_log').selectAll().where('request_id', '=', 'refused-0').executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ account_id: customer.accountId, api_key_id: customer.keyId, channel: 'api', method: 'GET', path: '/api/v1/sites', status: 200 });
  });

  it('a batch refused once is stored on the next try, with no spill file', async () => {
    harness = await startHarness();
    const h = harness;
    const errors: unknown[] = [];
    const log = new ActivityLog(h.services.db.kysely, (error) => errors.push(error), new ActivitySpill(spillDir(h)), [10]);
    const insert = vi.spyOn(log as unknown as { insert: (batch: unknown[]) => Promise<void> }, 'insert').mockRejectedValueOnce(new Error('connection lost'));
    const entry = (id: string): ActivityEntry => ({
      actor: null,
      channel: 'api',
      request: { id, operation: null, method: 'GET', path: '/api/v1/sites', tool: null, clientIp: null, userAgent: null, startedAt: Date.now() },
      outcome: { status: 401, error: 'unauthenticated' },
    });
    log.record(entry('retried-0'));
    log.record(entry('retried-1'));
    await log.flush();
    expect(insert).toHaveBeenCalledTimes(2);
    expect(errors).toEqual([]);
    expect(await requestIdsIn(h, ['retried-0', 'retried-1'])).toEqual(['retried-0', 'retried-1']);
    expect(spilledLines(h)).toEqual([]);
  });

  it.runIf(testDatabaseUrl)('a batch whose PostgreSQL connection is terminated is stored on the next try', { timeout: 60_000 }, async () => {
    const application = `anchorage-activity-kill-${process.pid}`;
    const withName = (url: string) => {
      const named = new URL(url);
      named.searchParams.set('application_name', application);
      return named.toString();
    };
    // The node's own connections carry a name of their own: only they are terminated.
    const schema = await isolatedPostgresUrl(testDatabaseUrl!);
    dropSchema = schema.drop;
    harness = await startHarness({ env: { DATABASE_URL: withName(schema.url) } });
    const h = harness;
    // The pool's idle connections report the termination too.
    h.services.db.pool!.on('error', () => undefined);
    const customer = await createCustomer(h.services);
    const ids = ['killed-0', 'killed-1', 'killed-2'];
    for (const id of ids) {
      const response = await h.app.inject({ method: 'GET', url: '/api/v1/sites', headers: { authorization: `Bearer ${customer.key}`, 'x-request-id': id } });
      expect(response.statusCode).toBe(200);
    }
    // Another connection holds the table, so the batch's insert is in flight when its connection is terminated.
    const admin = new pg.Client({ connectionString: schema.url });
    await admin.connect();
    try {
      await admin.query('begin');
      await admin.query('lock table activity_log in access exclusive mode');
      const flushed = h.services.activity.flush();
      const killer = new pg.Client({ connectionString: testDatabaseUrl });
      await killer.connect();
      let terminated = 0;
      for (let i = 0; i < 100 && terminated === 0; i++) {
        await sleep(50);
        const { rows } = await killer.query<{ pid: number }>(
          `select pid from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'`,
          [application],
        );
        for (const { pid } of rows) await killer.query('select pg_terminate_backend($1)', [pid]);
        terminated = rows.length;
      }
      await killer.end();
      expect(terminated).toBeGreaterThan(0);
      await admin.query('commit');
      await flushed;
    } finally {
      await admin.end();
    }
    expect(await requestIdsIn(h, ids)).toEqual(ids);
    expect(spilledLines(h)).toEqual([]);
  });
});
