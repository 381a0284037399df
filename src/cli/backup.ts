import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { sql } from 'kysely';
import type { Settings } from '../config.js';
import { connect } from '../db/connect.js';

/** Printed (exit 2) for a PostgreSQL database: pg_dump is the way, and it never sees our URL in a message. */
export const usePgDump =
  'backup copies a SQLite database; back up PostgreSQL with pg_dump, e.g. pg_dump --format=custom --file=FILE "$DATABASE_URL" (see "Running in production" in the README)';

export class BackupError extends Error {}

/**
 * A consistent copy of the SQLite database in a new file (`VACUUM INTO`), taken while the
 * service runs, waiting up to `lockWaitMs` for its write lock. PostgreSQL has its own tool, pg_dump.
 */
export async function backup(settings: Settings, file: string, lockWaitMs: number): Promise<{ written: string } | 'postgres'> {
  const target = resolve(file);
  const db = connect(settings.databaseUrl, settings.dataDir, { lockWaitMs });
  try {
    if (db.dialect === 'postgres') return 'postgres';
    if (existsSync(target)) throw new BackupError(`${target} exists already; backup writes a new file`);
    await sql`vacuum into ${target}`.execute(db.kysely);
    return { written: target };
  } finally {
    await db.kysely.destroy();
  }
}
