import { sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import { createCustomer, useHarness, testDatabaseUrl } from '../helpers/harness.js';

describe.skipIf(!testDatabaseUrl)('PostgreSQL: a node opens at most DATABASE_POOL_SIZE connections', () => {
  const harness = useHarness({ env: { DATABASE_POOL_SIZE: '2' } });

  it('queues the queries beyond them, and answers every request', async () => {
    const pool = harness.services.db.pool!;
    const slow = Array.from({ length: 5 }, () => sql`select pg_sleep(0.2)`.execute(harness.services.db.kysely));
    // Every query has asked the pool (each holds its connection for 200 ms): opened or waiting.
    await vi.waitFor(() => expect(pool.totalCount + pool.waitingCount).toBe(5), { interval: 5 });
    expect(pool.totalCount).toBe(2);
    expect(pool.waitingCount).toBe(3);
    await Promise.all(slow);

    const customer = await createCustomer(harness.services);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        harness.app.inject({ method: 'GET', url: '/api/v1/sites', headers: { authorization: `Bearer ${customer.key}` } }),
      ),
    );
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(12).fill(200));
    expect(pool.totalCount).toBeLessThanOrEqual(2);
  });
});
