import type { Compilable, Kysely, SelectQueryBuilder } from 'kysely';
import { isDay, isMonth, isUndatedBlock, lastIdOf, type SpanOffset, spanHolding, totalOf, undatedDay } from '../core/day-pages.js';
import { checkedDayRange } from '../core/periods.js';
import { precompiled } from '../db/precompiled.js';
import type { Database } from '../db/schema.js';
import type { ListCounts } from './counters.js';

export interface PageRequest {
  page: number;
  per_page: number;
}

export interface PageMeta {
  page: number;
  per_page: number;
  total: number;
  last_page: number;
}

export interface Page<T> {
  data: T[];
  meta: PageMeta;
}

/**
 * Runs an ordered query for one page and its total. `query` must already carry the filters and
 * the stable order; the count reuses the same filters without the order.
 */
export async function paginate<TB extends keyof Database, Row, Out>(
  query: SelectQueryBuilder<Database, TB, Row>,
  count: SelectQueryBuilder<Database, TB, object>,
  request: PageRequest,
  toResource: (row: Row) => Out,
): Promise<Page<Out>> {
  const [rows, counted] = await Promise.all([
    query.limit(request.per_page).offset((request.page - 1) * request.per_page).execute(),
    count.select((eb) => eb.fn.countAll().as('total')).executeTakeFirstOrThrow(),
  ]);
  return pageOf(rows.map(toResource), Number((counted as { total: number | string | bigint }).total), request);
}

function pageOf<T>(data: T[], total: number, request: PageRequest): Page<T> {
  return {
    data,
    meta: {
      page: request.page,
      per_page: request.per_page,
      total,
      last_page: Math.max(1, Math.ceil(total / request.per_page)),
    },
  };
}

/** Rows a page may skip by index (from the top, or from a month's start) instead of finding its day in the day counters. */
export const SHORT_SKIP = 500;

/**
 * A list's top pages (plain `LIMIT/OFFSET`), compiled once per shape of its filters: building
 * and compiling the query cost more than running it on SQLite.
 */
export class TopPages {
  private readonly compiled = new Map<string, (...parameters: unknown[]) => Promise<unknown[]>>();

  constructor(private readonly db: Kysely<Database>) {}

  /** `parameters` in the order `build()` compiles them; `shape` names which filters it has. */
  run<Row>(shape: string, build: () => Compilable<Row>, parameters: unknown[]): Promise<Row[]> {
    let query = this.compiled.get(shape);
    if (!query) {
      query = precompiled(this.db, build());
      this.compiled.set(shape, query);
    }
    return query(...parameters) as Promise<Row[]>;
  }
}

/** The list a page comes from: its query with the list's own filters, as built and as compiled. */
export interface ListQuery<TB extends keyof Database, Row> {
  build: () => SelectQueryBuilder<Database, TB, Row>;
  /** Which filters `build` applies, and their values in the order it applies them. */
  shape: string;
  parameters: unknown[];
  top: TopPages;
}

/**
 * One page of a list ordered by `column` descending (rows without one last), then by id
 * descending, from the list's counters: the total is their sum, and the page seeks by index to
 * the day (or, among rows without one, the block of ids) holding its first row and skips only
 * rows of that day (from the day's older end for a page in its older half), where `LIMIT/OFFSET`
 * would count and skip every row before it. The result is exactly what `LIMIT/OFFSET` over the
 * ordered rows gives. `list` carries the list's other filters; `bounds` its day filter, as counted.
 */
export async function paginateByDay<TB extends keyof Database, Row, Out>(
  list: ListQuery<TB, Row>,
  column: 'published_at' | 'acquired_at',
  bounds: DayFilters,
  counts: ListCounts,
  request: PageRequest,
  toResource: (row: Row) => Out,
  shortSkip = SHORT_SKIP,
): Promise<Page<Out>> {
  // Read with the counters this process kept, an empty page may rest on counters that changed since.
  const { rows, total } = (await pageByDay(list, column, bounds, counts, request, shortSkip)) ?? (await pageByDay(list, column, bounds, counts.fresh(), request, shortSkip))!;
  return pageOf(rows.map(toResource), total, request);
}

