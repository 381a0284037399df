/**
 * How long (ms) a command waits for a serving node's write lock on SQLite: a command has no client
 * to answer 503 to, so it waits out the service's writes rather than fail.
 */
export const cliLockWaitMs = 120_000;

/**
 * A command's SQLite page cache (KiB): an import looks up and inserts keys all over the indexes
 * of a site of a million rows, and with the serving node's 2 MB most of them read a page back
 * from the file (`docs/decisions/0011-sqlite-for-one-node.md`).
 */
export const cliPageCacheKib = 65_536;
