import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';

export type Kind = 'sites' | 'articles' | 'backlinks' | 'revisions' | 'activity_log';

/**
 * What one import remembers on disk rather than in memory, so memory stays flat whatever the
 * file's size: the key of every row checked (to find two rows with the same key), and on SQLite
 * what the import changed (to undo it when a later batch fails). A file of its own in the
 * temporary directory, removed by `close`; nothing in it outlives the import.
 */
export class ImportScratch {
  private readonly dir = mkdtempSync(join(tmpdir(), 'anchorage-import-'));
  private readonly db = new Sqlite(join(this.dir, 'scratch.db'));
  private readonly insertKey;
  private readonly firstKey;
  private readonly insertChange;
  private readonly changesOf;
  private readonly touchedSites = new Set<number>();

  constructor() {
    // Nothing here needs to survive a crash: no journal, no syncing, one transaction throughout.
    this.db.pragma('journal_mode = off');
    this.db.pragma('synchronous = off');
    // Room for the keys of a million rows (64 MiB, whatever the file's size): hashes arrive in
    // random order, and with SQLite's default 2 MB most inserts read a page back from the file.
    this.db.pragma('cache_size = -65536');
    this.db.exec(`create table keys (site integer, list text, hash blob, first integer, primary key (site, list, hash)) without rowid;
      create table changes (seq integer primary key, kind text, id integer, before text);
      begin`);
    this.insertKey = this.db.prepare('insert into keys (site, list, hash, first) values (?, ?, ?, ?) on conflict do nothing');
    this.firstKey = this.db.prepare<[number, string, Buffer], { first: number }>('select first from keys where site = ? and list = ? and hash = ?');
    this.insertChange = this.db.prepare('insert into changes (kind, id, before) values (?, ?, ?)');
    this.changesOf = this.db.prepare<[string, number, number], { seq: number; id: number; before: string | null }>(
      'select seq, id, before from changes where kind = ? and seq > ? order by seq limit ?',
    );
  }

  /** Notes row `index` of `list` in site `site` under `key`; the index of an earlier row with that key, if there was one. */
  earlierWithKey(site: number, list: string, key: string, index: number): number | undefined {
    const hash = createHash('sha256').update(key).digest();
    if (this.insertKey.run(site, list, hash, index).changes === 1) return undefined;
    return this.firstKey.get(site, list, hash)!.first;
  }

  /** Notes a row the import created (`before` null) or the row as it was before the import changed it. */
  changed(kind: Kind, id: number, before: object | null, siteId: number): void {
    this.insertChange.run(kind, id, before === null ? null : JSON.stringify(before));
    this.touchedSites.add(siteId);
  }

  /** The sites whose rows the import changed. */
  get sites(): number[] {
    return [...this.touchedSites];
  }

  /** The changes noted of `kind`, in the order made, `size` at a time. */
  *changes(kind: Kind, size: number): Generator<{ id: number; before: Record<string, unknown> | null }[]> {
    let after = 0;
    for (;;) {
      const rows = this.changesOf.all(kind, after, size);
      if (rows.length === 0) return;
      after = rows.at(-1)!.seq;
      yield rows.map((row) => ({ id: row.id, before: row.before === null ? null : (JSON.parse(row.before) as Record<string, unknown>) }));
    }
  }

  close(): void {
    this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
