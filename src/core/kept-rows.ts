/**
 * What a watch of changes made elsewhere says since its last answer: nothing (`false`), anything
 * (`true`: forget every row), or the rows of these keys.
 */
export type ChangesSince<Key> = boolean | readonly Key[];

/** How much room rows take (`size`), in all at most `budget`; a row larger than `largest` is not kept. */
export interface KeptRowsRoom<Row> {
  size: (row: Row) => number;
  budget: number;
  largest: number;
}

/**
 * Rows a process keeps in memory by key, at most `max` (the first kept goes first when full), and,
 * with `room`, within its budget, until `changed` (a watch of changes made elsewhere,
 * `Db.watchChanges`) names them or says anything may have changed; `forget` drops one at once, or
 * all (this process's own change). A row read while any was forgotten is not kept, so a read that
 * raced a change cannot keep what it read before it. Rows not found are never kept, so asking for
 * unknown keys cannot fill it.
 */
export class KeptRows<Key, Row> {
  private readonly rows = new Map<Key, Row>();
  /** Moves on each forgetting. */
  private generation = 0;
  /** The room the rows take together (`room.size`). */
  private used = 0;

  constructor(
    private readonly changed: () => ChangesSince<Key>,
    private readonly max: number,
    private readonly room?: KeptRowsRoom<Row>,
  ) {}

  /** The row kept under `key`, else the one `read` finds (then kept). */
  async get(key: Key, read: () => Promise<Row | undefined>): Promise<Row | undefined> {
    const changes = this.changed();
    if (changes === true) this.forget();
    else if (changes !== false) for (const changed of changes) this.forget(changed);
    const kept = this.rows.get(key);
    if (kept !== undefined) return kept;
    const generation = this.generation;
    const row = await read();
    if (row === undefined || generation !== this.generation) return row;
    const size = this.room?.size(row) ?? 0;
    if (this.room && size > this.room.largest) return row;
    // Read twice at once: the second read replaces the first.
    const twice = this.rows.get(key);
    if (twice !== undefined) {
      this.rows.delete(key);
      this.used -= this.room?.size(twice) ?? 0;
    }
    for (const [firstKey, first] of this.rows) {
      if (this.rows.size < this.max && (!this.room || this.used + size <= this.room.budget)) break;
      this.rows.delete(firstKey);
      this.used -= this.room?.size(first) ?? 0;
    }
    this.rows.set(key, row);
    this.used += size;
    return row;
  }

  /** Drops the row of `key`, or every row. */
  forget(key?: Key): void {
    this.generation++;
    if (key === undefined) {
      this.rows.clear();
      this.used = 0;
      return;
    }
    const row = this.rows.get(key);
    if (row === undefined) return;
    this.rows.delete(key);
    this.used -= this.room?.size(row) ?? 0;
  }
}
