/**
 * How long (ms) a command waits for a serving node's write lock on SQLite: a command has no client
 * to answer 503 to, so it waits out the service's writes rather than fail.
 */
export const cliLockWaitMs = 120_000;
