import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { ChangesSince } from '../core/kept-rows.js';
import { changesChannel, type ChangeTopic, changeTopics, namedChangesMax } from './change-topics.js';

/** How often (ms) a listening process sends itself a heartbeat notice. */
export const heartbeatMs = 1_000;

/**
 * How long (ms) what a process keeps stays usable after it sent the newest heartbeat it has
 * heard: a change committed longer ago than this is always seen (docs/operations.md).
 */
export const trustMs = 3_000;

/** A listening connection that heard no heartbeat for this long (ms) is closed and another opened. */
export const silentConnectionMs = 5_000;

/** Pauses (ms) before listening again after a failure: the first, doubled on each failure up to the last. */
const firstRetryMs = 1_000;
const lastRetryMs = 10_000;

/**
 * One watch's state: whether a notice of its topic came since it last answered "changed"
 * (`notified`), or, for a watch that names rows, the ids the notices named (`ids`).
 */
interface Watch {
  topic: ChangeTopic;
  notified: boolean;
  ids?: Set<number>;
}

/**
 * PostgreSQL's notices of changes to the rows nodes keep in memory (migration 013), heard on a
 * connection of its own that LISTENs, opened at the first question.
 *
 * A connection can fail without a word (a NAT that drops it, a partition): the process sends
 * itself a heartbeat notice every second on a channel of its own. PostgreSQL delivers notices in
 * commit order, so hearing a heartbeat proves that every change committed before it was sent has
 * been heard. A watch answers "unchanged" only while the newest heartbeat heard was sent less
 * than `trustMs` ago; otherwise (not listening yet, failed, silent) every watch answers "changed",
 * and what a process keeps is read again from the database. A silent connection is closed and
 * another opened, after a pause that grows while failures repeat. When heartbeats are heard again,
 * everything kept before is forgotten once.
 */
export class ChangeListener {
  private readonly watches: Watch[] = [];
  /** This process's heartbeat channel: no other process listens to it. */
  private readonly aliveChannel = `anchorage_alive_${randomBytes(8).toString('hex')}`;
  private client: pg.Client | undefined;
  /** When (performance.now) the current connection was opened, or sent the newest heartbeat it heard. */
  private heardAt = -Infinity;
  /** Whether the current connection listens (and may send heartbeats). */
  private listening = false;
  /** Whether the current connection has heard a heartbeat. */
  private heard = false;
  /** Whether the watches answered "unchanged" at their last call. */
  private trusted = false;
  /** The heartbeat sent and not yet answered: its payload and when it was sent. */
  private beat: { payload: string; sentAt: number } | undefined;
  private beats = 0;
  private ticker: NodeJS.Timeout | undefined;
  /** No try to listen before this time (performance.now). */
  private retryAt = 0;
  private failures = 0;
  private closed = false;
  private warned = false;

  constructor(
    private readonly Client: typeof pg.Client,
    private readonly url: string,
    private readonly warn?: (message: string, error: unknown) => void,
  ) {}

  /** Whether a row of `topic` may have changed since the last call of this watch that answered true. */
  watch(topic: ChangeTopic): () => boolean {
    const watch: Watch = { topic, notified: true };
    this.watches.push(watch);
    return () => {
      if (!this.current()) return true;
      if (!watch.notified) return false;
      watch.notified = false;
      return true;
    };
  }

  /**
   * `watch`, naming the rows changed where the notices do (`topic:id`, migration 027), and saying
   * `true` where they do not, when more than `namedChangesMax` came, or when `watch` would.
   */
  watchIds(topic: ChangeTopic): () => ChangesSince<number> {
    const watch: Watch = { topic, notified: true, ids: new Set() };
    this.watches.push(watch);
    return () => {
      if (!this.current()) return true;
      if (watch.notified) {
        watch.notified = false;
        watch.ids!.clear();
        return true;
      }
      if (watch.ids!.size === 0) return false;
      const ids = [...watch.ids!];
      watch.ids!.clear();
      return ids;
    };
  }

