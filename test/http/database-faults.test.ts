import { randomBytes } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentConnectionMs, trustMs } from '../../src/db/change-notices.js';
import { DatabaseUnavailable } from '../../src/db/unavailable.js';
import { manualGrant, rawMcp } from '../helpers/oauth-client.js';
import { FreezableProxy } from '../helpers/freezable-proxy.js';
import { type Harness, isolatedPostgresUrl, startHarness, testDatabaseUrl } from '../helpers/harness.js';
import type { ApiResponse } from '../helpers/fixtures.js';
import { getArticle, newKey, patch, seedArticle, type SeededArticle } from '../helpers/write-fixtures.js';

// Two nodes on one PostgreSQL schema, as a deployment runs them. Their connections carry an
// application_name of this file's own, so terminating them leaves every other test's alone.
// Node B listens for change notices through a proxy the test can freeze (DATABASE_LISTEN_URL).

const appName = `anchorage-faults-${randomBytes(4).toString('hex')}`;
let shared: Awaited<ReturnType<typeof isolatedPostgresUrl>>;
let admin: pg.Client;
let proxy: FreezableProxy;
let a: Harness;
let b: Harness;
/** Errors nothing caught: an EventEmitter's 'error' without a listener would end a real process. */
const uncaught: unknown[] = [];
const noteUncaught = (error: unknown) => uncaught.push(error);

/** Terminates every backend of the two nodes; returns how many. */
async function terminateNodesConnections(): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()',
    [appName],
  );
  return rows[0]!.n;
}

/** Every answer is a success or the catalogue's 503 with Retry-After, never another failure. */
function expectServedOrUnavailable(answers: ApiResponse[]): void {
  for (const answer of answers) {
    if (answer.status === 200) continue;
    expect({ status: answer.status, body: answer.body }).toMatchObject({ status: 503, body: { error: 'service_unavailable' } });
    expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
  }
}

/** Waits (at most `withinMs`) until `check` answers true; returns how long it took (ms). */
async function within(withinMs: number, check: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  while (!(await check())) {
    if (performance.now() - start > withinMs) throw new Error(`not within ${withinMs} ms`);
    await setTimeout(50);
  }
  return performance.now() - start;
}

/** Runs `sql` on the nodes' schema, from outside them. */
async function elsewhere(sql: string): Promise<void> {
  const schema = /search_path=(\w+)/.exec(new URL(shared.url).searchParams.get('options')!)![1];
  await admin.query(`set search_path = ${schema}`);
  await admin.query(sql);
}

/** Revokes a key with its notice switched off: only a node that reads it from the database sees it. */
async function revokeUnheard(keyId: number): Promise<void> {
  await elsewhere('alter table api_keys disable trigger api_keys_changed');
  try {
    await elsewhere(`update api_keys set revoked_at = '2026-11-15T12:00:00Z' where id = ${keyId}`);
  } finally {
    await elsewhere('alter table api_keys enable trigger api_keys_changed');
  }
}

/**
 * Repeats `request` until `done` says its answer is the one awaited, within the bound and a few
 * seconds for a busy machine; returns when (performance.now) each request not yet answered so started.
 */
async function startsUntil(request: () => Promise<ApiResponse>, done: (answer: ApiResponse) => boolean): Promise<number[]> {
  const starts: number[] = [];
  const end = performance.now() + trustMs + 5_000;
  for (;;) {
    const startedAt = performance.now();
    const answer = await request();
    if (done(answer)) return starts;
    starts.push(startedAt);
    if (performance.now() > end) throw new Error(`still not done after ${trustMs + 5_000} ms; the last answer: ${answer.status} ${answer.text}`);
    await setTimeout(50);
  }
}

const metaOf = (answer: ApiResponse) => (answer.body as { data?: { meta_description?: string } }).data?.meta_description;

/** A key (and article) node B has looked up and keeps, its change notices heard meanwhile. */
async function keptOnB(): Promise<SeededArticle> {
  const seeded = await seedArticle(a.services);
  for (let i = 0; i < 3; i++) {
    expect((await getArticle(b, seeded.articleId, seeded.customer.key)).status).toBe(200);
    await setTimeout(150);
  }
  return seeded;
}

