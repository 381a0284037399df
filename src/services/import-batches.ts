import type { ControlledTransaction, Kysely, Transaction } from 'kysely';
import type { DialectName } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import type { WriteTurns } from '../db/write-turns.js';
import { DayCountChanges, rebuildCounters } from './counters.js';
import type { ImportScratch, Kind } from './import-scratch.js';

/** Rows a statement writes or a batch holds: under either database's limit on bound parameters. */
export const batchSize = 400;

/**
 * The counter changes of an import's steps not saved yet, and the sites stored before the import
 * whose counters they change (other nodes keep those counters: `counts_version` tells them).
 * Saved when a transaction ends, not with every step: PostgreSQL keeps every version of a row an
 * open transaction writes, so a counter written by each of thousands of steps took longer each
 * time (`docs/decisions/0004-day-counters.md`).
 */
export class ImportCounts {
  private changes = new DayCountChanges();
  private sites = new Set<number>();

  /** Where a step adds its counter changes. */
  get pending(): DayCountChanges {
    return this.changes;
  }

  /** The counters of `siteId`, a site stored before, changed. */
  changedSite(siteId: number): void {
    this.sites.add(siteId);
  }

  /** Saves the changes so far in `trx`, and starts afresh. */
  async saveIn(trx: Transaction<Database>): Promise<void> {
    const { changes, sites } = this;
    this.changes = new DayCountChanges();
    this.sites = new Set();
    await changes.saveIn(trx);
    for (const siteId of sites) await trx.updateTable('sites').set((eb) => ({ counts_version: eb('counts_version', '+', 1) })).where('id', '=', siteId).execute();
  }
}

/** Runs a step of an import's writes in a transaction (`WholeImport`, `CommittedInBatches`). */
export interface ImportSteps {
  run<T>(step: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /** The steps' counter changes, saved with them. */
  readonly counts: ImportCounts;
  /** Where the steps note what they change, when a failure must undo committed steps. */
  readonly journal: ImportScratch | undefined;
}

/**
 * PostgreSQL: every step in the import's one transaction (its row locks hold up no other writer).
 * Its counter changes are saved once, at the end (`counts.saveIn`).
 */
export class WholeImport implements ImportSteps {
  readonly counts = new ImportCounts();
  readonly journal = undefined;

  constructor(private readonly trx: Transaction<Database>) {}

  run<T>(step: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return step(this.trx);
  }
}

/** How long (ms) an import's transaction holds SQLite's write lock before it commits its steps so far. */
const batchHoldMs = 100;

/** Tables whose rows an undo puts back as they were, and the order it deletes created rows in. */
const restored = ['articles', 'backlinks', 'sites'] as const;
const deletedInOrder: Kind[] = ['activity_log', 'revisions', 'articles', 'backlinks', 'sites'];

/**
 * SQLite: one writer at a time for the whole file, so an import's steps go into a transaction
 * that commits, with the steps' counter changes, once it has held the write lock `batchHoldMs`;
 * the next begins once the processes waiting for the lock meanwhile have had it (`turns`,
 * db/write-turns.ts). The service's writes wait about one batch, never the
 * whole import. What the steps change is noted in `journal` and undone (`undo`) when a later step
 * fails: the import still writes all or nothing, though its changes appear batch by batch while
 * it runs.
 */
export class CommittedInBatches implements ImportSteps {
  readonly counts = new ImportCounts();
  private open: { trx: ControlledTransaction<Database>; since: number } | undefined;
  /** Commits the open transaction when no step comes meanwhile (the file arrives slowly). */
  private idle: NodeJS.Timeout | undefined;
  /** That commit, once started: the next step (or `commit`) waits for it, and gets its failure. */
  private committing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    readonly journal: ImportScratch,
    private readonly turns: Pick<WriteTurns, 'giveWay'> | undefined,
  ) {}

  async run<T>(step: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    clearTimeout(this.idle);
    await this.committing;
    if (!this.open) {
      await this.turns?.giveWay();
      this.open = { trx: await this.db.startTransaction().execute(), since: performance.now() };
    }
    const result = await step(this.open.trx);
    const held = performance.now() - this.open.since;
    if (held >= batchHoldMs) {
      await this.commit();
    } else {
      this.idle = setTimeout(() => {
        this.committing = this.commit();
        // Handled where it is awaited (the next step, `commit` or `undo`): not a process failure.
        this.committing.catch(() => undefined);
      }, batchHoldMs - held);
    }
    return result;
  }

  async commit(): Promise<void> {
    clearTimeout(this.idle);
    await this.committing;
    const open = this.open;
    if (!open) return;
    // Left open if saving fails: `undo` rolls it back.
    await this.counts.saveIn(open.trx);
    this.open = undefined;
    await open.trx.commit().execute();
  }

  /**
   * Rolls back the open transaction, then undoes what committed steps changed: rows they created
   * are deleted, rows they changed are put back as they were, and the counters of every site
   * touched are rebuilt from its rows.
   */
  async undo(): Promise<void> {
    clearTimeout(this.idle);
    await this.committing.catch(() => undefined);
    const open = this.open;
    this.open = undefined;
    await open?.trx.rollback().execute();
    const journal = this.journal;
    for (const table of restored) {
      for (const changes of journal.changes(table, batchSize)) {
        const before = changes.filter((change) => change.before !== null);
        if (before.length === 0) continue;
        await this.db.transaction().execute(async (trx) => {
          for (const { id, before: row } of before) await trx.updateTable(table).set(row as never).where('id', '=', id).execute();
        });
      }
    }
    for (const kind of deletedInOrder) {
      for (const changes of journal.changes(kind, batchSize)) {
        const ids = changes.filter((change) => change.before === null).map((change) => change.id);
        if (ids.length > 0) await this.db.deleteFrom(kind).where('id', 'in', ids).execute();
      }
    }
    const sites = journal.sites;
    for (let i = 0; i < sites.length; i += batchSize) {
      await this.db.transaction().execute((trx) => rebuildCounters(trx, this.dialect, sites.slice(i, i + batchSize)));
    }
  }
}
