import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config.js';
import { toTimestamp } from '../../src/core/time.js';
import { Housekeeping } from '../../src/services/housekeeping.js';
import { createCustomer, dialectName, useHarness, testDatabaseUrl } from '../helpers/harness.js';

const h = useHarness({ env: { ACTIVITY_RETENTION_DAYS: '30' } });
let customer: Awaited<ReturnType<typeof createCustomer>>;

const day = 86_400_000;
const at = (offsetMs: number) => toTimestamp(new Date(h.clock.now().getTime() + offsetMs));
const nothing = { sessions: 0, idempotency_keys: 0, oauth_codes: 0, oauth_tokens: 0, activity_log: 0, import_uploads: 0 };

beforeAll(async () => {
  customer = await createCustomer(h.services);
});

afterEach(async () => {
  // Each test starts from empty tables (and the harness clock's usual instant).
  h.clock.set('2026-11-15T12:00:00Z');
  await h.services.housekeeping.run();
  const db = h.services.db.kysely;
  for (const table of ['sessions', 'idempotency_keys', 'oauth_codes', 'oauth_tokens', 'activity_log', 'import_uploads'] as const) {
    await db.deleteFrom(table).execute();
  }
});

async function count(table: 'sessions' | 'idempotency_keys' | 'oauth_codes' | 'oauth_tokens' | 'activity_log' | 'import_uploads'): Promise<number> {
  const row = await h.services.db.kysely
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function activity(createdAt: string[]): Promise<void> {
  for (let i = 0; i < createdAt.length; i += 500) {
    await h.services.db.kysely
      .insertInto('activity_log')
      .values(createdAt.slice(i, i + 500).map((created_at) => ({ created_at, channel: 'api' as const, status: 200, duration_ms: 1 })))
      .execute();
  }
}

async function idempotency(createdAt: string[]): Promise<void> {
  for (let i = 0; i < createdAt.length; i += 500) {
    await h.services.db.kysely
      .insertInto('idempotency_keys')
      .values(
        createdAt.slice(i, i + 500).map((created_at, j) => ({
          account_id: customer.accountId,
          key: `key-${i + j}-${randomBytes(4).toString('hex')}`,
          fingerprint: 'f',
          state: 'done' as const,
          response: '{}',
          created_at,
        })),
      )
      .execute();
  }
}

/** A client and two connections (one revoked), with codes and tokens in every state. */
async function oauthRows(): Promise<{ kept: { codes: string[]; tokens: string[] } }> {
  const db = h.services.db.kysely;
  const clientId = `client-${randomBytes(4).toString('hex')}`;
  await db
    .insertInto('oauth_clients')
    .values({ client_id: clientId, kind: 'dcr', client_name: 'Test', redirect_uris: '[]', metadata: '{}', created_at: at(0) })
    .execute();
  const grant = (revoked: boolean) =>
    db
      .insertInto('oauth_grants')
      .values({ user_id: customer.userId, account_id: customer.accountId, client_id: clientId, scope: 'articles:read', created_at: at(-day), revoked_at: revoked ? at(-1000) : null })
      .returning('id')
      .executeTakeFirstOrThrow();
  const live = (await grant(false)).id;
  const revoked = (await grant(true)).id;
  const code = (hash: string, expiresAt: string, usedAt: string | null) =>
    db
      .insertInto('oauth_codes')
      .values({
        code_hash: hash,
        client_id: clientId,
        user_id: customer.userId,
        redirect_uri: 'http://localhost/cb',
        code_challenge: 'c',
        resource: 'r',
        scope: 'articles:read',
        created_at: at(-600_000),
        expires_at: expiresAt,
        used_at: usedAt,
        grant_id: usedAt ? live : null,
      })
      .execute();
  await code('expired', at(-1000), null);
  await code('spent-and-expired', at(-1000), at(-500_000));
  // Spent but not yet expired: kept, so that a replay still revokes its connection.
  await code('spent', at(300_000), at(-1000));
  await code('fresh', at(300_000), null);
  const token = (hash: string, grantId: number, kind: 'access' | 'refresh', expiresAt: string, extra: { rotated_at?: string; revoked_at?: string } = {}) =>
    db
      .insertInto('oauth_tokens')
      .values({ token_hash: hash, grant_id: grantId, kind, resource: 'r', created_at: at(-day), expires_at: expiresAt, ...extra })
      .execute();
  await token('expired-access', live, 'access', at(-1000));
  await token('revoked-access', live, 'access', at(3_600_000), { revoked_at: at(-1000) });
  await token('expired-refresh', live, 'refresh', at(-1000), { rotated_at: at(-2 * day) });
  await token('of-revoked-grant', revoked, 'refresh', at(29 * day));
  // A rotated refresh token that has not expired stays: presenting it again revokes the connection.
  await token('rotated-refresh', live, 'refresh', at(29 * day), { rotated_at: at(-1000) });
  await token('live-access', live, 'access', at(3_000_000));
  await token('live-refresh', live, 'refresh', at(30 * day));
  return { kept: { codes: ['fresh', 'spent'], tokens: ['live-access', 'live-refresh', 'rotated-refresh'] } };
}

describe(`housekeeping (${dialectName})`, () => {
  it('deletes expired sessions only, as the clock passes their end', async () => {
    const first = await h.services.sessions.start(customer.userId);
    h.clock.set('2026-11-20T12:00:00Z');
    const second = await h.services.sessions.start(customer.userId);
    expect(await h.services.housekeeping.run()).toEqual(nothing);
    h.clock.set('2026-11-22T12:00:01Z');
    expect(await h.services.housekeeping.run()).toEqual({ ...nothing, sessions: 1 });
    expect(await h.services.sessions.find(first.id)).toBeUndefined();
    expect((await h.services.sessions.find(second.id))?.user?.userId).toBe(customer.userId);
    expect(await count('sessions')).toBe(1);
  });

  it('deletes idempotency records past 24 hours, in batches, and keeps younger ones', async () => {
    await idempotency([...Array.from({ length: 1203 }, () => at(-25 * 3_600_000)), at(-23 * 3_600_000)]);
    expect(await h.services.housekeeping.run()).toEqual({ ...nothing, idempotency_keys: 1203 });
    expect(await count('idempotency_keys')).toBe(1);
    h.clock.set(at(3_601_000));
    expect(await h.services.housekeeping.run()).toEqual({ ...nothing, idempotency_keys: 1 });
  });

  it('deletes expired codes (spent ones too, once expired) and expired, revoked and revoked-connection tokens', async () => {
    const { kept } = await oauthRows();
    expect(await h.services.housekeeping.run()).toEqual({ ...nothing, oauth_codes: 2, oauth_tokens: 4 });
    const db = h.services.db.kysely;
    expect((await db.selectFrom('oauth_codes').select('code_hash').orderBy('code_hash').execute()).map((r) => r.code_hash)).toEqual(kept.codes);
    expect((await db.selectFrom('oauth_tokens').select('token_hash').orderBy('token_hash').execute()).map((r) => r.token_hash)).toEqual(
      kept.tokens,
    );
    h.clock.set(at(31 * day));
    expect(await h.services.housekeeping.run()).toEqual({ ...nothing, oauth_codes: 2, oauth_tokens: 3 });
  });

  it('deletes activity records older than ACTIVITY_RETENTION_DAYS, oldest first in batches', async () => {
    await activity([...Array.from({ length: 1100 }, () => at(-31 * day)), at(-30 * day - 1000), at(-29 * day), at(0)]);
    expect(await h.services.housekeeping.run()).toEqual({ ...nothing, activity_log: 1101 });
    expect(await count('activity_log')).toBe(2);
    h.clock.set(at(day + 1000));
    expect(await h.services.housekeeping.run()).toEqual({ ...nothing, activity_log: 1 });
    expect(await count('activity_log')).toBe(1);
  });

  it('deletes staff’s import uploads a day old, in every state but applying, unless the apply’s process stopped stamping it a day ago', async () => {
    const states = ['checking', 'refused', 'planned', 'applying', 'applied', 'failed'] as const;
    // An apply under way was stamped a second ago; the last row's process died a day ago.
    const stamped = (state: (typeof states)[number], created_at: string) => ({ state, created_at, updated_at: state === 'applying' ? at(-1000) : created_at });
    const rows = [
      ...states.map((state) => stamped(state, at(-day - 1000))),
      ...states.map((state) => stamped(state, at(-day + 60_000))),
      { state: 'applying' as const, created_at: at(-day - 2000), updated_at: at(-day - 1000) },
    ];
    await h.services.db.kysely
      .insertInto('import_uploads')
      .values(
        rows.map(({ state, created_at, updated_at }, i) => ({
          token_hash: `hash-${i}-${randomBytes(4).toString('hex')}`,
          user_id: customer.userId,
          session_hash: 's',
          size: 12,
          plan: '{}',
          state,
          created_at,
          updated_at,
        })),
      )
      .execute();
    // A planned upload's file goes with it.
    const ids = await h.services.db.kysely.selectFrom('import_uploads').select('id').where('state', 'in', ['planned', 'applying']).orderBy('id').execute();
    await h.services.db.kysely.insertInto('import_upload_files').values(ids.map(({ id }) => ({ upload_id: id, bytes: Buffer.from('{"sites":[]}') }))).execute();
    expect(await h.services.housekeeping.run()).toEqual({ ...nothing, import_uploads: 6 });
    expect(await h.services.db.kysely.selectFrom('import_upload_files').select('upload_id').orderBy('upload_id').execute()).toEqual(ids.slice(1, -1).map(({ id }) => ({ upload_id: id })));
    const left = await h.services.db.kysely.selectFrom('import_uploads').select(['state', 'created_at']).orderBy('id').execute();
    expect(left).toEqual([{ state: 'applying', created_at: at(-day - 1000) }, ...states.map((state) => ({ state, created_at: at(-day + 60_000) }))]);
    h.clock.set(at(61_000));
    expect(await h.services.housekeeping.run()).toEqual({ ...nothing, import_uploads: 5 });
    expect(await count('import_uploads')).toBe(2);
  });

  it('runs hourly and keeps 400 days of activity by default; refuses nonsense settings', () => {
    expect(loadSettings({}).housekeeping).toEqual({ intervalMs: 3_600_000, activityRetentionDays: 400 });
    expect(loadSettings({ HOUSEKEEPING_INTERVAL_MS: '0' }).housekeeping.intervalMs).toBe(0);
    expect(() => loadSettings({ ACTIVITY_RETENTION_DAYS: '0' })).toThrow(/ACTIVITY_RETENTION_DAYS/);
    expect(() => loadSettings({ HOUSEKEEPING_INTERVAL_MS: '-1' })).toThrow(/HOUSEKEEPING_INTERVAL_MS/);
  });

  it('runs one pass at a time in a process', async () => {
    await activity(Array.from({ length: 10 }, () => at(-31 * day)));
    const [a, b] = await Promise.all([h.services.housekeeping.run(), h.services.housekeeping.run()]);
    expect([a, b].filter((r) => r === undefined)).toHaveLength(1);
    expect([a, b].find((r) => r !== undefined)).toEqual({ ...nothing, activity_log: 10 });
  });

  it('runs on its schedule until stopped', async () => {
    const scheduled = new Housekeeping(h.services.db, h.clock, { intervalMs: 30, activityRetentionDays: 30 });
    const passes: number[] = [];
    scheduled.schedule(
      (deleted) => passes.push(deleted.activity_log),
      (error) => {
        throw error;
      },
    );
    await activity([at(-31 * day)]);
    for (let i = 0; i < 100 && passes.reduce((a, b) => a + b, 0) === 0; i++) await sleep(20);
    await activity([at(-31 * day), at(-31 * day)]);
    for (let i = 0; i < 100 && passes.reduce((a, b) => a + b, 0) < 3; i++) await sleep(20);
    await scheduled.stop();
    expect(passes.reduce((a, b) => a + b, 0)).toBe(3);
    const after = passes.length;
    await activity([at(-31 * day)]);
    await sleep(100);
    expect(passes.length).toBe(after);
    expect(await count('activity_log')).toBe(1);
  });

  it.skipIf(!testDatabaseUrl)('leaves the pass to the node holding the advisory lock', async () => {
    await activity([at(-31 * day)]);
    const other = new pg.Client({ connectionString: testDatabaseUrl });
    await other.connect();
    try {
      await other.query('select pg_advisory_lock(7321002)');
      expect(await h.services.housekeeping.run()).toBeUndefined();
      expect(await count('activity_log')).toBe(1);
      await other.query('select pg_advisory_unlock(7321002)');
      expect(await h.services.housekeeping.run()).toEqual({ ...nothing, activity_log: 1 });
    } finally {
      await other.end();
    }
  });
});
