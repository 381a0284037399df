import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';

/**
 * SQLite's search index (the FTS5 table of migration 023) catches up with the articles in the
 * off-loop connection's thread, after the writes: migration 028's triggers only note a written
 * article in `article_search_pending`, and a search also checks the noted articles of its site
 * (`services/search.ts`), so it is exact before the index has the new text
 * (docs/decisions/0014-search-index-in-the-background.md). Notes of any connection are caught up:
 * this process's, the CLI's, an operator's SQL.
 *
 * It looks every `lookEveryMs` and then indexes the noted articles in transactions of at most
 * `batchBytes` of text (or one larger article), by statements that read the text inside SQLite,
 * so no body crosses into JavaScript. A look that fails is tried again at the next; the first
 * failure of a run of them is reported.
 */
export class SearchIndexCatchUp {
  private running: Promise<void> | undefined;
  private failing = false;
  private stopped = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly offLoop: Kysely<Database>,
    private readonly warn: (message: string, error: unknown) => void,
    lookEveryMs = defaultLookEveryMs,
  ) {
    this.timer = setInterval(() => void this.catchUp().catch(() => {}), lookEveryMs).unref();
  }

  /** Indexes every article noted so far; resolves when none is left (joins a catch-up under way). */
  catchUp(): Promise<void> {
    this.running ??= this.indexNoted().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stops looking; a catch-up under way ends with its current batch. */
  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running?.catch(() => {});
  }

  private async indexNoted(): Promise<void> {
    try {
      while (!this.stopped && (await this.noted())) await this.indexBatch();
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.warn('the search index could not catch up with written articles; trying again', error);
      this.failing = true;
      throw error;
    }
  }

  /** Whether any article waits to be indexed (a read: the write lock is taken only when one does). */
  private async noted(): Promise<boolean> {
    const { rows } = await sql<{ noted: number }>`select exists (select 1 from article_search_pending) as noted`.execute(this.offLoop);
    return rows[0]!.noted === 1;
  }

  private async indexBatch(): Promise<void> {
    await this.offLoop.transaction().execute(async (trx) => {
      const { rows } = await sql<{ id: number; bytes: number }>`select p.article_id as id, coalesce(octet_length(a.title), 0) + coalesce(octet_length(a.body), 0) as bytes
        from article_search_pending p left join articles a on a.id = p.article_id order by p.article_id limit ${batchMax}`.execute(trx);
      const ids: number[] = [];
      let bytes = 0;
      for (const row of rows) {
        if (ids.length > 0 && bytes + row.bytes > batchBytes) break;
        ids.push(row.id);
        bytes += row.bytes;
      }
      if (ids.length === 0) return;
      const noted = sql.join(ids);
      await sql`delete from article_search where rowid in (${noted})`.execute(trx);
      await sql`insert into article_search (rowid, title, body) select id, title, body from articles where id in (${noted})`.execute(trx);
      await sql`delete from article_search_pending where article_id in (${noted})`.execute(trx);
    });
  }
}

const defaultLookEveryMs = 250;
/** Text (bytes) indexed in one transaction: a batch holds the write lock for tens of milliseconds. */
const batchBytes = 1_000_000;
/** Articles indexed in one transaction at most. */
const batchMax = 100;
