import { sql } from 'kysely';

/**
 * Code points of a URL that the import keys' indexes (migration 021) hold: an entry stays under
 * PostgreSQL's limit for an index row (about 2.7 kB) whatever the URL's length; a lookup compares
 * the whole URL after. The migration keeps its own copy.
 */
export const keyPrefixLength = 200;

/** The indexed expression of a URL column, written as migration 021 wrote it in the index. */
export const keyPrefixSql = (column: string) => sql<string>`substr(${sql.ref(column)}, 1, ${sql.lit(keyPrefixLength)})`;
