import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { storageFailureOf } from '../../src/db/failures.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, type Harness, startHarness, testDatabaseUrl } from '../helpers/harness.js';

// On a full disk, SQLite's refused writes answered a generic 500, and the log
// said "cannot rollback - no transaction is active" (the rollback SQLite had already made masked
// the cause). They now answer 507 insufficient_storage, the log names SQLITE_FULL, nothing is half
// written, and the node serves writes again once space returns.

describe('the catalogue error for a database refusal that passes', () => {
  it('maps SQLite’s and PostgreSQL’s disk-full to 507 and SQLite’s busy to 503 with Retry-After; nothing else', () => {
    for (const code of ['SQLITE_FULL', '53100']) {
      const failure = storageFailureOf(Object.assign(new Error('no room'), { code }));
      expect(failure?.cause).toBe(code);
      expect(failure?.error).toBeInstanceOf(AppError);
      expect(failure?.error.status).toBe(507);
      expect(failure?.error.toBody()).toEqual({ error: 'insufficient_storage', message: expect.stringMatching(/storage is full/) });
    }
    for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT']) {
      const failure = storageFailureOf(Object.assign(new Error('database is locked'), { code }));
      expect(failure?.error).toMatchObject({ code: 'service_unavailable', status: 503, retryAfter: 1 });
    }
    for (const code of ['SQLITE_CONSTRAINT_UNIQUE', '23505', '53200', undefined]) expect(storageFailureOf(Object.assign(new Error('x'), { code }))).toBeUndefined();
  });
});

/** A tmpfs of `size` mounted on a new folder, or why it cannot be (not root, no mount in a container). */
function mountTmpfs(size: string): { dir: string; unmount: () => void } | string {
  const dir = mkdtempSync(join(tmpdir(), 'anchorage-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmdirSync(dir);
    return String((error as { stderr?: Buffer }).stderr ?? error).trim();
  }
  return {
    dir,
    unmount: () => {
      // Lazily: the closed database's thread may let go of its files a moment later.
      execFileSync('umount', ['-l', dir]);
      rmdirSync(dir);
    },
  };
}

/** Writes zeros to `file` until the file system is full. */
function fillUp(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

const tmpfs = testDatabaseUrl ? 'PostgreSQL runs elsewhere: its disk-full (53100) is mapped above' : mountTmpfs('48m');
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe.skipIf(typeof tmpfs === 'string')(`SQLite on a full disk${typeof tmpfs === 'string' ? ` (skipped: ${tmpfs})` : ''}`, () => {
  it('refuses writes with 507 insufficient_storage, logs SQLITE_FULL, writes nothing, and recovers by itself when space returns', { timeout: 120_000 }, async () => {
    const { dir, unmount } = tmpfs as Exclude<typeof tmpfs, string>;
    cleanups.push(unmount);
    const lines: string[] = [];
    const h: Harness = await startHarness({ env: { DATA_DIR: dir }, log: (line) => lines.push(line) });
    cleanups.push(() => h.close());
    const customer = await createCustomer(h.services);
    const { articleIds } = await seedSite(h.services, customer.email, { articles: [{ status: 'draft', title: 'Before', body: '<p>Before the disk filled up.</p>' }] });
    const articleId = articleIds[0]!;
    const put = (title: string, requestId: string) =>
      h.app.inject({
        method: 'PUT',
        url: `/api/v1/articles/${articleId}`,
        headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json', 'x-request-id': requestId },
        // Larger than anything the write-ahead log holds free: the write must grow the files.
        payload: JSON.stringify({ title, body: `<p>${'Long enough to need new pages. '.repeat(60_000)}</p>` }),
      });
    const revisionsBefore = await h.services.db.kysely.selectFrom('revisions').select('id').where('article_id', '=', articleId).execute();

    const filler = join(dir, 'filler');
    fillUp(filler);
    const refused = await put('On a full disk', 'full-disk-put');
    expect(refused.statusCode).toBe(507);
    expect(refused.json()).toEqual({ error: 'insufficient_storage', message: expect.stringMatching(/storage is full/) });
    expect(lines.join('\n')).toMatch(/SQLITE_FULL/);
    expect(lines.join('\n')).not.toMatch(/cannot rollback/);
    // Nothing half-written: neither the article nor a revision.
    const article = await h.services.db.kysely.selectFrom('articles').select(['title', 'version']).where('id', '=', articleId).executeTakeFirstOrThrow();
    expect(article).toEqual({ title: 'Before', version: 1 });
    expect(await h.services.db.kysely.selectFrom('revisions').select('id').where('article_id', '=', articleId).execute()).toEqual(revisionsBefore);
    // The refused call's record waits (the spill file is on the full disk too: in memory).
    await h.services.activity.flush();

    rmSync(filler);
    const accepted = await put('After', 'after-space-put');
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json().data.title).toBe('After');
    await h.services.activity.flush();
    const records = await h.services.db.kysely
      .selectFrom('activity_log')
      .select(['request_id', 'status', 'error'])
      .where('request_id', 'in', ['full-disk-put', 'after-space-put'])
      .orderBy('request_id')
      .execute();
    expect(records).toEqual([
      { request_id: 'after-space-put', status: 200, error: null },
      { request_id: 'full-disk-put', status: 507, error: 'insufficient_storage' },
    ]);
  });
});
