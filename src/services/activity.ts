import { setTimeout as sleep } from 'node:timers/promises';
import type { CompiledQuery, Kysely, Transaction } from 'kysely';
import { toTimestamp } from '../core/time.js';
import type { Database, NewActivity } from '../db/schema.js';
import type { Actor, RequestInfo } from './actor.js';
import { credentialColumns } from './actor.js';
import type { ActivitySpill } from './activity-spill.js';
import { type PageRequest, paginate } from './pagination.js';

export interface Outcome {
  status: number;
  error: string | null;
}

/** How a call ended, for its activity record. */
export interface ActivityEntry {
  actor: Actor | null;
  channel: 'api' | 'mcp';
  request: RequestInfo;
  outcome: Outcome;
}

/** Told of every call as it is logged, and of every flush of the queue (metrics). */
export interface ActivityObserver {
  recorded(entry: ActivityEntry): void;
  flushed(rows: number, seconds: number): void;
}

const flushIntervalMs = 1_000;
const flushBatchSize = 200;
/** Pauses (ms) before each new try of a batch the database refused; then it goes to the spill file. */
const defaultRetryDelaysMs = [250, 1_000];
/**
 * Records held in memory at most when neither the database nor the spill file takes them (a full
 * disk holding both): past this the oldest are dropped, and `onError` says how many.
 */
const maxHeldRecords = 100_000;

/** The values of `records`, row after row, each in the order of `columns`. */
const valuesOf = (records: NewActivity[], columns: (keyof NewActivity)[]): unknown[] =>
  records.flatMap((record) => columns.map((column) => record[column] ?? null));

export interface ActivityFilters {
  channel?: 'api' | 'mcp';
  apiKeyId?: number;
  mcpGrantId?: number;
  status?: 'success' | 'error';
  from?: string;
  to?: string;
  /** Leaves out the MCP protocol's own successful calls (initialize, tools/list, notifications, ping …). */
  hideHandshakes?: boolean;
}

/**
 * The activity log. Read calls are buffered and written in batches (within a second, and on
 * close) so logging never slows them; writes are logged inside their own transaction instead. A
 * batch the database refuses is tried again (`retryDelaysMs`), then kept in the spill file
 * (`ActivitySpill`), whose records are stored once the database takes a batch again.
 */
export class ActivityLog {
  private buffer: NewActivity[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly observers: ActivityObserver[] = [];
  /** The insert of a full batch, compiled once (`insert`). */
  private fullBatch: { compiled: CompiledQuery; columns: (keyof NewActivity)[] } | undefined;
  /** The spill folder may hold records (from this process, or from one before it). */
  private spilled = true;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly onError: (error: unknown) => void,
    private readonly spill?: ActivitySpill,
    private readonly retryDelaysMs: readonly number[] = defaultRetryDelaysMs,
  ) {}

  row(entry: ActivityEntry): NewActivity {
    const { actor, request, outcome } = entry;
    // Fields written out, not spread in: see `withBody` (services/articles.ts).
    const credential = actor ? credentialColumns(actor) : { api_key_id: null, mcp_grant_id: null };
    return {
      created_at: toTimestamp(new Date(request.startedAt)),
      account_id: actor?.accountId ?? null,
      user_id: actor?.userId ?? null,
      api_key_id: credential.api_key_id,
      mcp_grant_id: credential.mcp_grant_id,
      channel: entry.channel,
      operation: request.operation,
      method: request.method,
      path: request.path,
      tool: request.tool,
      status: outcome.status,
      error: outcome.error,
      // startedAt is wall-clock time (Date.now()), so the duration is too, whatever the injected clock says.
      duration_ms: Math.max(0, Math.round(Date.now() - request.startedAt)),
      client_ip: request.clientIp,
      user_agent: request.userAgent?.slice(0, 500) ?? null,
      request_id: request.id,
    };
  }

  observe(observer: ActivityObserver): void {
    this.observers.push(observer);
  }

  /** Records waiting for the next flush. */
  get queued(): number {
    return this.buffer.length;
  }

  private notify(entry: ActivityEntry): void {
    for (const observer of this.observers) observer.recorded(entry);
  }

