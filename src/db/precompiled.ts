import type { CompiledQuery, Compilable, Kysely, QueryResult } from 'kysely';
import type { Database } from './schema.js';
import type { DirectRun } from './sqlite-driver.js';

/** Databases whose precompiled reads run without Kysely's executor (`runPrecompiledWith`). */
const directRuns = new WeakMap<Kysely<Database>, DirectRun>();

/**
 * Lets the reads `precompiled` makes for `db` run with `run`: on SQLite, the driver's own
 * statement, which takes the connection as Kysely would (after any transaction running on it)
 * but without the executor acquiring and releasing a connection object for each statement (two
 * async functions a statement instead of nine). Not for a traced database: its spans are in the
 * executor's path.
 */
export const runPrecompiledWith = (db: Kysely<Database>, run: DirectRun): void => {
  directRuns.set(db, run);
};

/**
 * A read built and compiled once, then run with new values for its parameters: on the hottest
 * paths (every request's key, every article read) building a Kysely query cost as much as running
 * it on SQLite. Build it with placeholder values; pass the real ones in the order they compiled.
 */
export function precompiled<Row>(db: Kysely<Database>, query: Compilable<Row>): (...parameters: unknown[]) => Promise<Row[]> {
  const compiled = query.compile();
  const run: DirectRun = directRuns.get(db) ?? (<R>(query: CompiledQuery) => db.executeQuery<R>(query) as Promise<QueryResult<R>>);
  return async (...parameters) => {
    if (parameters.length !== compiled.parameters.length) {
      throw new Error(`Expected ${compiled.parameters.length} parameters, got ${parameters.length}: ${compiled.sql}`);
    }
    return (await run<Row>({ ...compiled, parameters })).rows;
  };
}
