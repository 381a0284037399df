import type { SelectQueryBuilder } from 'kysely';
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
