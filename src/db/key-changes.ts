import type pg from 'pg';
import { keyChangesChannel } from './migrations/013_key_changes.js';

/** How long (ms) after its listening connection failed a process may try to listen again. */
const retryMs = 1_000;

/**
 * PostgreSQL's notices of changes to API keys and their users (migration 013), heard on a
 * connection of its own that LISTENs, opened at the first question. Until it listens, and
 * whenever it has failed, the answer is "changed": what a process keeps of keys in memory is used
 * only while it cannot have missed a notice.
 */
export class KeyChangeListener {
  private client: pg.Client | undefined;
  private listening = false;
  private notified = false;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  private warned = false;

  constructor(
    private readonly Client: typeof pg.Client,
    private readonly url: string,
    private readonly warn?: (message: string, error: unknown) => void,
  ) {}

  /** Whether a key may have changed since the last call that answered true. */
  changed(): boolean {
    if (!this.listening) {
      if (this.client === undefined && this.retry === undefined && !this.closed) void this.listen();
      return true;
    }
    if (!this.notified) return false;
    this.notified = false;
    return true;
  }

  private async listen(): Promise<void> {
    const client = new this.Client({ connectionString: this.url });
    this.client = client;
    client.on('notification', (message) => {
      if (message.channel === keyChangesChannel) this.notified = true;
    });
    client.on('error', (error) => this.failed(client, error));
    client.on('end', () => this.failed(client, new Error('The connection listening for key changes ended.')));
    try {
      await client.connect();
      await client.query(`listen ${keyChangesChannel}`);
    } catch (error) {
      this.failed(client, error);
      return;
    }
    if (this.client !== client) return;
    // What was kept before now may be older than a notice no connection was listening for.
    this.notified = true;
    this.listening = true;
    this.warned = false;
  }

  private failed(client: pg.Client, error: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = false;
    void client.end().catch(() => undefined);
    if (this.closed) return;
    if (!this.warned) this.warn?.('key change notices unavailable: API keys are looked up on every request until they are back', error);
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
