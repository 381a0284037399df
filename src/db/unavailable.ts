import { AppError } from '../core/errors.js';

/** Seconds a client should wait before retrying a request whose database connection failed. */
const databaseRetryAfter = 2;

/** SQLSTATEs of a connection PostgreSQL ended or would not open (shutdown, restart, too many, timeouts). */
const endedConnectionStates = new Set(['57P01', '57P02', '57P03', '57P05', '53300', '25P03']);

/** Node's errors of a socket that failed or could not connect. */
const socketFailures = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * pg's own errors (no code) of a connection that ended or could not be opened in time; a
 * transaction's ROLLBACK on a connection that ended meanwhile fails with "Client was closed", and
 * Kysely then refuses the connection it discarded.
 */
const driverFailure = /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|Postgres connection has been discarded|timeout exceeded when trying to connect)/;

/** Whether `error` is the failure of the connection itself rather than of the statement it ran. */
function isConnectionFailure(error: unknown): boolean {
  if (error instanceof DatabaseUnavailable) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code.startsWith('08') || endedConnectionStates.has(code) || socketFailures.has(code);
  return error instanceof Error && driverFailure.test(error.message);
}

/**
 * A query that failed because its PostgreSQL connection did (terminated, restarted, unreachable):
 * the request gets 503 with Retry-After, and the pool opens a new connection for the next one.
 */
export class DatabaseUnavailable extends Error {
  constructor(cause: unknown) {
    super('The database connection failed.', { cause });
    this.name = 'DatabaseUnavailable';
  }

  /** The catalogue's answer to the request it failed. */
  toAppError(): AppError {
    return new AppError('service_unavailable', 'The database is briefly unavailable; retry after Retry-After seconds.', {}, databaseRetryAfter);
  }
}

/** `error`, as DatabaseUnavailable when its connection failed. */
export const connectionFailureOf = (error: unknown): unknown => (isConnectionFailure(error) && !(error instanceof DatabaseUnavailable) ? new DatabaseUnavailable(error) : error);
