import { setTimeout } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeListener } from '../../src/db/change-notices.js';
import { freePort } from '../helpers/harness.js';

// The listener's failure paths, against an address where no PostgreSQL answers: every watch
// answers "changed" (keys and sites are read from the database), the outage is told once, and
// listening is tried again only after a pause. Hearing notices is tested against PostgreSQL in
// test/services/hot-path.test.ts.

const listeners: ChangeListener[] = [];
afterEach(async () => {
  await Promise.all(listeners.splice(0).map((listener) => listener.close()));
});

async function unreachable() {
  const warnings: string[] = [];
  const connects: number[] = [];
  /** A client made for each try to listen. */
  class CountedClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      connects.push(Date.now());
    }
  }
  const url = `postgres://postgres@127.0.0.1:${await freePort()}/test`;
  const listener = new ChangeListener(CountedClient, url, (message) => warnings.push(message));
  listeners.push(listener);
  return { listener, keys: listener.watch('keys'), sites: listener.watch('sites'), warnings, connects };
}

describe('ChangeListener without a database to listen to', () => {
  it('answers "changed" every time, tells the outage once, and tries again after a second, then after pauses that double', async () => {
    const { keys, sites, warnings, connects } = await unreachable();
    expect(keys()).toBe(true);
    await setTimeout(300);
    for (let i = 0; i < 20; i++) expect([keys(), sites()]).toEqual([true, true]);
    expect(connects).toHaveLength(1);
    expect(warnings).toEqual(['change notices unavailable: API keys, OAuth access tokens, sites and articles are read from the database on every request until they are back']);

    await setTimeout(1_100);
    expect(sites()).toBe(true);
    await setTimeout(300);
    expect(keys()).toBe(true);
    expect(connects).toHaveLength(2);
    expect(warnings).toHaveLength(1);

    // The second failure pauses two seconds.
    await setTimeout(1_100);
    expect(keys()).toBe(true);
    expect(connects).toHaveLength(2);
    await setTimeout(1_500);
    expect(keys()).toBe(true);
    expect(connects).toHaveLength(3);
  });

  it('once closed, never tries to listen again', async () => {
    const { listener, keys, connects } = await unreachable();
    await listener.close();
    expect(keys()).toBe(true);
    await setTimeout(100);
    expect(connects).toHaveLength(0);
  });
});
