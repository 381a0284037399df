import { type Kysely, sql } from 'kysely';
import { AppError, notFound } from '../core/errors.js';
import { KeptRows } from '../core/kept-rows.js';
import { precompiled } from '../db/precompiled.js';
import type { Database, SiteRow } from '../db/schema.js';
import type { Actor } from './actor.js';
import { type Page, type PageRequest, paginate } from './pagination.js';

export interface Site {
  id: number;
  name: string | null;
  website_url: string | null;
  language: string | null;
  country: string | null;
  geographic_scope: string | null;
  industry: string | null;
}

export interface SiteFilters extends PageRequest {
  account?: string;
  website?: string;
}

export function toSite(row: SiteRow): Site {
  return {
    id: row.id,
    name: row.name,
    website_url: row.website_url,
    language: row.language,
    country: row.country,
    geographic_scope: row.geographic_scope,
    industry: row.industry,
  };
}

/** Escapes LIKE wildcards so a user's text matches literally. */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Staff credentials read every account, except through MCP grants, which see their own only. */
export function readsEveryAccount(actor: Actor): boolean {
  return actor.staff && actor.credential.kind !== 'mcp_grant';
}

/** Sites kept in memory (by id); past this many the first kept is dropped. */
const keptSitesMax = 10_000;

export class SitesService {
  /** The site by id: on every list and stats read that does not find it kept. */
  private readonly byId;
  /**
   * Sites already read, by id: a list or stats read costs no query for its site. The service
   * only inserts sites (imports); a change made elsewhere is seen through `changedElsewhere`
   * (SQLite within 100 ms, PostgreSQL as its notice arrives).
   */
  private readonly kept: KeptRows<number, SiteRow>;

  constructor(
    private readonly db: Kysely<Database>,
    /** Whether sites may have changed elsewhere (`Db.watchChanges('sites')`). */
    changedElsewhere: () => boolean,
  ) {
    this.byId = precompiled(db, db.selectFrom('sites').selectAll().where('id', '=', 0));
    this.kept = new KeptRows(changedElsewhere, keptSitesMax);
  }

  async list(actor: Actor, filters: SiteFilters): Promise<Page<Site>> {
    if ((filters.account !== undefined || filters.website !== undefined) && !readsEveryAccount(actor)) {
      throw new AppError('forbidden', 'The account and website filters are for admin keys only.');
    }
    let query = this.db.selectFrom('sites');
    if (!readsEveryAccount(actor)) {
      query = query.where('account_id', '=', actor.accountId);
    } else if (filters.account !== undefined) {
      const accountId = await this.accountOfCustomer(filters.account);
      query = query.where('account_id', '=', accountId ?? -1);
    }
    if (filters.website !== undefined) {
      const pattern = `%${likeLiteral(filters.website.toLowerCase())}%`;
      query = query.where(sql<boolean>`website_url_lc like ${pattern} escape '\\'`);
    }
    return paginate(query.selectAll().orderBy('id'), query, filters, toSite);
  }

  /** The site if the actor may read it; another account's site is "not found", as a missing one. */
  async visible(actor: Actor, siteId: number): Promise<SiteRow> {
    // Read by id alone and checked here, so a kept site serves staff and its owner alike.
    const site = await this.kept.get(siteId, async () => (await this.byId(siteId))[0]);
    if (!site || (!readsEveryAccount(actor) && site.account_id !== actor.accountId)) throw notFound('site');
    return site;
  }

  /** A customer named by user id or e-mail, as the admin `account` filter takes it. */
  private async accountOfCustomer(account: string): Promise<number | undefined> {
    // User ids are 32-bit integers; a longer number cannot be one (and PostgreSQL would fail on it).
    const byId = /^\d+$/.test(account) && Number(account) <= 2_147_483_647;
    const user = await this.db
      .selectFrom('users')
      .select('account_id')
      .where(byId ? 'id' : 'email', '=', byId ? Number(account) : account.toLowerCase())
      .executeTakeFirst();
    return user?.account_id;
  }
}
