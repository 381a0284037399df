import { setImmediate as nextTurn } from 'node:timers/promises';
import { type DeleteQueryBuilder, type DeleteResult, type Kysely, sql } from 'kysely';
import type { HousekeepingSettings } from '../config.js';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import type { Db } from '../db/connect.js';
import type { Database } from '../db/schema.js';

/** Rows one pass deleted, per table. */
export interface HousekeepingCounts {
  sessions: number;
  idempotency_keys: number;
  oauth_codes: number;
  oauth_tokens: number;
  activity_log: number;
  import_uploads: number;
}

/** Idempotency-Key records are answered for 24 hours (decisions: idempotency). */
const idempotencyKeepMs = 24 * 3_600_000;
/** Staff's UI import uploads are kept a day (docs/operations.md, "Import"), unless being applied. */
const importUploadsKeepMs = 24 * 3_600_000;
/** Rows per DELETE: on SQLite a statement holds the event loop while it runs. */
const batchSize = 500;
/** The PostgreSQL advisory lock that lets one node at a time run a pass (the migrations use 7321001). */
const housekeepingLockId = 7321002;

type Deletion = (db: Kysely<Database>) => DeleteQueryBuilder<Database, keyof Database, DeleteResult>;

/**
 * Deletes what can never be used again: expired sessions, idempotency records past their 24 hours,
 * expired OAuth codes (spent ones are kept until then, so a replay still revokes its connection),
 * expired or revoked OAuth tokens and every token of a revoked connection (a rotated refresh token
 * stays until it expires, for the same reason), activity records past the retention, and staff's
 * UI import uploads after a day, unless being applied. Several
 * nodes take turns through a PostgreSQL advisory lock; each DELETE takes a bounded batch.
 */
export class Housekeeping {
  private running: Promise<HousekeepingCounts | undefined> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly settings: HousekeepingSettings,
  ) {}

  /** One pass; undefined when another node (or this one) is running a pass right now. */
  async run(): Promise<HousekeepingCounts | undefined> {
    if (this.running) return undefined;
    this.running = this.db.dialect === 'postgres' ? this.runLocked() : this.deleteAll(this.db.kysely);
    try {
      return await this.running;
    } finally {
      this.running = undefined;
    }
  }

  /** Runs a pass now and then every interval until `stop`; failures go to `onError`. */
  schedule(onDone: (counts: HousekeepingCounts) => void, onError: (error: unknown) => void): void {
    if (this.settings.intervalMs === 0) return;
    const pass = async () => {
      try {
        const counts = await this.run();
        if (counts) onDone(counts);
      } catch (error) {
        onError(error);
      }
      if (!this.stopped) this.timer = setTimeout(pass, this.settings.intervalMs).unref();
    };
    this.timer = setTimeout(pass, 0).unref();
  }

  /** Stops the schedule; a pass under way ends after its current batch. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** The lock is held by one connection for the whole pass; it goes with the connection if that dies. */
  private async runLocked(): Promise<HousekeepingCounts | undefined> {
    return this.db.kysely.connection().execute(async (connection) => {
      const locked = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${housekeepingLockId}) as locked`.execute(connection);
      if (!locked.rows[0]?.locked) return undefined;
      try {
        return await this.deleteAll(connection);
      } finally {
        await sql`select pg_advisory_unlock(${housekeepingLockId})`.execute(connection);
      }
    });
  }

  private async deleteAll(db: Kysely<Database>): Promise<HousekeepingCounts> {
    const now = this.clock.now();
    const nowText = toTimestamp(now);
    const idempotencyCutoff = toTimestamp(new Date(now.getTime() - idempotencyKeepMs));
    const activityCutoff = toTimestamp(new Date(now.getTime() - this.settings.activityRetentionDays * 86_400_000));
    const uploadsCutoff = toTimestamp(new Date(now.getTime() - importUploadsKeepMs));
    return {
      sessions: await this.inBatches(db, (d) =>
        d
          .deleteFrom('sessions')
          .where('id_hash', 'in', (eb) => eb.selectFrom('sessions').select('id_hash').where('expires_at', '<=', nowText).limit(batchSize)),
      ),
      idempotency_keys: await this.inBatches(db, (d) =>
        d
          .deleteFrom('idempotency_keys')
          .where((eb) =>
            eb(
              eb.refTuple('account_id', 'key'),
              'in',
              eb
                .selectFrom('idempotency_keys')
                .select(['account_id', 'key'])
                .where('created_at', '<', idempotencyCutoff)
                .limit(batchSize)
                .$asTuple('account_id', 'key'),
            ),
          ),
      ),
      oauth_codes: await this.inBatches(db, (d) =>
        d
          .deleteFrom('oauth_codes')
          .where('code_hash', 'in', (eb) => eb.selectFrom('oauth_codes').select('code_hash').where('expires_at', '<=', nowText).limit(batchSize)),
      ),
      oauth_tokens: await this.inBatches(db, (d) =>
        d.deleteFrom('oauth_tokens').where('token_hash', 'in', (eb) =>
          eb
            .selectFrom('oauth_tokens')
            .select('token_hash')
            .where((w) =>
              w.or([
                w('expires_at', '<=', nowText),
                w('revoked_at', 'is not', null),
                w('grant_id', 'in', w.selectFrom('oauth_grants').select('id').where('revoked_at', 'is not', null)),
              ]),
            )
            .limit(batchSize),
        ),
      ),
      activity_log: await this.oldActivity(db, activityCutoff),
      import_uploads: await this.inBatches(db, (d) =>
        d
          .deleteFrom('import_uploads')
          .where('id', 'in', (eb) =>
            eb
              .selectFrom('import_uploads')
              .select('id')
              .where('created_at', '<', uploadsCutoff)
              // An apply under way stamps its upload; one not stamped for a day has no process left.
              .where((w) => w.or([w('state', '<>', 'applying'), w('updated_at', '<', uploadsCutoff)]))
              .limit(batchSize),
          ),
      ),
    };
  }

  /**
   * The log has no index on its time (every request writes a row), but ids grow with time: each
   * batch reads the oldest rows by id and deletes those past the cutoff, until a batch holds newer
   * ones. A row logged late behind newer ones goes in a later pass.
   */
  private async oldActivity(db: Kysely<Database>, cutoff: string): Promise<number> {
    let deleted = 0;
    for (;;) {
      const oldest = await db.selectFrom('activity_log').select(['id', 'created_at']).orderBy('id').limit(batchSize).execute();
      const expired = oldest.filter((row) => row.created_at < cutoff).map((row) => row.id);
      if (expired.length > 0) await db.deleteFrom('activity_log').where('id', 'in', expired).execute();
      deleted += expired.length;
      if (expired.length < batchSize || this.stopped) return deleted;
      await nextTurn();
    }
  }

  /** Repeats one bounded DELETE until it finds less than a batch, letting other work run between. */
  private async inBatches(db: Kysely<Database>, deletion: Deletion): Promise<number> {
    let deleted = 0;
    for (;;) {
      const result = await deletion(db).executeTakeFirst();
      const n = Number(result.numDeletedRows);
      deleted += n;
      if (n < batchSize || this.stopped) return deleted;
      await nextTurn();
    }
  }
}
