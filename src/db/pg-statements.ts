import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { connectionFailureOf } from './unavailable.js';

/** Distinct SQL texts a process prepares by name; past this many, texts run unnamed. */
const maxNamedTexts = 256;
/** Texts with more parameters (multi-row inserts, long lists) vary with their data: never named. */
const maxNamedParameters = 16;

/**
 * Begins a text whose best plan depends on its values: a site's condition matches ten rows or a
 * hundred thousand. Such a text runs unnamed, planned for its values each time. Named, PostgreSQL
 * plans it for any values after five runs, and that plan read a large site's whole index of sites
 * on every search (`services/search.ts`).
 */
export const plannedForItsValues = '/* planned for its values */ ';

/** PostgreSQL's refusal of a prepared statement whose table changed its columns since (a migration). */
const changedResultType = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === '0A000' && /cached plan must not change result type/.test(String((error as Error).message));

/**
 * `pool` for Kysely, each query run outside a transaction a named prepared statement: PostgreSQL
 * parses and plans its text once per connection instead of on every query, as the bench's bare
 * floor does. The texts the service sends are few (built from its code, values bound as
 * parameters); the bounds keep a text that varies with its data, and any surprise, from piling
 * up prepared statements in every connection. A text that begins with `plannedForItsValues` is
 * never named.
 *
 * A statement prepared before a migration changed its table's columns is refused ever after on
 * that connection ("cached plan must not change result type"): the text then takes a new name,
 * which every connection prepares afresh, and the query runs again. Only a statement run outside
 * a transaction is named, so that run again it finds the connection as it was.
 *
 * A query or connection that fails because the connection did (unavailable.ts) throws
 * DatabaseUnavailable, which a request answers with 503 and Retry-After.
 */
export function namedStatements(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>();
  let made = 0;
  const newName = (text: string): string => {
    made += 1;
    const name = `anchorage_${made}`;
    names.set(text, name);
    return name;
  };
  const nameOf = (text: string, parameters: number): string | undefined =>
    names.get(text) ?? (parameters > maxNamedParameters || names.size >= maxNamedTexts ? undefined : newName(text));

  async function run(client: pg.PoolClient, text: string, values: unknown[]): Promise<pg.QueryResult> {
    const name = client.getTransactionStatus() === 'I' && !text.startsWith(plannedForItsValues) ? nameOf(text, values.length) : undefined;
    try {
      return await client.query({ name, text, values });
    } catch (error) {
      if (name === undefined || !changedResultType(error)) throw connectionFailureOf(error);
      return client.query({ name: newName(text), text, values }).catch((again: unknown) => {
        throw connectionFailureOf(again);
      });
    }
  }

  // Kysely keeps its connection per client object: one wrapper per pooled client. Only `query`'s
  // first form: Kysely passes a cursor (the other) only to a dialect given a cursor class, which
  // this service's is not. (pg types a result's command as any string, Kysely as the commands it
  // knows: hence the cast.)
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrapped = (client: pg.PoolClient): PostgresPoolClient => ({
    query: ((text: string, values: readonly unknown[]) => run(client, text, [...values])) as unknown as PostgresPoolClient['query'],
    // Kysely releases with `true` a connection it discarded (a failed ROLLBACK): pg then drops the
    // client instead of handing it out again.
    release: (destroy?: boolean) => client.release(destroy),
  });
  return {
    connect: async () => {
      const client = await pool.connect().catch((error: unknown) => {
        throw connectionFailureOf(error);
      });
      let wrapper = wrappers.get(client);
      if (!wrapper) wrappers.set(client, (wrapper = wrapped(client)));
      return wrapper;
    },
    end: () => pool.end(),
    options: pool.options,
  };
}
