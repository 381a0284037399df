import type { Kysely } from 'kysely';
import { KeptRows } from '../core/kept-rows.js';
import { apiKeyPattern, newApiKey, sha256 } from '../core/secrets.js';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import type { DialectName } from '../db/connect.js';
import { precompiled } from '../db/precompiled.js';
import type { Database } from '../db/schema.js';
import type { Actor, RequestInfo } from './actor.js';

export interface ApiKeySummary {
  id: number;
  name: string;
  display_prefix: string;
  read_only: boolean;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface CreatedKey {
  id: number;
  /** Shown once; only its hash is kept. */
  key: string;
}

/** last_used_at moves at most this often per key. */
const lastUsedGranularityMs = 60_000;
/** Uses wait this long in memory and are then written together, off the requests' path. */
const lastUsedFlushMs = 1_000;
/** Key ids per UPDATE, well under either database's limit on bound parameters. */
const lastUsedBatch = 500;

/** Valid keys kept in memory (by hash); past this many the oldest is dropped. */
const knownKeysMax = 10_000;

interface KnownKey {
  id: number;
  account_id: number;
  user_id: number;
  read_only: number;
  staff: number;
}

/** The account holds as many active keys as it may: revoke one first. */
export class TooManyKeysError extends Error {
  constructor(readonly limit: number) {
    super(`An account may hold at most ${limit} active API keys. Revoke one you no longer use, then create the new one.`);
  }
}

export class KeysService {
  /** When each key's use was last recorded (ms); entries older than the granularity are dropped. */
  private readonly lastUsedRecorded = new Map<number, number>();
  /** Recorded uses not yet written: key id → timestamp. */
  private readonly pendingUses = new Map<number, string>();
  private flushTimer: NodeJS.Timeout | undefined;

  /** The unrevoked key with a hash, and its user's staff flag. */
  private readonly byHash;
  /**
   * Valid keys already looked up, by hash: a request's key costs no query. Another process's
   * revocation is seen through `changedElsewhere` (SQLite within 100 ms, PostgreSQL as its notice
   * arrives); this process's own revoke forgets them at once.
   */
  private readonly known: KeptRows<string, KnownKey>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    private readonly clock: Clock,
    /** Whether keys may have changed elsewhere (`Db.watchChanges('keys')`). */
    changedElsewhere: () => boolean,
    /** Active (unrevoked) keys one account may hold. */
    readonly maxActive = 100,
  ) {
    this.known = new KeptRows(changedElsewhere, knownKeysMax);
    this.byHash = precompiled(
      db,
      db
        .selectFrom('api_keys')
        .innerJoin('users', 'users.id', 'api_keys.user_id')
        .select(['api_keys.id', 'api_keys.account_id', 'api_keys.user_id', 'api_keys.read_only', 'users.staff'])
        .where('api_keys.key_hash', '=', '')
        .where('api_keys.revoked_at', 'is', null),
    );
  }

  /** A new key; TooManyKeysError when the account already holds `maxActive` active keys. */
  async create(userId: number, options: { name?: string; readOnly?: boolean }): Promise<CreatedKey> {
    const user = await this.db.selectFrom('users').select(['id', 'account_id']).where('id', '=', userId).executeTakeFirstOrThrow();
    const key = newApiKey();
    // The insert and the count are one step for the account, so concurrent creations cannot all
    // count before any inserts. PostgreSQL: they wait on the account's row. SQLite: the insert
    // comes first and takes the write lock, waiting for another process's (a read first could not
    // take it later while another process writes: "database is locked").
    const row = await this.db.transaction().execute(async (trx) => {
      if (this.dialect === 'postgres') {
        await trx.selectFrom('accounts').select('id').where('id', '=', user.account_id).forUpdate().executeTakeFirstOrThrow();
      }
      const inserted = await trx
        .insertInto('api_keys')
        .values({
          account_id: user.account_id,
          user_id: user.id,
          name: options.name?.trim() || 'API key',
          key_hash: sha256(key),
          display_prefix: key.slice(0, 8),
          read_only: options.readOnly ? 1 : 0,
          created_at: toTimestamp(this.clock.now()),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const active = await trx
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', user.account_id)
        .where('revoked_at', 'is', null)
        .executeTakeFirstOrThrow();
      // Past the cap with this one: the transaction rolls the insert back.
      if (Number(active.n) > this.maxActive) throw new TooManyKeysError(this.maxActive);
      return inserted;
    });
    return { id: row.id, key };
  }

  /** Revokes a key; with `accountId`, only a key of that account. Returns whether one was revoked. */
  async revoke(id: number, accountId?: number): Promise<boolean> {
    let query = this.db
      .updateTable('api_keys')
      .set({ revoked_at: toTimestamp(this.clock.now()) })
      .where('id', '=', id)
      .where('revoked_at', 'is', null);
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    const result = await query.executeTakeFirst();
    this.known.forget();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Forgets the keys kept: keys changed in this process (an account deleted). */
  forget(): void {
    this.known.forget();
  }

  async list(accountId: number): Promise<ApiKeySummary[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select(['id', 'name', 'display_prefix', 'read_only', 'created_at', 'last_used_at', 'revoked_at'])
      .where('account_id', '=', accountId)
      .orderBy('id', 'desc')
      .execute();
    return rows.map((row) => ({ ...row, read_only: row.read_only === 1 }));
  }

  /** The actor of a valid, unrevoked key, or undefined. */
  async authenticate(key: string, request: RequestInfo | null): Promise<Actor | undefined> {
    if (!apiKeyPattern.test(key)) return undefined;
    const row = await this.lookUp(sha256(key));
    if (!row) return undefined;
    this.touch(row.id);
    return {
      accountId: row.account_id,
      userId: row.user_id,
      credential: { kind: 'api_key', id: row.id },
      channel: 'api',
      staff: row.staff === 1,
      scopes: row.read_only === 1 ? ['read'] : ['read', 'write'],
      request,
    };
  }

  private lookUp(hash: string): Promise<KnownKey | undefined> {
    return this.known.get(hash, async () => (await this.byHash(hash))[0]);
  }

  /** Records a key's use in memory: a read request never waits for (or causes) a write of its own. */
  private touch(id: number): void {
    const now = this.clock.now();
    if (now.getTime() - (this.lastUsedRecorded.get(id) ?? 0) < lastUsedGranularityMs) return;
    this.lastUsedRecorded.set(id, now.getTime());
    this.pendingUses.set(id, toTimestamp(now));
    this.flushTimer ??= setTimeout(() => void this.flushUses(), lastUsedFlushMs).unref();
  }

  /** Writes the recorded uses to `last_used_at`: one UPDATE per timestamp and batch (also on close). */
  async flushUses(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const byTime = new Map<string, number[]>();
    for (const [id, at] of this.pendingUses) {
      const ids = byTime.get(at) ?? [];
      ids.push(id);
      byTime.set(at, ids);
    }
    this.pendingUses.clear();
    const stale = this.clock.now().getTime() - lastUsedGranularityMs;
    for (const [id, at] of this.lastUsedRecorded) if (at < stale) this.lastUsedRecorded.delete(id);
    for (const [at, ids] of byTime) {
      for (let i = 0; i < ids.length; i += lastUsedBatch) {
        const batch = ids.slice(i, i + lastUsedBatch);
        // Best effort, like the minute it rounds to: a failed write is retried with the next use.
        await this.db
          .updateTable('api_keys')
          .set({ last_used_at: at })
          .where('id', 'in', batch)
          .execute()
          .catch(() => batch.forEach((id) => this.lastUsedRecorded.delete(id)));
      }
    }
  }
}