describe.skipIf(!testDatabaseUrl)('PostgreSQL: connections that fail', () => {
  beforeAll(async () => {
    process.on('uncaughtException', noteUncaught);
    shared = await isolatedPostgresUrl(testDatabaseUrl!);
    const url = new URL(shared.url);
    url.searchParams.set('application_name', appName);
    admin = new pg.Client({ connectionString: testDatabaseUrl });
    await admin.connect();
    proxy = new FreezableProxy(url.hostname, Number(url.port || 5432));
    const listenUrl = new URL(url);
    listenUrl.host = `127.0.0.1:${await proxy.start()}`;
    a = await startHarness({ listen: true, env: { DATABASE_URL: url.toString() } });
    b = await startHarness({ env: { DATABASE_URL: url.toString(), DATABASE_LISTEN_URL: listenUrl.toString() } });
  });

  afterAll(async () => {
    proxy?.thaw();
    await a?.close();
    await b?.close();
    await proxy?.close();
    await admin?.end();
    await shared?.drop();
    process.off('uncaughtException', noteUncaught);
  });

  it('idle: every connection terminated, both nodes live on and answer at once', async () => {
    const seeded = await seedArticle(a.services);
    for (let i = 0; i < 3; i++) {
      for (const node of [a, b]) expect((await getArticle(node, seeded.articleId, seeded.customer.key)).status).toBe(200);
      await setTimeout(100);
    }

    // The pools' idle connections and the two listening ones.
    expect(await terminateNodesConnections()).toBeGreaterThanOrEqual(4);
    await setTimeout(300);
    expect(uncaught).toEqual([]);
    for (const node of [a, b]) {
      const answers = [await getArticle(node, seeded.articleId, seeded.customer.key)];
      answers.push(await patch(node, seeded.articleId, seeded.customer.key, { meta_description: `After the end ${node === a ? 'A' : 'B'}.` }));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    }
  });

  it('requests waiting on the database when their connections end answer 503 with Retry-After (REST), service_unavailable (MCP)', async () => {
    const seeded = await seedArticle(a.services);
    const { key } = seeded.customer;
    const grant = await manualGrant(a.settings.publicUrl, seeded.customer.email);
    // Not one of the nodes' connections: it outlives their termination.
    const locker = new pg.Client({ connectionString: shared.url });
    await locker.connect();
    let answers: [ApiResponse, ApiResponse, Response];
    try {
      await locker.query('begin');
      await locker.query('lock table articles in access exclusive mode');
      const waiting = Promise.all([
        getArticle(b, seeded.articleId, key),
        patch(a, seeded.articleId, key, { meta_description: 'Never saved.' }),
        rawMcp(a.settings.publicUrl, grant.tokens.access_token as string, {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'get_article', arguments: { article_id: seeded.articleId } },
        }),
      ]);
      await within(10_000, async () => {
        const { rows } = await admin.query<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'",
          [appName],
        );
        return rows[0]!.n >= 3;
      });
      await terminateNodesConnections();
      answers = await waiting;
    } finally {
      await locker.query('rollback');
      await locker.end();
    }

    const [read, write, tool] = answers;
    expectServedOrUnavailable([read, write]);
    expect([read.status, write.status]).toEqual([503, 503]);
    expect(tool.status).toBe(200);
    const { result } = (await tool.json()) as { result: { isError?: boolean; content: { text: string }[] } };
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0]!.text)).toMatchObject({ error: 'service_unavailable' });
    expect(uncaught).toEqual([]);
    // The refused write changed nothing; both nodes serve again. A terminated backend may end an
    // idle pooled connection only after the waiting requests answered: a read on it is a 503, and
    // is tried again as a client would.
    for (const node of [a, b]) {
      let answer: ApiResponse | undefined;
      await within(5_000, async () => {
        answer = await getArticle(node, seeded.articleId, key);
        expectServedOrUnavailable([answer]);
        return answer.status === 200;
      });
      expect([answer!.status, metaOf(answer!)]).toEqual([200, 'Original meta.']);
    }
  });

  it('under load: requests whose connection ends answer 503 with Retry-After, the rest 200; both nodes recover', async () => {
    const seeded = await seedArticle(a.services);
    // Each key has 60 requests a minute: a worker moves to its next key every 50.
    const keys = [seeded.customer.key];
    while (keys.length < 16) keys.push((await newKey(a.services, seeded.customer.userId)).key);
    const answers: ApiResponse[] = [];
    let running = true;
    const worker = async (node: Harness, first: number) => {
      for (let n = 0; running && n < 200; n++) {
        const key = keys[first + Math.floor(n / 50)]!;
        answers.push(
          n % 4 === 3
            ? await patch(node, seeded.articleId, key, { meta_description: `Edit ${first} ${n}.` })
            : await getArticle(node, seeded.articleId, key),
        );
      }
    };
    const workers = [worker(a, 0), worker(a, 4), worker(b, 8), worker(b, 12)];
    let terminated = 0;
    for (let i = 0; i < 6; i++) {
      await setTimeout(300);
      terminated += await terminateNodesConnections();
    }
    running = false;
    await Promise.all(workers);

    expect(uncaught).toEqual([]);
    expect(terminated).toBeGreaterThan(6);
    expectServedOrUnavailable(answers);
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200, 503]));

    // The last termination may reach an idle pooled connection after the load: a call on it fails
    // as unavailable (a request's 503), so the key is made again as a client would retry.
    let fresh = '';
    await within(5_000, async () => {
      try {
        fresh = (await newKey(a.services, seeded.customer.userId)).key;
        return true;
      } catch (error) {
        if (error instanceof DatabaseUnavailable) return false;
        throw error;
      }
    });
    for (const node of [a, b]) {
      await within(5_000, async () => (await getArticle(node, seeded.articleId, fresh)).status === 200);
      expect((await patch(node, seeded.articleId, fresh, { meta_description: 'After the load.' })).status).toBe(200);
    }
  });

  it(`a node whose listening connection is frozen refuses a key revoked elsewhere within ${trustMs} ms, and shows edits made elsewhere`, async () => {
    const revoked = await keptOnB();
    const edited = await keptOnB();
    proxy.freeze();
    try {
      await elsewhere(`update api_keys set revoked_at = '2026-11-15T12:00:00Z' where id = ${revoked.customer.keyId}`);
      const revokedAt = performance.now();
      expect((await patch(a, edited.articleId, edited.customer.key, { meta_description: 'Edited on node A.' })).status).toBe(200);
      const editedAt = performance.now();

      const stillValid = await startsUntil(
        () => getArticle(b, revoked.articleId, revoked.customer.key),
        (answer) => answer.status === 401,
      );
      const stillOld = await startsUntil(
        () => getArticle(b, edited.articleId, edited.customer.key),
        (answer) => metaOf(answer) === 'Edited on node A.',
      );
      // Each request is decided as it starts: none that started past the bound used what B kept.
      for (const startedAt of stillValid) expect(startedAt - revokedAt).toBeLessThan(trustMs);
      for (const startedAt of stillOld) expect(startedAt - editedAt).toBeLessThan(trustMs);
      // Still frozen: nothing is answered from what B keeps.
      await setTimeout(500);
      expect((await getArticle(b, revoked.articleId, revoked.customer.key)).status).toBe(401);
    } finally {
      proxy.thaw();
    }
  });

  it('thawed after the node closed the silent connection, it listens again and keeps keys again', async () => {
    const seeded = await keptOnB();
    const accepted = proxy.accepted;
    proxy.freeze();
    await setTimeout(silentConnectionMs + 1_500);
    proxy.thaw();
    // Keys are kept again once a key B looked up answers from memory though revoked unheard.
    await within(20_000, async () => {
      const fresh = await newKey(a.services, seeded.customer.userId);
      for (let i = 0; i < 2; i++) {
        if ((await getArticle(b, seeded.articleId, fresh.key)).status !== 200) return false;
        await setTimeout(100);
      }
      await revokeUnheard(fresh.keyId);
      return (await getArticle(b, seeded.articleId, fresh.key)).status === 200;
    });
    expect(proxy.accepted).toBeGreaterThan(accepted);
  });
});
