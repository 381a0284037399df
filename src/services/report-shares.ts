import type { Kysely } from 'kysely';
import { randomBase62, sha256 } from '../core/secrets.js';
import { addDays, type Clock, toTimestamp } from '../core/time.js';
import type { Database, SiteRow } from '../db/schema.js';
import type { Actor, RequestInfo } from './actor.js';
import type { ActivityLog } from './activity.js';

export interface ReportShareSummary {
  id: number;
  name: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  last_opened_at: string | null;
}

export interface CreatedShare {
  id: number;
  /** Shown once; only its hash is kept. */
  token: string;
}

/** What a token opens: the share and its site, or why it no longer does. */
export type OpenedShare =
  | { state: 'open'; share: ReportShareSummary; site: SiteRow; actor: Actor }
  | { state: 'revoked' | 'expired' };

/** Days a link lives when its creator does not say; and the longest it may. */
export const defaultShareDays = 30;
export const maxShareDays = 365;

/** A share token: `rs_` and 40 base62 characters (238 random bits). */
export const shareTokenPattern = /^rs_[0-9A-Za-z]{40}$/;
const newShareToken = (): string => `rs_${randomBase62(40)}`;

const summaryColumns = ['id', 'name', 'created_at', 'expires_at', 'revoked_at', 'last_opened_at'] as const;

/**
 * Read-only links to one site's monthly report for people without an account: created and
 * revoked by a user of the site's account, opened by anyone holding the token until it expires.
 */
export class ReportSharesService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly activity: ActivityLog,
  ) {}

  /** A new link to the site's report, living `days` days. The caller has checked the site is the user's. */
  async create(site: SiteRow, userId: number, options: { name: string; days: number }): Promise<CreatedShare> {
    const token = newShareToken();
    const now = this.clock.now();
    const row = await this.db
      .insertInto('report_shares')
      .values({
        account_id: site.account_id,
        site_id: site.id,
        user_id: userId,
        name: options.name,
        token_hash: sha256(token),
        created_at: toTimestamp(now),
        expires_at: toTimestamp(addDays(now, options.days)),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: row.id, token };
  }

  /** The site's links, newest first. */
  async list(accountId: number, siteId: number): Promise<ReportShareSummary[]> {
    return this.db
      .selectFrom('report_shares')
      .select([...summaryColumns])
      .where('account_id', '=', accountId)
      .where('site_id', '=', siteId)
      .orderBy('id', 'desc')
      .execute();
  }

  /** Revokes one of the account's links to the site; whether one was revoked. */
  async revoke(accountId: number, siteId: number, id: number): Promise<boolean> {
    const result = await this.db
      .updateTable('report_shares')
      .set({ revoked_at: toTimestamp(this.clock.now()) })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('site_id', '=', siteId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * What a token opens; undefined for a token that names no link. The actor reads the one site
   * with the account's rights, read-only, as the link's creator.
   */
  async open(token: string, request: RequestInfo): Promise<OpenedShare | undefined> {
    if (!shareTokenPattern.test(token)) return undefined;
    const row = await this.db
      .selectFrom('report_shares')
      .select([...summaryColumns, 'account_id', 'site_id', 'user_id'])
      .where('token_hash', '=', sha256(token))
      .executeTakeFirst();
    if (!row) return undefined;
    if (row.revoked_at) return { state: 'revoked' };
    if (row.expires_at <= toTimestamp(this.clock.now())) return { state: 'expired' };
    const site = await this.db.selectFrom('sites').selectAll().where('id', '=', row.site_id).where('account_id', '=', row.account_id).executeTakeFirst();
    if (!site) return undefined;
    const share: ReportShareSummary = { id: row.id, name: row.name, created_at: row.created_at, expires_at: row.expires_at, revoked_at: null, last_opened_at: row.last_opened_at };
    const actor: Actor = { accountId: row.account_id, userId: row.user_id, credential: { kind: 'session' }, channel: 'editor', staff: false, scopes: ['read'], request };
    return { state: 'open', share, site, actor };
  }

  /** Records an opening in the account's activity log and on the link (which the list shows). */
  async recordOpen(opened: Extract<OpenedShare, { state: 'open' }>, operation: string, what: string, status: number): Promise<void> {
    const { request } = opened.actor;
    await this.db
      .updateTable('report_shares')
      .set({ last_opened_at: toTimestamp(this.clock.now()) })
      .where('id', '=', opened.share.id)
      .execute();
    // The path names the link by its id: the token never reaches the log.
    this.activity.record({
      actor: opened.actor,
      channel: 'api',
      request: { ...request!, operation, path: `/share/[link ${opened.share.id}]/${what}`, recorded: true },
      outcome: { status, error: null },
    });
  }
}
