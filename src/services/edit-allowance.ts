import { type Kysely, type Transaction, sql } from 'kysely';
import { AppError } from '../core/errors.js';
import { addDays, parseDay, toDay } from '../core/time.js';
import type { Database } from '../db/schema.js';
import type { LimitState } from './limits.js';

export const editsPerDay = 200;

/** Seconds until the next UTC midnight, when the allowance renews. */
function untilMidnight(now: Date): { resetAt: number; retryAfter: number } {
  const midnight = addDays(parseDay(toDay(now))!, 1).getTime();
  return { resetAt: Math.ceil(midnight / 1000), retryAfter: Math.max(1, Math.ceil((midnight - now.getTime()) / 1000)) };
}

/**
 * 200 article writes per account per UTC day, across API and MCP. The count lives in the
 * database and is taken inside the write's transaction with one conditional upsert (a day's first
 * write inserts 1, a later one adds 1 while the count is under the allowance), so concurrent
 * writes on any node cannot exceed it, and a write that fails gives its unit back by rolling back.
 */
export class EditAllowance {
  constructor(private readonly db: Kysely<Database>) {}

  /** Takes `units` edits (a site-wide replace takes one per changed article), all or none. */
  async take(trx: Transaction<Database>, accountId: number, now: Date, units = 1): Promise<LimitState> {
    const day = toDay(now);
    const updated = units > editsPerDay
      ? undefined
      : await trx
          .insertInto('edit_counts')
          .values({ account_id: accountId, day, count: units })
          .onConflict((oc) =>
            oc
              .columns(['account_id', 'day'])
              .doUpdateSet({ count: sql`edit_counts.count + ${units}` })
              .where('edit_counts.count', '<=', editsPerDay - units),
          )
          .returning('count')
          .executeTakeFirst();
    const window = untilMidnight(now);
    if (!updated) {
      throw new AppError(
        'edit_limit_exceeded',
        `At most ${editsPerDay} article edits per UTC day per account; the allowance renews at midnight UTC.`,
        { limit: editsPerDay },
        window.retryAfter,
      );
    }
    return { allowed: true, limit: editsPerDay, remaining: editsPerDay - updated.count, ...window };
  }

  /** The allowance left today, without taking any. */
  async peek(accountId: number, now: Date): Promise<LimitState> {
    const row = await this.db
      .selectFrom('edit_counts')
      .select('count')
      .where('account_id', '=', accountId)
      .where('day', '=', toDay(now))
      .executeTakeFirst();
    return { allowed: true, limit: editsPerDay, remaining: editsPerDay - (row?.count ?? 0), ...untilMidnight(now) };
  }
}
