import { describe, expect, it } from 'vitest';
import type { ActivityEntry } from '../../src/services/activity.js';
import type { Actor, RequestInfo } from '../../src/services/actor.js';
import { createCustomer, useHarness } from '../helpers/harness.js';

// Read calls' activity records are written in batches; a full batch (200) runs a statement
// compiled once (src/services/activity.ts). Every batch must store exactly what `row` gives.

describe('activity batches', () => {
  const harness = useHarness();

  it('stores full batches (the compiled statement, twice) and a partial one with every value as recorded', async () => {
    const customer = await createCustomer(harness.services, { email: 'batches@example.com' });
    const actorOf = (i: number): Actor => ({
      accountId: customer.accountId,
      userId: customer.userId,
      credential: i % 3 === 0 ? { kind: 'mcp_grant', id: 7 + i } : { kind: 'api_key', id: 1_000 + i },
      channel: i % 3 === 0 ? 'mcp' : 'api',
      staff: false,
      scopes: ['read'],
      request: null,
    });
    // In the future, so each record's duration is 0 whenever `row` is called.
    const startedAt = Date.now() + 3_600_000;
    const entryOf = (i: number): ActivityEntry => {
      const request: RequestInfo = {
        id: `batch-${i}`,
        operation: i % 5 === 0 ? null : 'getArticle',
        method: i % 3 === 0 ? null : 'GET',
        path: i % 3 === 0 ? null : `/api/v1/articles/${i}?q='"\\`,
        tool: i % 3 === 0 ? 'get_article' : null,
        clientIp: i % 4 === 0 ? null : '203.0.113.9',
        userAgent: i % 2 === 0 ? null : `agent ☃ ${i}`,
        startedAt,
      };
      return {
        actor: i % 11 === 0 ? null : actorOf(i),
        channel: i % 3 === 0 ? 'mcp' : 'api',
        request,
        outcome: { status: i % 7 === 0 ? 404 : 200, error: i % 7 === 0 ? 'not_found' : null },
      };
    };
    const entries = Array.from({ length: 403 }, (_, i) => entryOf(i));
    const { activity, db } = harness.services;
    for (const entry of entries) activity.record(entry);
    await activity.flush();

    const stored = await db.kysely.selectFrom('activity_log').selectAll().where('request_id', 'like', 'batch-%').orderBy('id').execute();
    expect(stored.map(({ id: _id, ...columns }) => columns)).toEqual(entries.map((entry) => activity.row(entry)));
  });
});