  /** Queues a record; it reaches the database within a second. */
  record(entry: ActivityEntry): void {
    this.notify(entry);
    this.buffer.push(this.row(entry));
    if (this.buffer.length >= flushBatchSize) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), flushIntervalMs);
  }

  /**
   * Writes a record in the caller's transaction, beside the change it logs. The caller calls
   * `committed` once the transaction has committed: a transaction that fails after this insert
   * loses the record, and its request is then recorded once more, with its failure.
   */
  async recordIn(trx: Transaction<Database>, entry: ActivityEntry): Promise<void> {
    await trx.insertInto('activity_log').values(this.row(entry)).execute();
  }

  /** Tells the observers (metrics) of a record written by `recordIn` whose transaction committed. */
  committed(entry: ActivityEntry): void {
    this.notify(entry);
  }

  /** Writes everything queued so far. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    this.flushing = this.flushing.then(async () => {
      const stored = batch.length === 0 || (await this.store(batch));
      if (stored && this.spilled && this.spill) await this.replay(this.spill);
    });
    return this.flushing;
  }

  /** Inserts `batch`, tried again after each of `retryDelaysMs`; then spills it. Whether the database took it. */
  private async store(batch: NewActivity[]): Promise<boolean> {
    const started = performance.now();
    for (let attempt = 0; ; attempt++) {
      try {
        for (let i = 0; i < batch.length; i += flushBatchSize) await this.insert(batch.slice(i, i + flushBatchSize));
        for (const observer of this.observers) observer.flushed(batch.length, (performance.now() - started) / 1000);
        return true;
      } catch (error) {
        const delay = this.retryDelaysMs[attempt];
        if (delay === undefined) {
          await this.keep(batch, error);
          return false;
        }
        await sleep(delay);
      }
    }
  }

  /** `batch`, refused by the database for good, into the spill file; held in memory if that fails too. */
  private async keep(batch: NewActivity[], cause: unknown): Promise<void> {
    if (!this.spill) {
      this.onError(cause);
      return;
    }
    try {
      const file = await this.spill.keep(batch);
      this.spilled = true;
      this.onError(new Error(`The database refused ${batch.length} activity records; they are kept in ${file} until it takes them again.`, { cause }));
    } catch (spillError) {
      this.buffer.unshift(...batch);
      const dropped = this.buffer.length - maxHeldRecords;
      if (dropped > 0) this.buffer.splice(0, dropped);
      this.timer ??= setTimeout(() => void this.flush(), flushIntervalMs);
      this.onError(
        new Error(
          `The database refused ${batch.length} activity records and the spill file could not take them (${String((spillError as Error).message)}); held in memory${dropped > 0 ? `, ${dropped} oldest dropped` : ''}.`,
          { cause },
        ),
      );
    }
  }

  /** Stores the records of the spill folder, now that the database takes writes. */
  private async replay(spill: ActivitySpill): Promise<void> {
    try {
      await spill.replay(flushBatchSize, (records) => this.insert(records));
      this.spilled = false;
    } catch (error) {
      this.onError(new Error(`Activity records in ${spill.dir} could not be stored yet; they are tried again after the next batch.`, { cause: error }));
    }
  }

  /**
   * Inserts `batch` in one statement. A full batch (`flushBatchSize` records) runs the statement
   * compiled for the first one, with the records' values in its columns' order: built anew, a
   * 200-row insert was 3.6 % of everything a `getArticle` request allocated. The activity table
   * has no column default but null, which is what a missing value becomes either way.
   */
  private async insert(batch: NewActivity[]): Promise<void> {
    const full = batch.length === flushBatchSize;
    if (full && this.fullBatch) {
      const { compiled, columns } = this.fullBatch;
      await this.db.executeQuery({ ...compiled, parameters: valuesOf(batch, columns) });
      return;
    }
    const query = this.db.insertInto('activity_log').values(batch);
    if (full) {
      const columns = Object.keys(batch[0]!) as (keyof NewActivity)[];
      const compiled = query.compile();
      // Kept only when Kysely made every value a parameter, in this order.
      const values = valuesOf(batch, columns);
      if (compiled.parameters.length === values.length && compiled.parameters.every((value, i) => value === values[i])) {
        this.fullBatch = { compiled, columns };
      }
    }
    await query.execute();
  }

  async list(accountId: number | null, filters: ActivityFilters, page: PageRequest) {
    let query = this.db.selectFrom('activity_log');
    if (accountId !== null) query = query.where('account_id', '=', accountId);
    if (filters.channel) query = query.where('channel', '=', filters.channel);
    if (filters.apiKeyId !== undefined) query = query.where('api_key_id', '=', filters.apiKeyId);
    if (filters.mcpGrantId !== undefined) query = query.where('mcp_grant_id', '=', filters.mcpGrantId);
    if (filters.status === 'success') query = query.where('status', '<', 400);
    if (filters.status === 'error') query = query.where('status', '>=', 400);
    if (filters.from) query = query.where('created_at', '>=', `${filters.from}T00:00:00Z`);
    if (filters.to) query = query.where('created_at', '<=', `${filters.to}T23:59:59Z`);
    if (filters.hideHandshakes) {
      query = query.where((eb) => eb.or([eb('channel', '=', 'api'), eb('tool', 'is not', null), eb('status', '>=', 400)]));
    }
    // Newest first by time: reads are logged in batches, writes in their transaction, so ids alone are out of order.
    return paginate(query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'), query, page, (row) => row);
  }
}
