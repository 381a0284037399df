import type SQLite from 'better-sqlite3';

/** How many prepared statements a SQLite connection keeps (least recently used go first). */
const statementCacheSize = 200;

/**
 * `prepare` for the connection, preparing each SQL text once: Kysely asks for a new statement on
 * every query, and preparing costs more than running a small one. Sharing is safe: the driver
 * runs one statement at a time on the connection (a stream holds it until closed). The off-loop
 * connection's thread keeps its statements the same way.
 */
export function statementCache(database: SQLite.Database): (source: string) => SQLite.Statement {
  const statements = new Map<string, SQLite.Statement>();
  return (source) => {
    const cached = statements.get(source);
    if (cached) {
      statements.delete(source);
      statements.set(source, cached);
      return cached;
    }
    const statement = database.prepare(source);
    statements.set(source, statement);
    if (statements.size > statementCacheSize) statements.delete(statements.keys().next().value!);
    return statement;
  };
}
