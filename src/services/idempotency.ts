import type { Kysely } from 'kysely';
import { AppError, type ErrorBody } from '../core/errors.js';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import { isUniqueViolation } from '../db/connect.js';
import type { Database } from '../db/schema.js';

/**
 * A stored success: the result of a write, whose large article body may be held by a revision
 * instead (`bodyRevision`; the stored result's body is then empty).
 */
export interface StoredSuccess<T> {
  ok: true;
  result: T;
  bodyRevision?: number;
}

/** A stored first outcome: the result of a write, or the error it was refused with. */
export type StoredOutcome<T> = StoredSuccess<T> | { ok: false; error: ErrorBody; status: number };

const keepMs = 24 * 3_600_000;
const waitStepMs = 50;
const waitLimitMs = 30_000;

/**
 * Idempotency-Key handling. The first request with a key claims it (a unique row), runs, and
 * stores its outcome — a successful write stores it in the write's own transaction, so a crash
 * can never leave a change without its stored response. A retry replays that outcome; a
 * concurrent duplicate waits for the first to finish; the same key for another request is refused.
 */
export class IdempotencyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  /**
   * Claims `key` for `fingerprint`. Returns undefined when this request may run, or the stored
   * outcome of the first request to replay; waits while the first one is still running.
   */
  async claim<T>(accountId: number, key: string, fingerprint: string): Promise<StoredOutcome<T> | undefined> {
    const now = this.clock.now();
    await this.db
      .deleteFrom('idempotency_keys')
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('created_at', '<', toTimestamp(new Date(now.getTime() - keepMs)))
      .execute();
    for (let waited = 0; ; waited += waitStepMs) {
      try {
        await this.db
          .insertInto('idempotency_keys')
          .values({ account_id: accountId, key, fingerprint, state: 'pending', response: null, created_at: toTimestamp(now) })
          .execute();
        return undefined;
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      const row = await this.db
        .selectFrom('idempotency_keys')
        .select(['fingerprint', 'state', 'response'])
        .where('account_id', '=', accountId)
        .where('key', '=', key)
        .executeTakeFirst();
      if (row && row.fingerprint !== fingerprint) {
        throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for a different request in the last 24 hours.');
      }
      if (row?.state === 'done' && row.response) return JSON.parse(row.response) as StoredOutcome<T>;
      if (waited >= waitLimitMs) throw new AppError('internal_error', 'The first request with this Idempotency-Key is still running.');
      await new Promise((resolve) => setTimeout(resolve, waitStepMs));
    }
  }

  /** Stores the outcome; a successful write passes its own transaction. */
  async complete<T>(trx: Kysely<Database>, accountId: number, key: string, outcome: StoredOutcome<T>): Promise<void> {
    await trx
      .updateTable('idempotency_keys')
      .set({ state: 'done', response: JSON.stringify(outcome) })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .execute();
  }

  /** Gives the key back: a retry will run the request again. */
  async release(accountId: number, key: string): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('state', '=', 'pending').execute();
  }
}
