import type { SelectQueryBuilder } from 'kysely';
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
  const total = Number((counted as { total: number | string | bigint }).total);
  return {
    data: rows.map(toResource),
    meta: {
      page: request.page,
      per_page: request.per_page,
      total,
      last_page: Math.max(1, Math.ceil(total / request.per_page)),
    },
  };
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
