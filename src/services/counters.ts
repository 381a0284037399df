import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import { LRUCache } from 'lru-cache';
import { type DayBounds, inListOrder, type SpanCount, type SplitBounds, splitBounds, totalOf, UNDATED_BLOCK, undatedBlockOf, undatedBlocks, undatedDay } from '../core/day-pages.js';
import type { ArticleStatus, BacklinkCategory } from '../core/values.js';
import type { DialectName } from '../db/connect.js';
import type { Database } from '../db/schema.js';

/** A row's day-counter span in SQL: its day, or `undatedBlockOf` its id where `timestamp` is NULL. */
function daySpanSql(dialect: DialectName, timestamp: string): RawBuilder<string> {
  const block = sql`${sql.ref('id')} / ${sql.lit(UNDATED_BLOCK)}`;
  const padded = dialect === 'postgres' ? sql`lpad((${block})::text, 10, '0')` : sql`substr('0000000000' || (${block}), -10)`;
  return sql<string>`case when ${sql.ref(timestamp)} is null then 'u' || ${padded} else substr(${sql.ref(timestamp)}, 1, 10) end`;
}

/** The rows that are counted, and their counter tables. */
const counted = {
  backlinks: { day: 'backlink_day_counts', month: 'backlink_month_counts', timestamp: 'acquired_at', key: 'category' },
  articles: { day: 'article_day_counts', month: 'article_month_counts', timestamp: 'published_at', key: 'status' },
} as const;

export type Counted = keyof typeof counted;

/** Every counter table: each row counts rows of one site. */
export const counterTables = Object.values(counted).flatMap((tables) => [tables.day, tables.month]);

/** The rows of one list as counters see them: per span in list order, and one month's days. */
export interface ListCounts {
  /** The list's rows: one sum, cheaper than `spans` when a page needs no seek. */
  total(): Promise<number>;
  /** Whole months `YYYY-MM` and days `YYYY-MM-DD` of partial months, newest first, undated last. */
  spans(): Promise<SpanCount[]>;
  /** The days of a whole month of `spans`, newest first. */
  daysOf(month: string): Promise<SpanCount[]>;
  /** The rows without a timestamp (`undatedDay` of `spans`) by block of ids (`undatedBlockOf`), in list order. */
  undatedBlocks(): Promise<SpanCount[]>;
  /**
   * Where an answer so far came from the counters this process keeps: a condition for the
   * statement that reads the page, true while the site's counters are still what was kept, and
   * its parameters in the order it compiles them. A page read with it that comes back empty may
   * rest on counters that changed: read it again from `fresh()`.
   */
  unchanged(): { where: RawBuilder<boolean>; parameters: unknown[] } | undefined;
  /** The same counts, read from the database only. */
  fresh(): ListCounts;
}

/** What a process keeps of one list's counts, and the site's `counts_version` it read them at. */
export interface KeptList {
  version: number;
  total?: number;
  spans?: SpanCount[];
  days: Map<string, SpanCount[]>;
  blocks?: SpanCount[];
}

/** Counter rows a process keeps over all lists (each some 100 bytes); the least recently used list goes first. */
const KEPT_SPANS = 20_000;

const keptSize = (list: KeptList): number =>
  1 + (list.spans?.length ?? 0) + (list.blocks?.length ?? 0) + [...list.days.values()].reduce((size, days) => size + days.length, 0);

/**
 * Lists' counts as read, by list, with the version of the site's counters they were read at: a
 * deep page then needs one statement (its rows, checked against the version) instead of three.
 */
export class KeptCounts {
  private readonly lists: LRUCache<string, KeptList>;

  constructor(limit = KEPT_SPANS) {
    this.lists = new LRUCache({ maxSize: limit, sizeCalculation: keptSize });
  }

  /** The list's kept counts, if any, now the most recently used. */
  get(id: string): KeptList | undefined {
    return this.lists.get(id);
  }

  /** Adds to a list's counts what was read at `version`; counts kept at an older version go, a newer version's stay. */
  keep(id: string, version: number, add: (list: KeptList) => void): void {
    const kept = this.lists.get(id);
    // A read that started before the kept counts were read may end after them.
    if (kept && kept.version > version) return;
    // A new object each time: the cache sizes a list when it is set, not when it changes.
    const list: KeptList = kept?.version === version ? { ...kept } : { version, days: new Map() };
    add(list);
    this.lists.set(id, list);
  }
}

