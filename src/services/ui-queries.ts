import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { type Site, toSite } from './sites.js';

/** One calendar month of a site's report chart. */
export interface MonthCounts {
  /** `YYYY-MM`. */
  month: string;
  articles_published: number;
  backlinks_industry: number;
  backlinks_local: number;
}

/** One account as the staff overview lists it. */
export interface AccountOverview {
  id: number;
  name: string;
  created_at: string;
  users: { email: string; staff: boolean }[];
  sites: number;
}

/** The credentials that appear in an account's activity log, for the log's filter. */
export interface ActivityCredentials {
  apiKeyIds: number[];
  mcpGrantIds: number[];
}

/**
 * Read queries only the web UI needs: a site's monthly series, the staff overview of accounts.
 * They never decide who may see what: callers check visibility with the sites and articles
 * services first (tenant scoping stays in those services).
 */
export class UiQueries {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Counts per calendar month for `months` (ascending `YYYY-MM`), by the rules of the stats
   * service: published articles by `published_at`, every backlink by `acquired_at`; read from
   * the month counters.
   */
  async monthlySeries(siteId: number, months: readonly string[]): Promise<MonthCounts[]> {
    if (months.length === 0) return [];
    const first = months[0]!;
    const last = months[months.length - 1]!;
    const [articles, backlinks] = await Promise.all([
      this.db
        .selectFrom('article_month_counts')
        .select(['month', 'n'])
        .where('site_id', '=', siteId)
        .where('status', '=', 'published')
        .where('month', '>=', first)
        .where('month', '<=', last)
        .execute(),
      this.db
        .selectFrom('backlink_month_counts')
        .select(['month', 'category', 'n'])
        .where('site_id', '=', siteId)
        .where('month', '>=', first)
        .where('month', '<=', last)
        .execute(),
    ]);
    return months.map((month) => ({
      month,
      articles_published: Number(articles.find((row) => row.month === month)?.n ?? 0),
      backlinks_industry: Number(backlinks.find((row) => row.month === month && row.category === 'industry')?.n ?? 0),
      backlinks_local: Number(backlinks.find((row) => row.month === month && row.category === 'local')?.n ?? 0),
    }));
  }

  /** Every account with its users and number of sites, for staff. */
  async accounts(): Promise<AccountOverview[]> {
    const [accounts, users, sites] = await Promise.all([
      this.db.selectFrom('accounts').select(['id', 'name', 'created_at']).orderBy('id').execute(),
      this.db.selectFrom('users').select(['account_id', 'email', 'staff']).orderBy('id').execute(),
      this.db
        .selectFrom('sites')
        .select(['account_id', (eb) => eb.fn.countAll().as('n')])
        .groupBy('account_id')
        .execute(),
    ]);
    return accounts.map((account) => ({
      ...account,
      users: users.filter((u) => u.account_id === account.id).map((u) => ({ email: u.email, staff: u.staff === 1 })),
      sites: Number(sites.find((s) => s.account_id === account.id)?.n ?? 0),
    }));
  }

  async account(accountId: number): Promise<{ id: number; name: string } | undefined> {
    return this.db.selectFrom('accounts').select(['id', 'name']).where('id', '=', accountId).executeTakeFirst();
  }

  /** The sites of one account, by id (staff overview; the caller checks the staff flag). */
  async sitesOfAccount(accountId: number): Promise<Site[]> {
    const rows = await this.db.selectFrom('sites').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
    return rows.map(toSite);
  }

  /** The API keys and MCP grants that appear in an account's activity log. */
  async activityCredentials(accountId: number): Promise<ActivityCredentials> {
    const [keys, grants] = await Promise.all([
      this.db
        .selectFrom('activity_log')
        .select('api_key_id')
        .distinct()
        .where('account_id', '=', accountId)
        .where('api_key_id', 'is not', null)
        .execute(),
      this.db
        .selectFrom('activity_log')
        .select('mcp_grant_id')
        .distinct()
        .where('account_id', '=', accountId)
        .where('mcp_grant_id', 'is not', null)
        .execute(),
    ]);
    return {
      apiKeyIds: keys.map((row) => row.api_key_id).filter((id): id is number => id !== null),
      mcpGrantIds: grants.map((row) => row.mcp_grant_id).filter((id): id is number => id !== null),
    };
  }

  /** The application names of an account's MCP grants (revoked ones too), for the activity log. */
  async grantNames(accountId: number): Promise<Map<number, string>> {
    const rows = await this.db
      .selectFrom('oauth_grants')
      .innerJoin('oauth_clients', 'oauth_clients.client_id', 'oauth_grants.client_id')
      .select(['oauth_grants.id', 'oauth_clients.client_name'])
      .where('oauth_grants.account_id', '=', accountId)
      .execute();
    return new Map(rows.map((row) => [row.id, row.client_name ?? 'Unnamed application']));
  }
}
