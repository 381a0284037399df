import { AppError } from '../core/errors.js';

/**
 * Seconds a client waits before it tries again a write refused because another process held the
 * SQLite write lock: the CLI's import commits in short batches, so the lock comes free well within.
 */
export const lockRetryAfter = 1;

const codeOf = (error: unknown): string => String((error as { code?: unknown } | null)?.code ?? '');

/** SQLite's “database is locked” (SQLITE_BUSY and its extended codes): another connection writes. */
export const isBusy = (error: unknown): boolean => /^SQLITE_BUSY/.test(codeOf(error));

/** No room left for the database: SQLite's SQLITE_FULL, PostgreSQL's disk_full (SQLSTATE 53100). */
export const isStorageFull = (error: unknown): boolean => ['SQLITE_FULL', '53100'].includes(codeOf(error));

/** A database failure the catalogue names, with the database's own code for the log. */
export interface StorageFailure {
  error: AppError;
  /** The database's code (SQLITE_FULL, 53100, SQLITE_BUSY …): what the log line names. */
  cause: string;
}

/**
 * The catalogue's answer for a refusal of the database that is no fault of the request and passes
 * (a full disk, another process's write lock); undefined for anything else. Either way the
 * refused transaction changed nothing.
 */
export function storageFailureOf(error: unknown): StorageFailure | undefined {
  if (isStorageFull(error)) {
    return {
      error: new AppError('insufficient_storage', 'The server’s storage is full; nothing was saved. Try again once space has been freed.'),
      cause: codeOf(error),
    };
  }
  if (isBusy(error)) {
    return {
      error: new AppError('service_unavailable', 'The database is busy with another process’s write; nothing was saved. Retry shortly.', {}, lockRetryAfter),
      cause: codeOf(error),
    };
  }
  return undefined;
}
