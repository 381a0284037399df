import type { SelectQueryBuilder } from 'kysely';
import { type DayCount, type DayOffset, dayHolding, totalOf, undatedDay } from '../core/day-pages.js';
import { checkedDayRange } from '../core/periods.js';
import { dayRangeBounds } from '../core/time.js';
import type { Database } from '../db/schema.js';

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

/**
 * One page of a list ordered by `column` descending (rows without one last), then by id
 * descending, with the list's rows per UTC day (`days`, from the counters, in list order). The
 * total is their sum; the page seeks by index to the day holding its first row and skips only
 * rows of that day, where `LIMIT/OFFSET` would count and skip every row before it. The result is
 * exactly what `LIMIT/OFFSET` over the ordered rows gives. `query` must carry the list's filters.
 */
export async function paginateByDay<TB extends keyof Database, Row, Out>(
  query: SelectQueryBuilder<Database, TB, Row>,
  column: 'published_at' | 'acquired_at',
  days: readonly DayCount[],
  request: PageRequest,
  toResource: (row: Row) => Out,
): Promise<Page<Out>> {
  // The column exists on the one table each caller queries; Kysely cannot see that through TB.
  const ref = column as never;
  const ordered = query.orderBy(ref, (ob) => ob.desc().nullsLast()).orderBy('id' as never, 'desc');
  const undated = ordered.where(ref, 'is', null);
  const rowsFrom = async (start: DayOffset): Promise<Row[]> => {
    if (start.day === undatedDay) return undated.limit(request.per_page).offset(start.withinDay).execute();
    // Timestamps are RFC 3339 UTC with whole seconds, so this bound keeps `start.day` and earlier days.
    const dated = await ordered
      .where(ref, '<=', `${start.day}T23:59:59Z` as never)
      .limit(request.per_page)
      .offset(start.withinDay)
      .execute();
    const rest = request.per_page - dated.length;
    if (rest === 0 || days.at(-1)?.day !== undatedDay) return dated;
    return [...dated, ...(await undated.limit(rest).execute())];
  };
  const start = dayHolding(days, (request.page - 1) * request.per_page);
  const rows = start ? await rowsFrom(start) : [];
  return pageOf(rows.map(toResource), totalOf(days), request);
}

export interface DayFilters {
  from?: string;
  to?: string;
}

/**
 * Keeps rows whose timestamp `column` falls on the inclusive UTC days `from`..`to` (either may be
 * absent); rows without a timestamp are left out whenever a bound is given.
 */
export function withinDays<TB extends keyof Database, Row>(
  query: SelectQueryBuilder<Database, TB, Row>,
  column: 'published_at' | 'acquired_at',
  { from, to }: DayFilters,
): SelectQueryBuilder<Database, TB, Row> {
  if (from !== undefined && to !== undefined) checkedDayRange(from, to);
  let filtered = query;
  // The column exists on the one table each caller queries; Kysely cannot see that through TB.
  const ref = column as never;
  if (from !== undefined) filtered = filtered.where(ref, '>=', `${from}T00:00:00Z` as never);
  if (to !== undefined) filtered = filtered.where(ref, '<', dayRangeBounds(to, to).end as never);
  return filtered;
}
