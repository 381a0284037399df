import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { activityPlugin } from '../../src/http/activity.js';
import { closeListener } from '../../src/http/base.js';
import { buildMetricsApp } from '../../src/http/metrics.js';
import type { Services } from '../../src/services/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { articleRow, revisionsOf, seedArticle } from '../helpers/write-fixtures.js';

// A harness per case: each case ends by stopping its listener.
let h: Harness;
/** The listener's log lines of the case. */
let log: string[];

/** Longer than any case: a stop that waited for it would time the case out. */
const shutdownTimeoutMs = 60_000;

beforeEach(async () => {
  log = [];
  h = await startHarness({ listen: true, env: { SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) }, log: (line) => log.push(line) });
});

afterEach(async () => {
  await h?.close();
  // Nothing went wrong on the server's side: no error is logged (level 50 and up).
  expect(log.filter((line) => (JSON.parse(line) as { level: number }).level >= 50)).toEqual([]);
});

/** Large enough to go to the HTML pool and keep a thread busy a while. */
const body = `<p>${'<b>left</b> '.repeat(300_000)}</p>`;

/** Resolves once one edit is with `harness`'s HTML pool. */
async function untilPoolRuns(harness: Harness): Promise<void> {
  for (let i = 0; i < 1_000 && harness.services.htmlPool.running === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(harness.services.htmlPool.running).toBe(1);
}

/** PUTs `body` over a real connection and leaves once the edit is with the HTML pool. */
async function putAndLeave(articleId: number, key: string): Promise<void> {
  const payload = JSON.stringify({ title: 'Sent, then the client left', body });
  const sent = request(`${h.settings.publicUrl}/api/v1/articles/${articleId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
  });
  sent.on('error', () => undefined);
  sent.end(payload);
  await untilPoolRuns(h);
  sent.destroy();
}

const activityOf = async (keyId: number, harness = h) => {
  await harness.services.activity.flush();
  return harness.services.db.kysely.selectFrom('activity_log').select(['operation', 'method', 'status', 'error']).where('api_key_id', '=', keyId).execute();
};

describe('a client that leaves while its edit runs, then the node stops', () => {
  it('the edit is saved whole and logged before the listener reports stopped (the pool and database close after it)', async () => {
    const a = await seedArticle(h.services, { body: '<p>No protected links here.</p>' });
    const revisionsBefore = (await revisionsOf(h, a.articleId)).length;
    await putAndLeave(a.articleId, a.customer.key);
    await h.stop();

    expect(h.services.htmlPool.running).toBe(0);
    const row = await articleRow(h, a.articleId);
    expect(row.title).toBe('Sent, then the client left');
    expect(row.body).toBe(body);
    expect((await revisionsOf(h, a.articleId)).length).toBe(revisionsBefore + 1);
    expect(await activityOf(a.customer.keyId)).toEqual([{ operation: 'updateArticle', method: 'PUT', status: 200, error: null }]);
  }, 60_000);

  it('a refused edit is in the activity log with its error, nothing saved', async () => {
    // The seeded article holds protected links, which this body drops: refused after the pool's work.
    const a = await seedArticle(h.services);
    const before = await articleRow(h, a.articleId);
    await putAndLeave(a.articleId, a.customer.key);
    await h.stop();

    expect(h.services.htmlPool.running).toBe(0);
    expect(await articleRow(h, a.articleId)).toEqual(before);
    expect(await activityOf(a.customer.keyId)).toEqual([{ operation: 'updateArticle', method: 'PUT', status: 422, error: 'protected_links_violation' }]);
  }, 60_000);

  it('a client that leaves halfway through its request body holds nothing up', async () => {
    const a = await seedArticle(h.services);
    const before = await articleRow(h, a.articleId);
    const sent = request(`${h.settings.publicUrl}/api/v1/articles/${a.articleId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${a.customer.key}`, 'content-type': 'application/json', 'content-length': 1_000_000 },
    });
    sent.on('error', () => undefined);
    sent.write(`{"body":"${'x'.repeat(100_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    sent.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));

    const started = Date.now();
    await h.stop();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await articleRow(h, a.articleId)).toEqual(before);
    // The call is logged with the refusal the service answered to no one.
    const records = await activityOf(a.customer.keyId);
    expect(records).toEqual([expect.objectContaining({ operation: 'updateArticle', method: 'PUT' })]);
    expect(records[0]!.status).toBeGreaterThanOrEqual(400);
    expect(records[0]!.status).toBeLessThan(500);
  }, 30_000);
});