interface Sum {
  group: string;
  n: number;
}

interface SumRow {
  group: string | null;
  n: number | string | null;
}

// Four values a row: well under either database's limit on bound parameters.
const upsertBatch = 500;

/**
 * `YYYY-MM-DD` (or `YYYY-MM` with `length` 7) of an ISO-8601 timestamp. Without one: the block of
 * the row's id for a day (`undatedBlockOf`), `undatedDay` for a month.
 */
const spanOf = (id: number, timestamp: string | null, length: 7 | 10): string =>
  timestamp !== null ? timestamp.slice(0, length) : length === 10 ? undatedBlockOf(id) : undatedDay;

type CountedBacklink = { site_id: number; acquired_at: string | null; category: BacklinkCategory };
type CountedArticle = { site_id: number; published_at: string | null; status: ArticleStatus | null };

/**
 * The counter rows one write adds, summed in memory first, so an import of a million rows
 * upserts each (site, span, key) once. Save them in the write's own transaction.
 */
export class DayCountChanges {
  private readonly tallies = new Map<string, Map<string, { site_id: number; span: string; key: string; n: number }>>();

  addBacklink(id: number, row: CountedBacklink, by: 1 | -1 = 1): void {
    this.add('backlinks', id, row.site_id, row.acquired_at, row.category, by);
  }

  addArticle(id: number, row: CountedArticle, by: 1 | -1 = 1): void {
    this.add('articles', id, row.site_id, row.published_at, row.status ?? '', by);
  }

  /** A row that changed: its old counts go, its new ones come (nothing when what is counted stays). */
  changeBacklink(id: number, before: CountedBacklink, after: CountedBacklink): void {
    if (before.acquired_at === after.acquired_at && before.category === after.category) return;
    this.addBacklink(id, before, -1);
    this.addBacklink(id, after);
  }

  changeArticle(id: number, before: CountedArticle, after: CountedArticle): void {
    if (before.published_at === after.published_at && before.status === after.status) return;
    this.addArticle(id, before, -1);
    this.addArticle(id, after);
  }

  private add(of: Counted, id: number, siteId: number, timestamp: string | null, key: string, by: 1 | -1): void {
    for (const [table, length] of [
      [counted[of].day, 10],
      [counted[of].month, 7],
    ] as const) {
      const span = spanOf(id, timestamp, length);
      const tally = this.tallies.get(table) ?? new Map();
      this.tallies.set(table, tally);
      const counterId = `${siteId} ${span} ${key}`;
      const counter = tally.get(counterId);
      if (counter) counter.n += by;
      else tally.set(counterId, { site_id: siteId, span, key, n: by });
    }
  }

  async saveIn(trx: Transaction<Database>): Promise<void> {
    for (const of of Object.keys(counted) as Counted[]) {
      for (const spanColumn of ['day', 'month'] as const) {
        const table = counted[of][spanColumn];
        const rows = [...(this.tallies.get(table)?.values() ?? [])].filter((r) => r.n !== 0);
        const columns = sql`site_id, ${sql.ref(spanColumn)}, ${sql.ref(counted[of].key)}`;
        for (let i = 0; i < rows.length; i += upsertBatch) {
          const values = rows.slice(i, i + upsertBatch).map((r) => sql`(${r.site_id}, ${r.span}, ${r.key}, ${r.n})`);
          await sql`insert into ${sql.table(table)} (${columns}, n) values ${sql.join(values)}
            on conflict (${columns}) do update set n = ${sql.table(table)}.n + excluded.n`.execute(trx);
        }
        // A counter a change emptied goes, as a rebuild from the rows would leave none.
        const emptied = [...new Set(rows.filter((r) => r.n < 0).map((r) => r.site_id))];
        if (emptied.length > 0) await sql`delete from ${sql.table(table)} where n = 0 and site_id in (${sql.join(emptied)})`.execute(trx);
      }
    }
  }
}

/**
 * Reads and rebuilds the per-site counters of backlinks (by category) and articles (by status),
 * by UTC day and by UTC month. Lists take their totals and deep-page positions from them, stats
 * their counts; a sum over any range reads whole months plus the days of at most two months.
 */
