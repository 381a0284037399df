import type { Compilable, Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * A read built and compiled once, then run with new values for its parameters: on the hottest
 * paths (every request's key, every article read) building a Kysely query cost as much as running
 * it on SQLite. Build it with placeholder values; pass the real ones in the order they compiled.
 */
export function precompiled<Row>(db: Kysely<Database>, query: Compilable<Row>): (...parameters: unknown[]) => Promise<Row[]> {
  const compiled = query.compile();
  return async (...parameters) => {
    if (parameters.length !== compiled.parameters.length) {
      throw new Error(`Expected ${compiled.parameters.length} parameters, got ${parameters.length}: ${compiled.sql}`);
    }
    return (await db.executeQuery<Row>({ ...compiled, parameters })).rows;
  };
}
