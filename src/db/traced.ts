import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryCompiler, QueryResult, TransactionSettings } from 'kysely';
import { inSpan, tracer } from '../telemetry.js';

type System = 'sqlite' | 'postgresql';

/** The span of one statement: named by its verb, with the SQL text (values travel as parameters, never in it). */
function spanOf(system: System, query: CompiledQuery) {
  const verb = /^\s*(\w+)/.exec(query.sql)?.[1]?.toUpperCase() ?? 'QUERY';
  return { name: `db ${verb}`, attributes: { 'db.system.name': system, 'db.operation.name': verb, 'db.query.text': query.sql } };
}

class TracedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly system: System,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { name, attributes } = spanOf(this.system, query);
    return inSpan(name, attributes, () => this.inner.executeQuery<R>(query));
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    const { name, attributes } = spanOf(this.system, query);
    const span = tracer.startSpan(name, { attributes });
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } finally {
      span.end();
    }
  }
}

const innerOf = (connection: DatabaseConnection) => (connection as TracedConnection).inner;

/** The dialect's driver, with a span around every query Kysely runs (transactions' own statements aside). */
class TracedDriver implements Driver {
  /** One wrapper per connection, handed out again (see the SQLite driver's leases). */
  private readonly wrappers = new WeakMap<DatabaseConnection, TracedConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly system: System,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await this.inner.acquireConnection();
    let traced = this.wrappers.get(inner);
    if (!traced) {
      traced = new TracedConnection(inner, this.system);
      this.wrappers.set(inner, traced);
    }
    return traced;
  }
  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(innerOf(connection), settings);
  }
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(innerOf(connection));
  }
  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(innerOf(connection));
  }
  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.savepoint?.(innerOf(connection), name, compile);
  }
  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.rollbackToSavepoint?.(innerOf(connection), name, compile);
  }
  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.releaseSavepoint?.(innerOf(connection), name, compile);
  }
  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(innerOf(connection));
  }
  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** `dialect` with a span per database query (used when tracing is on). */
export function tracedDialect(dialect: Dialect, system: System): Dialect {
  return {
    createDriver: () => new TracedDriver(dialect.createDriver(), system),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}