/** `paginateByDay`'s rows and total; undefined when they were read with kept counters that no longer hold. */
async function pageByDay<TB extends keyof Database, Row>(
  list: ListQuery<TB, Row>,
  column: 'published_at' | 'acquired_at',
  bounds: DayFilters,
  counts: ListCounts,
  request: PageRequest,
  shortSkip: number,
): Promise<{ rows: Row[]; total: number } | undefined> {
  // The column exists on the one table each caller queries; Kysely cannot see that through TB.
  const ref = column as never;
  const from = bounds.from === undefined ? [] : [`${bounds.from}T00:00:00Z`];
  const to = bounds.to === undefined ? [] : [`${bounds.to}T23:59:59Z`];
  const orderedList = () => {
    const ordered = list.build().orderBy(ref, (ob) => ob.desc().nullsLast()).orderBy('id' as never, 'desc');
    return from.length ? ordered.where(ref, '>=', from[0] as never) : ordered;
  };
  const offset = (request.page - 1) * request.per_page;
  if (offset < shortSkip) {
    // Near the top the index skips rows faster than the counters find their day; the total is one
    // sum, read alongside unless kept (it answers before its first await).
    const counted = counts.total();
    const check = counts.unchanged();
    const near = () => {
      const ordered = orderedList();
      const bounded = to.length ? ordered.where(ref, '<=', to[0] as never) : ordered;
      return (check ? bounded.where(check.where) : bounded).limit(request.per_page).offset(offset);
    };
    const shape = `${list.shape} from:${from.length} to:${to.length} kept:${check !== undefined}`;
    const parameters = [...list.parameters, ...from, ...to, ...(check?.parameters ?? []), request.per_page, offset];
    const [total, rows] = await Promise.all([counted, list.top.run(shape, near, parameters)]);
    return check && rows.length === 0 ? undefined : { rows, total };
  }
  const spans = await counts.spans();
  const total = totalOf(spans);
  const ordered = orderedList();
  const undated = ordered.where(ref, 'is', null);
  let start = spanHolding(spans, offset);
  if (start && isMonth(start.span)) {
    // The index skips a month's first rows about as fast as the month's day counters are read.
    start = start.within < shortSkip ? { span: `${start.span}-31`, within: start.within } : spanHolding(await counts.daysOf(start.span), start.within);
  } else if (start?.span === undatedDay && start.within >= shortSkip) {
    start = spanHolding(await counts.undatedBlocks(), start.within);
  }
  const check = counts.unchanged();
  // The skipped rows are read from the index alone (ids); only the page's rows are read whole.
  const idsOf = (seek: typeof ordered, limit: number, offset: number) => seek.clearSelect().select('id' as never).limit(limit).offset(offset) as never;
  const rowsOf = (seek: typeof ordered, limit: number, offset: number): Promise<Row[]> =>
    (check ? ordered.where(check.where) : ordered).where('id' as never, 'in', idsOf(seek, limit, offset)).execute();
  const rowsFrom = async (start: SpanOffset): Promise<Row[]> => {
    if (start.span === undatedDay) return rowsOf(undated, request.per_page, start.within);
    // A block holds the rows of its ids (`undatedBlockOf`): this bound keeps it and the blocks after it.
    if (isUndatedBlock(start.span)) return rowsOf(undated.where('id' as never, '<=', lastIdOf(start.span) as never), request.per_page, start.within);
    const { n } = start;
    if (n !== undefined && isDay(start.span) && start.within * 2 >= n && start.within + request.per_page <= n) {
      // The page lies in the day's older half: its rows are read from the day's first instant
      // onwards, oldest first (the index read backwards), skipping the fewer rows after it.
      const fromDayStart = list.build().where(ref, '>=', `${start.span}T00:00:00Z` as never).orderBy(ref, (ob) => ob.asc().nullsFirst()).orderBy('id' as never, 'asc');
      return rowsOf(fromDayStart, request.per_page, n - start.within - request.per_page);
    }
    // Timestamps are RFC 3339 UTC with whole seconds: this bound keeps `start.span` and earlier
    // days, and (the day being within `bounds.to`) replaces the list's upper bound. A whole month
    // in the list comes as its day 31, which sorts after every time of the month.
    const dated = await rowsOf(ordered.where(ref, '<=', `${start.span}T23:59:59Z` as never), request.per_page, start.within);
    const rest = request.per_page - dated.length;
    // Kept counters that no longer hold leave `dated` empty: they must not lead on to the undated rows.
    if (rest === 0 || spans.at(-1)?.span !== undatedDay || (check && dated.length === 0)) return dated;
    return [...dated, ...(await ordered.where('id' as never, 'in', idsOf(undated, rest, 0)).execute())];
  };
  const rows = start ? await rowsFrom(start) : [];
  return check && rows.length === 0 ? undefined : { rows, total };
}

export interface DayFilters {
  from?: string;
  to?: string;
}

/** Validates a list's day filter (`from` not after `to`) and returns it as counter bounds. */
export function checkedDayFilters({ from, to }: DayFilters): DayFilters {
  if (from !== undefined && to !== undefined) checkedDayRange(from, to);
  const bounds: DayFilters = {};
  if (from !== undefined) bounds.from = from;
  if (to !== undefined) bounds.to = to;
  return bounds;
}