export class CountersService {
  private readonly kept = new KeptCounts();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  /** A list's counts for days `bounds` (as the list filters its rows); `key` narrows to one category or status. */
  list(of: Counted, siteId: number, bounds: DayBounds, key?: string): ListCounts {
    return this.listCounts(of, siteId, bounds, key, true);
  }

  private listCounts(of: Counted, siteId: number, bounds: DayBounds, key: string | undefined, useKept: boolean): ListCounts {
    const id = JSON.stringify([of, siteId, bounds.from ?? null, bounds.to ?? null, key ?? null]);
    // The version of the kept counts this list has answered with (all its kept answers share it),
    // and that of its reads from the database (null once they differ): kept counts answer only
    // where both agree, so that one page never rests on counters of two versions.
    let answeredAt: number | undefined;
    let readAt: number | null | undefined;
    const kept = <T>(pick: (list: KeptList) => T | undefined): T | undefined => {
      const list = useKept ? this.kept.get(id) : undefined;
      const value = list && pick(list);
      const other = (at: number | null | undefined) => at !== undefined && at !== list!.version;
      if (value === undefined || other(answeredAt) || other(readAt)) return undefined;
      answeredAt = list!.version;
      return value;
    };
    const read = async <T>(split: SplitBounds, groupBy: 'span' | 'none', add: (list: KeptList, value: T) => void, answer: (sums: Sum[]) => T) => {
      const { sums, version } = await this.sum(of, siteId, split, groupBy, key);
      readAt = version !== undefined && (readAt === undefined || readAt === version) ? version : null;
      const value = answer(sums);
      if (version !== undefined) this.kept.keep(id, version, (list) => add(list, value));
      return value;
    };
    const inOrder = (sums: Sum[]) => inListOrder(sums.map(({ group, n }) => ({ span: group, n })));
    return {
      total: async () =>
        kept((list) => list.total) ??
        read(splitBounds(bounds), 'none', (list, total) => (list.total = total), (sums) => sums.reduce((total, { n }) => total + n, 0)),
      spans: async () =>
        kept((list) => list.spans) ??
        read(
          splitBounds(bounds),
          'span',
          (list, spans) => {
            list.spans = spans;
            list.total = totalOf(spans);
          },
          inOrder,
        ),
      daysOf: async (month) =>
        kept((list) => list.days.get(month)) ??
        read({ days: [{ from: `${month}-01`, to: `${month}-31` }], undated: false }, 'span', (list, days) => list.days.set(month, days), inOrder),
      undatedBlocks: async () =>
        kept((list) => list.blocks) ?? read({ days: [undatedBlocks], undated: false }, 'span', (list, blocks) => (list.blocks = blocks), inOrder),
      unchanged: () =>
        answeredAt === undefined
          ? undefined
          : { where: sql<boolean>`(select counts_version from sites where id = ${siteId}) = ${answeredAt}`, parameters: [siteId, answeredAt] },
      fresh: () => this.listCounts(of, siteId, bounds, key, false),
    };
  }

  /** Rows per category (backlinks) or status (articles) on the inclusive days `from`..`to`. */
  async byKey(of: Counted, siteId: number, from: string, to: string): Promise<Map<string, number>> {
    const totals = new Map<string, number>();
    for (const { group, n } of (await this.sum(of, siteId, splitBounds({ from, to }), 'key')).sums) totals.set(group, (totals.get(group) ?? 0) + n);
    return totals;
  }

