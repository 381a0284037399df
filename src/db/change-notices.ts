import type pg from 'pg';
import { changesChannel, type ChangeTopic, changeTopics } from './migrations/013_change_notices.js';

/** How long (ms) after its listening connection failed a process may try to listen again. */
const retryMs = 1_000;

/** One watch's state: whether a notice of its topic came since it last answered "changed". */
interface Watch {
  topic: ChangeTopic;
  notified: boolean;
}

/**
 * PostgreSQL's notices of changes to the rows nodes keep in memory (migration 013), heard on a
 * connection of its own that LISTENs, opened at the first question. Until it listens, and
 * whenever it has failed, every watch answers "changed": what a process keeps is used only while
 * it cannot have missed a notice.
 */
export class ChangeListener {
  private readonly watches: Watch[] = [];
  private client: pg.Client | undefined;
  private listening = false;
  private retry: NodeJS.Timeout | undefined;
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
      if (!this.listening) {
        if (this.client === undefined && this.retry === undefined && !this.closed) void this.listen();
        return true;
      }
      if (!watch.notified) return false;
      watch.notified = false;
      return true;
    };
  }

  private notify(topic: string | undefined): void {
    // A payload this code does not know (a newer node's) may concern anything kept.
    const known = changeTopics.includes(topic as ChangeTopic);
    for (const watch of this.watches) if (!known || watch.topic === topic) watch.notified = true;
  }

  private async listen(): Promise<void> {
    const client = new this.Client({ connectionString: this.url });
    this.client = client;
    client.on('notification', (message) => {
      if (message.channel === changesChannel) this.notify(message.payload);
    });
    client.on('error', (error) => this.failed(client, error));
    client.on('end', () => this.failed(client, new Error('The connection listening for change notices ended.')));
    try {
      await client.connect();
      await client.query(`listen ${changesChannel}`);
    } catch (error) {
      this.failed(client, error);
      return;
    }
    if (this.client !== client) return;
    // What was kept before now may be older than a notice no connection was listening for.
    this.notify(undefined);
    this.listening = true;
    this.warned = false;
  }

  private failed(client: pg.Client, error: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = false;
    void client.end().catch(() => undefined);
    if (this.closed) return;
    if (!this.warned) this.warn?.('change notices unavailable: API keys and sites are read from the database on every request until they are back', error);
    this.warned = true;
    this.retry = setTimeout(() => (this.retry = undefined), retryMs).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => undefined);
  }
}
