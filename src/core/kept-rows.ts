/**
 * Rows a process keeps in memory by key, at most `max` (the first kept goes first when full),
 * for as long as `changed` (a watch of changes made elsewhere, `Db.watchChanges`) says nothing
 * changed; `forget()` empties them at once (this process's own change). A row read while they
 * were forgotten is not kept, so a read that raced a change cannot keep what it read before it.
 * Rows not found are never kept, so asking for unknown keys cannot fill it.
 */
export class KeptRows<Key, Row> {
  private readonly rows = new Map<Key, Row>();
  /** Moves on each forgetting. */
  private generation = 0;

  constructor(
    private readonly changed: () => boolean,
    private readonly max: number,
  ) {}

  /** The row kept under `key`, else the one `read` finds (then kept). */
  async get(key: Key, read: () => Promise<Row | undefined>): Promise<Row | undefined> {
    if (this.changed()) this.forget();
    const kept = this.rows.get(key);
    if (kept !== undefined) return kept;
    const generation = this.generation;
    const row = await read();
    if (row === undefined || generation !== this.generation) return row;
    if (this.rows.size >= this.max) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(key, row);
    return row;
  }

  forget(): void {
    this.rows.clear();
    this.generation++;
  }
}