describe('a client that stays while the node stops', () => {
  it('gets its answer, and its kept-alive connection is closed once answered, not after the keep-alive timeout', async () => {
    const a = await seedArticle(h.services, { body: '<p>No protected links here.</p>' });
    // fetch keeps its connection alive for as long as the server's Keep-Alive header says (72 s).
    const answer = fetch(`${h.settings.publicUrl}/api/v1/articles/${a.articleId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${a.customer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Answered while stopping', body }),
    });
    await untilPoolRuns(h);

    const started = Date.now();
    await Promise.all([h.stop(), answer.then(async (response) => expect([response.status, (await response.json()).data.title]).toEqual([200, 'Answered while stopping']))]);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect((await articleRow(h, a.articleId)).title).toBe('Answered while stopping');
  }, 60_000);

  it('whose edit the pool drops as the node stops gets 503 with Retry-After, nothing saved; so does a later large edit', async () => {
    const a = await seedArticle(h.services, { body: '<p>No protected links here.</p>' });
    const before = await articleRow(h, a.articleId);
    const put = () =>
      fetch(`${h.settings.publicUrl}/api/v1/articles/${a.articleId}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${a.customer.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Never saved', body }),
      });
    const answer = put();
    await untilPoolRuns(h);
    // What the shutdown does once its deadline has passed: the threads stop under the edit.
    await h.services.htmlPool.close();

    for (const response of [await answer, await put()]) {
      expect([response.status, response.headers.get('retry-after')]).toEqual([503, '1']);
      expect(await response.json()).toEqual({ error: 'service_unavailable', message: expect.stringMatching(/node is stopping; nothing was saved/) });
    }
    expect(h.services.htmlPool.running).toBe(0);
    expect(await articleRow(h, a.articleId)).toEqual(before);
    expect(await activityOf(a.customer.keyId)).toEqual([
      { operation: 'updateArticle', method: 'PUT', status: 503, error: 'service_unavailable' },
      { operation: 'updateArticle', method: 'PUT', status: 503, error: 'service_unavailable' },
    ]);
  }, 60_000);

  it('whose edit is still on the pool at SHUTDOWN_TIMEOUT_MS is cut off, and its call is logged with 503, nothing saved', async () => {
    const short = await startHarness({ listen: true, env: { SHUTDOWN_TIMEOUT_MS: '300' }, log: (line) => log.push(line) });
    try {
      const a = await seedArticle(short.services, { body: '<p>No protected links here.</p>' });
      const before = await articleRow(short, a.articleId);
      const answer = fetch(`${short.settings.publicUrl}/api/v1/articles/${a.articleId}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${a.customer.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Cut off', body }),
      }).catch((error: unknown) => error);
      await untilPoolRuns(short);

      // As the node's shutdown deadline does (main.ts): the connections left are cut.
      const cut = setTimeout(() => short.app.server.closeAllConnections(), 300);
      await short.stop();
      clearTimeout(cut);

      expect(await answer).toBeInstanceOf(Error);
      expect(short.services.htmlPool.running).toBe(0);
      expect(await articleRow(short, a.articleId)).toEqual(before);
      expect(await activityOf(a.customer.keyId, short)).toEqual([{ operation: 'updateArticle', method: 'PUT', status: 503, error: 'service_unavailable' }]);
    } finally {
      await short.close();
    }
  }, 60_000);
});

describe('the METRICS_PORT listener, stopping while a scrape is answered', () => {
  it('closes the kept-alive connection once the answer is sent, not after the keep-alive timeout', async () => {
    const app = await buildMetricsApp({ services: h.services, settings: h.settings });
    let answer = () => {};
    const answerable = new Promise<void>((resolve) => (answer = resolve));
    let reached = () => {};
    const inHandler = new Promise<void>((resolve) => (reached = resolve));
    // Stands for a scrape of /metrics still being answered when the node stops.
    app.get('/held', async () => {
      reached();
      await answerable;
      return { answered: true };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const scrape = fetch(`http://127.0.0.1:${port}/held`);
    await inHandler;

    const started = Date.now();
    const stopped = closeListener(app);
    // Answered once the listener has stopped listening: the connection is kept alive, busy until then.
    while (app.server.listening) await new Promise((resolve) => setTimeout(resolve, 5));
    answer();
    const response = await scrape;
    expect([response.status, await response.json()]).toEqual([200, { answered: true }]);
    await stopped;
    // Fastify's keep-alive timeout is 72 s: a close that waited for it would time the case out.
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 60_000);
});

describe('handlersSettled (what a stopping node waits for, within SHUTDOWN_TIMEOUT_MS)', () => {
  it('gives up after its timeout while a handler still runs, waits for it otherwise, and answers at once when none runs', async () => {
    const a = await seedArticle(h.services, { body: '<p>No protected links here.</p>' });
    await putAndLeave(a.articleId, a.customer.key);

    const started = Date.now();
    await h.app.handlersSettled(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    // It gave up: the edit is still with the HTML pool.
    expect(h.services.htmlPool.running).toBe(1);

    await h.app.handlersSettled(shutdownTimeoutMs);
    expect(h.services.htmlPool.running).toBe(0);
    expect((await articleRow(h, a.articleId)).body).toBe(body);

    const idle = Date.now();
    await h.app.handlersSettled(shutdownTimeoutMs);
    expect(Date.now() - idle).toBeLessThan(1_000);
  }, 60_000);

  it('does not wait for a request whose client left while a hook before its handler was pending', async () => {
    // As a request waiting for its turn of a busy loop (http/turns.ts): once its client has left,
    // its body never comes, its handler never runs, and no onSend ever comes for it.
    const app = Fastify();
    await app.register(activityPlugin, { services: { activity: { record: () => undefined } } as unknown as Services });
    let hookReached = () => {};
    const reached = new Promise<void>((resolve) => (hookReached = resolve));
    app.addHook('onRequest', (_request, _reply, done) => {
      hookReached();
      setTimeout(done, 300);
    });
    app.post('/slow', async () => ({ answered: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const sent = request(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/slow`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': 1_000 },
      });
      sent.on('error', () => undefined);
      sent.write('{"left":');
      await reached;
      sent.destroy();
      await new Promise((resolve) => setTimeout(resolve, 500));

      const started = Date.now();
      await app.handlersSettled(shutdownTimeoutMs);
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      await app.close();
    }
  }, 30_000);
});