  /**
   * Sums counters grouped by span or by key, or not grouped: `split.months` from the month
   * table, `split.days` from the day table. Grouped by span or not grouped, each statement also
   * reads the site's `counts_version`; `version` is it where every statement read the same.
   */
  private async sum(of: Counted, siteId: number, split: SplitBounds, groupBy: 'span' | 'key' | 'none', key?: string): Promise<{ sums: Sum[]; version?: number }> {
    const tables = counted[of];
    const query = (table: string, spanColumn: 'day' | 'month', conditions: RawBuilder<unknown>[]) => {
      const where = [sql`site_id = ${siteId}`, ...conditions];
      if (key !== undefined) where.push(sql`${sql.ref(tables.key)} = ${key}`);
      const from = sql`from ${sql.table(table)} where ${sql.join(where, sql` and `)}`;
      // Lists keep their counts: one more row, whose group is null, carries the version the
      // statement read the sums at. Stats keep nothing.
      const version = groupBy === 'key' ? sql`` : sql`union all select null, counts_version from sites where id = ${siteId}`;
      if (groupBy === 'none') return sql<SumRow>`select '' as ${sql.ref('group')}, sum(n) as n ${from} ${version}`.execute(this.db);
      const group = groupBy === 'span' ? sql.ref(spanColumn) : sql.ref(tables.key);
      return sql<SumRow>`select ${group} as ${sql.ref('group')}, sum(n) as n ${from} group by ${group} ${version}`.execute(this.db);
    };
    const reads = [];
    if (split.months) {
      const month = sql.ref('month');
      const conditions: RawBuilder<unknown>[] = [];
      if (split.months.from !== undefined) conditions.push(sql`${month} >= ${split.months.from}`);
      if (split.months.to !== undefined) conditions.push(sql`${month} <= ${split.months.to}`);
      if (!split.undated) conditions.push(sql`${month} <> ${undatedDay}`);
      reads.push(query(tables.month, 'month', conditions));
    }
    if (split.days.length > 0) {
      const day = sql.ref('day');
      const ranges = split.days.map(({ from, to }) => sql`(${day} >= ${from} and ${day} <= ${to})`);
      reads.push(query(tables.day, 'day', [sql`(${sql.join(ranges, sql` or `)})`]));
    }
    const rows = (await Promise.all(reads)).flatMap((result) => result.rows);
    const versions = new Set(rows.filter((row) => row.group === null).map((row) => Number(row.n)));
    const sums = rows.filter((row): row is SumRow & { group: string } => row.group !== null).map((row) => ({ group: row.group, n: Number(row.n) }));
    return versions.size === 1 ? { sums, version: [...versions][0]! } : { sums };
  }

  /**
   * Rebuilds every counter from the rows, in one transaction (`anchorage recount`). Writes wait
   * meanwhile (PostgreSQL: a share lock on the tables; SQLite: the single writer). Every site's
   * `counts_version` moves: no node pages by the counters it kept from before.
   */
  async recount(): Promise<{ backlinks: number; articles: number }> {
    return this.db.transaction().execute(async (trx) => {
      if (this.dialect === 'postgres') await sql`lock table backlinks, articles in share mode`.execute(trx);
      await rebuildCounters(trx, this.dialect);
      const [backlinks, articles] = await Promise.all(
        (['backlinks', 'articles'] as const).map((of) =>
          trx
            .selectFrom(of)
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .executeTakeFirstOrThrow()
            .then((row) => Number(row.n)),
        ),
      );
      return { backlinks: backlinks!, articles: articles! };
    });
  }
}

/**
 * Rebuilds the counters of `siteIds` (every site when not given) from their rows, in `trx`, and
 * moves their `counts_version`.
 */
export async function rebuildCounters(trx: Transaction<Database>, dialect: DialectName, siteIds?: readonly number[]): Promise<void> {
  const ofSites = siteIds ? sql`where site_id in (${sql.join(siteIds)})` : sql``;
  for (const of of Object.keys(counted) as Counted[]) {
    const { timestamp, key } = counted[of];
    for (const [spanColumn, length] of [
      ['day', 10],
      ['month', 7],
    ] as const) {
      const table = sql.table(counted[of][spanColumn]);
      const span = length === 10 ? daySpanSql(dialect, timestamp) : sql`coalesce(substr(${sql.ref(timestamp)}, 1, ${sql.lit(length)}), '')`;
      const keyValue = sql`coalesce(${sql.ref(key)}, '')`;
      await sql`delete from ${table} ${ofSites}`.execute(trx);
      await sql`insert into ${table} (site_id, ${sql.ref(spanColumn)}, ${sql.ref(key)}, n)
        select site_id, ${span}, ${keyValue}, count(*) from ${sql.table(of)} ${ofSites} group by site_id, ${span}, ${keyValue}`.execute(trx);
    }
  }
  await sql`update sites set counts_version = counts_version + 1 ${siteIds ? sql`where id in (${sql.join(siteIds)})` : sql``}`.execute(trx);
}
