import type { Kysely } from 'kysely';
import { AppError } from '../core/errors.js';
import type { Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import type { ActivityLog } from './activity.js';
import { requireStaff, staffEntry } from './staff-actions.js';

/** The account asked for is not there. */
export class ExportError extends Error {}

/** Rows read per statement: articles carry bodies (up to 5 MB each), backlinks are small. */
const articlesPerRead = 20;
const backlinksPerRead = 1_000;

const siteMembers = ['website_url', 'name', 'language', 'country', 'geographic_scope', 'industry'] as const;
const articleMembers = ['url', 'title', 'status', 'published_at', 'target_keyword', 'meta_description', 'featured_image_url', 'body'] as const;
const backlinkMembers = ['source_url', 'target_url', 'acquired_at', 'source_domain', 'anchor_text', 'anchor_type', 'status', 'category'] as const;

/** `row`'s `members` as a JSON object, in that order. */
const objectOf = (row: Record<string, unknown>, members: readonly string[], first: Record<string, unknown> = {}): string =>
  JSON.stringify({ ...first, ...Object.fromEntries(members.map((member) => [member, row[member] ?? null])) });

/**
 * An account's sites, articles (their current bodies) and backlinks in the import format
 * (docs/operations.md, "Import"), read and written a page of rows at a time: what offboarding
 * hands a customer, and what `anchorage import` takes back. Rows go in the order of their ids,
 * so an export imported into an empty database exports again byte for byte the same.
 */
export class ExportService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly activity: ActivityLog,
  ) {}

  /**
   * The export a staff member downloads from the account's page: the bytes `anchorage export`
   * prints (the file, then a newline), recorded in the staff member's activity.
   */
  async staffDownload(actor: Actor, accountId: number): Promise<AsyncGenerator<string>> {
    requireStaff(actor);
    const account = await this.db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
    if (!account) throw new AppError('not_found', 'No account with this id.');
    this.activity.record(staffEntry(actor, 'exportAccount', `/app/staff/accounts/${accountId}/export`, 200));
    const pieces = this.exportAccount(accountId);
    return (async function* () {
      yield* pieces;
      yield '\n';
    })();
  }

  /** The account of `account` (an account id or a user's e-mail); `ExportError` when there is none. */
  async accountOf(account: string): Promise<number> {
    const byId = /^\d+$/.test(account) && Number(account) <= 2_147_483_647;
    const found = byId
      ? await this.db.selectFrom('accounts').select('id as account_id').where('id', '=', Number(account)).executeTakeFirst()
      : await this.db.selectFrom('users').select('account_id').where('email', '=', account.trim().toLowerCase()).executeTakeFirst();
    if (!found) throw new ExportError(`no account with id or user e-mail ${account}`);
    return found.account_id;
  }

  /** The import file of account `accountId`, as `JSON.stringify` writes it, in pieces. */
  async *exportAccount(accountId: number): AsyncGenerator<string> {
    // The account's first user owns its sites in the file (import needs an existing user).
    const owner = await this.db.selectFrom('users').select('email').where('account_id', '=', accountId).orderBy('id').limit(1).executeTakeFirst();
    const sites = await this.db.selectFrom('sites').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
    yield '{"sites":[';
    for (const [index, site] of sites.entries()) {
      const head = objectOf(site, siteMembers, { owner: owner?.email ?? null });
      yield `${index === 0 ? '' : ','}${head.slice(0, -1)},"articles":[`;
      yield* this.rows('articles', site.id, articlesPerRead, articleMembers);
      yield '],"backlinks":[';
      yield* this.rows('backlinks', site.id, backlinksPerRead, backlinkMembers);
      yield ']}';
    }
    yield ']}';
  }

  private async *rows(table: 'articles' | 'backlinks', siteId: number, perRead: number, members: readonly string[]): AsyncGenerator<string> {
    let after = 0;
    let first = true;
    for (;;) {
      const rows = await this.db.selectFrom(table).selectAll().where('site_id', '=', siteId).where('id', '>', after).orderBy('id').limit(perRead).execute();
      if (rows.length === 0) return;
      after = rows.at(-1)!.id;
      yield `${first ? '' : ','}${rows.map((row) => objectOf(row, members)).join(',')}`;
      first = false;
    }
  }
}