  /** Whether every change committed more than `trustMs` ago has been heard (and listening starts if it may). */
  private current(): boolean {
    if (this.client === undefined && !this.closed && performance.now() >= this.retryAt) void this.listen();
    const current = this.client !== undefined && this.heard && performance.now() - this.heardAt < trustMs;
    // Heard again after a silence: a notice may have come while a watch was not asked.
    if (current && !this.trusted) this.notify(undefined);
    this.trusted = current;
    return current;
  }

  /** A notice's payload: `topic`, or `topic:id` for one row (migration 027); undefined tells every watch. */
  private notify(payload: string | undefined): void {
    const [topic, named] = payload?.split(':') ?? [];
    const id = named === undefined ? undefined : Number(named);
    // A payload this code does not know (a newer node's) may concern anything kept.
    const known = changeTopics.includes(topic as ChangeTopic) && (id === undefined || Number.isSafeInteger(id));
    for (const watch of this.watches) {
      if (known && watch.topic !== topic) continue;
      if (!known || id === undefined || watch.ids === undefined || watch.ids.size >= namedChangesMax) watch.notified = true;
      else if (!watch.notified) watch.ids.add(id);
    }
  }

  private async listen(): Promise<void> {
    const client = new this.Client({ connectionString: this.url });
    this.client = client;
    this.listening = false;
    this.heard = false;
    this.heardAt = performance.now();
    this.beat = undefined;
    client.on('notification', (message) => {
      if (message.channel === changesChannel) this.notify(message.payload);
      else if (message.channel === this.aliveChannel) this.heardBeat(client, message.payload);
    });
    client.on('error', (error) => this.failed(client, error));
    client.on('end', () => this.failed(client, new Error('The connection listening for change notices ended.')));
    this.ticker = setInterval(() => this.tick(client), heartbeatMs).unref();
    try {
      await client.connect();
      await client.query(`listen ${changesChannel}; listen ${this.aliveChannel}`);
    } catch (error) {
      this.failed(client, error);
      return;
    }
    // Closed, or given up as silent, while it connected.
    if (this.client !== client) return;
    this.listening = true;
    this.tick(client);
  }

  /**
   * Each second: a heartbeat when the last one was heard, or the end of a connection silent too
   * long (a heartbeat that is never heard, or a connection that never starts listening).
   */
  private tick(client: pg.Client): void {
    if (this.client !== client) return;
    if (performance.now() - this.heardAt > silentConnectionMs) {
      this.failed(client, new Error(`No heartbeat heard on the connection listening for change notices for ${silentConnectionMs / 1000} s.`));
      return;
    }
    if (!this.listening || this.beat !== undefined) return;
    const beat = { payload: String(++this.beats), sentAt: performance.now() };
    this.beat = beat;
    client.query('select pg_notify($1, $2)', [this.aliveChannel, beat.payload]).catch((error: unknown) => this.failed(client, error));
  }

  private heardBeat(client: pg.Client, payload: string | undefined): void {
    const beat = this.beat;
    if (this.client !== client || beat === undefined || beat.payload !== payload) return;
    this.heardAt = beat.sentAt;
    this.beat = undefined;
    this.heard = true;
    this.failures = 0;
    this.warned = false;
  }

  private failed(client: pg.Client, error: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.trusted = false;
    clearInterval(this.ticker);
    // Closed at once: a half-open connection would wait for PostgreSQL's goodbye forever.
    client.connection.stream.destroy();
    if (this.closed) return;
    this.retryAt = performance.now() + Math.min(lastRetryMs, firstRetryMs * 2 ** this.failures);
    this.failures += 1;
    if (!this.warned) this.warn?.('change notices unavailable: API keys, OAuth access tokens, sites and articles are read from the database on every request until they are back', error);
    this.warned = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.ticker);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
