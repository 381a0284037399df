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

/** A site moved to another account, as `anchorage site move` prints it. */
export interface SiteMove {
  site_id: number;
  account_id: number;
  previous_account_id: number;
  articles: number;
  backlinks: number;
}

/** Why a site cannot be moved (an operator's mistake: the CLI prints it). */
export class SiteMoveError extends Error {}

/** Ids are 32-bit integers; a longer number cannot be one (and PostgreSQL would fail on it). */
const isId = (text: string): boolean => /^\d+$/.test(text) && Number(text) <= 2_147_483_647;

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

  /** Forgets the sites kept: sites changed in this process (an account deleted). */
  forget(): void {
    this.kept.forget();
  }

  /** The site if the actor may read it; another account's site is "not found", as a missing one. */
  async visible(actor: Actor, siteId: number): Promise<SiteRow> {
    // Read by id alone and checked here, so a kept site serves staff and its owner alike.
    const site = await this.kept.get(siteId, async () => (await this.byId(siteId))[0]);
    if (!site || (!readsEveryAccount(actor) && site.account_id !== actor.accountId)) throw notFound('site');
    return site;
  }

  /**
   * Moves a site to another account, named by its id or by one of its users' e-mail (operators:
   * `anchorage site move`). Migration 019's trigger moves the site's articles, backlinks and
   * revisions in the same statement. The old account's share links and report e-mails of the site
   * end with it: they name the account they were made in, which no longer owns the site.
   */
  async move(siteId: number, account: string): Promise<SiteMove> {
    return this.db.transaction().execute(async (trx) => {
      const site = await trx.selectFrom('sites').select('account_id').where('id', '=', siteId).executeTakeFirst();
      if (!site) throw new SiteMoveError(`no site with id ${siteId}`);
      const target = isId(account)
        ? await trx.selectFrom('accounts').select('id as account_id').where('id', '=', Number(account)).executeTakeFirst()
        : await trx.selectFrom('users').select('account_id').where('email', '=', account.trim().toLowerCase()).executeTakeFirst();
      if (!target) throw new SiteMoveError(`no account with id or user e-mail ${account}`);
      if (target.account_id !== site.account_id) {
        await trx.updateTable('sites').set({ account_id: target.account_id }).where('id', '=', siteId).execute();
      }
      const count = async (table: 'articles' | 'backlinks') =>
        Number(
          (
            await trx
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as('n'))
              .where('site_id', '=', siteId)
              .where('account_id', '=', target.account_id)
              .executeTakeFirstOrThrow()
          ).n,
        );
      return {
        site_id: siteId,
        account_id: target.account_id,
        previous_account_id: site.account_id,
        articles: await count('articles'),
        backlinks: await count('backlinks'),
      };
    });
  }

  /** A customer named by user id or e-mail, as the admin `account` filter takes it. */
  private async accountOfCustomer(account: string): Promise<number | undefined> {
    const byId = isId(account);
    const user = await this.db
      .selectFrom('users')
      .select('account_id')
      .where(byId ? 'id' : 'email', '=', byId ? Number(account) : account.toLowerCase())
      .executeTakeFirst();
    return user?.account_id;
  }
}
