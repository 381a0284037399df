import { setTimeout } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { KeyChangeListener } from '../../src/db/key-changes.js';
import { freePort } from '../helpers/harness.js';

// The listener's failure paths, against an address where no PostgreSQL answers: every answer is
// "changed" (keys are looked up), the outage is told once, and listening is tried again only
// after a pause. Hearing notices is tested against PostgreSQL in test/services/hot-path.test.ts.

const listeners: KeyChangeListener[] = [];
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
  const listener = new KeyChangeListener(CountedClient, url, (message) => warnings.push(message));
  listeners.push(listener);
  return { listener, warnings, connects };
}

describe('KeyChangeListener without a database to listen to', () => {
  it('answers "changed" every time, tells the outage once, and tries again only after a second', async () => {
    const { listener, warnings, connects } = await unreachable();
    expect(listener.changed()).toBe(true);
    await setTimeout(300);
    for (let i = 0; i < 20; i++) expect(listener.changed()).toBe(true);
    expect(connects).toHaveLength(1);
    expect(warnings).toEqual(['key change notices unavailable: API keys are looked up on every request until they are back']);

    await setTimeout(1_100);
    expect(listener.changed()).toBe(true);
    await setTimeout(300);
    expect(listener.changed()).toBe(true);
    expect(connects).toHaveLength(2);
    expect(warnings).toHaveLength(1);
  });

  it('once closed, never tries to listen again', async () => {
    const { listener, connects } = await unreachable();
    await listener.close();
    expect(listener.changed()).toBe(true);
    await setTimeout(100);
    expect(connects).toHaveLength(0);
  });
});
