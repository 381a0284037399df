import { type Kysely, sql, type Transaction } from 'kysely';
import { AppError, validationFailed } from '../core/errors.js';
import { type Clock, toTimestamp } from '../core/time.js';
import type { BodyStore } from '../db/body-store.js';
import type { Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import type { ActivityEntry, ActivityLog } from './activity.js';
import type { MediaStore } from './media.js';
import { requireStaff, staffEntry } from './staff-actions.js';

/** What deleting an account removed, as `anchorage account delete` prints it. */
export interface DeletedAccount {
  account_id: number;
  name: string;
  users: number;
  sites: number;
  articles: number;
  revisions: number;
  backlinks: number;
  api_keys: number;
  oauth_grants: number;
  media: number;
  /** The account's activity records, kept with their personal data removed. */
  activity_kept: number;
}

/** Image URLs per query, well under either database's limit on bound parameters. */
const urlBatch = 500;

/**
 * Deletes a customer account and everything it owns, in one transaction (a failure changes
 * nothing): its users and their sessions, password links, API keys, OAuth connections, codes and
 * tokens; its sites with their articles, revisions, backlinks and counters, share links and report
 * e-mails; its idempotency records and edit counts; and the uploaded images no other account uses.
 * Its activity records are kept for the operator, with what names a person removed: the user,
 * the key or connection, the client address and the user agent (docs/operations.md, "Deleting
 * an account").
 *
 * Staff delete through the UI (never their own account), operators with `anchorage account
 * delete`; both name the account exactly, as a confirmation. An account that holds a staff user
 * is not deleted: staff users made other accounts' password links, which name them.
 */
export class AccountDeletionService {
  constructor(
    private readonly db: Kysely<Database>,
    /** Deletes the account's bodies without holding the event loop. */
    private readonly bodies: BodyStore,
    private readonly clock: Clock,
    private readonly activity: ActivityLog,
    private readonly media: MediaStore,
    private readonly publicUrl: string,
    /** Forgets what this process keeps of keys, access tokens, sites and articles (other nodes hear the triggers' notices). */
    private readonly forgetKept: () => void,
    /** Told when removing the file store's images fails after the deletion committed. */
    private readonly onBackgroundError: (error: unknown) => void,
  ) {}

  /** Whether the account holds a staff user (such an account is not deleted). */
  async holdsStaff(accountId: number): Promise<boolean> {
    return (await this.db.selectFrom('users').select('id').where('account_id', '=', accountId).where('staff', '=', 1).executeTakeFirst()) !== undefined;
  }

  /**
   * Deletes account `accountId` when `confirmName` is its exact name. `actor`: the staff member
   * (a UI session) who deletes it; none for an operator's command.
   */
  async deleteAccount(accountId: number, confirmName: string, actor?: Actor): Promise<DeletedAccount> {
    if (actor) {
      requireStaff(actor);
      if (actor.accountId === accountId) throw new AppError('forbidden', 'Staff cannot delete their own account.');
    }
    const started = performance.now();
    const path = `/app/staff/accounts/${accountId}/delete`;
    const entry: ActivityEntry | undefined = actor ? staffEntry(actor, 'deleteAccount', path, 200) : undefined;
    // Records still queued in this process reach the table first, to be stripped with the others.
    await this.activity.flush();
    let afterCommit: () => Promise<void> = async () => undefined;
    const deleted = await this.bodies.transaction(Infinity, async (trx) => {
      const account = await trx.selectFrom('accounts').select(['id', 'name']).where('id', '=', accountId).executeTakeFirst();
      if (!account) throw new AppError('not_found', 'No account with this id.');
      if (confirmName !== account.name) {
        throw validationFailed({ confirm: [`Type the account's name exactly as it is written (“${account.name}”) to delete it.`] });
      }
      const staff = await trx.selectFrom('users').select('id').where('account_id', '=', accountId).where('staff', '=', 1).executeTakeFirst();
      if (staff) throw new AppError('forbidden', 'This account holds a staff user; Anchorage does not delete staff accounts.');
      const media = await this.unsharedMedia(trx, accountId);
      const counts = await this.deleteRows(trx, accountId);
      ({ afterCommit } = await this.media.remove(media, trx));
      const kept = await trx
        .updateTable('activity_log')
        .set({ user_id: null, api_key_id: null, mcp_grant_id: null, client_ip: null, user_agent: null })
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      if (entry) await this.activity.recordIn(trx, entry);
      else {
        const row = { created_at: toTimestamp(this.clock.now()), account_id: accountId, channel: 'cli' as const, operation: 'deleteAccount', status: 200, duration_ms: Math.round(performance.now() - started) };
        await trx.insertInto('activity_log').values(row).execute();
      }
      await trx.deleteFrom('accounts').where('id', '=', accountId).execute();
      return { account_id: accountId, name: account.name, ...counts, media: media.length, activity_kept: Number(kept.numUpdatedRows) };
    });
    this.forgetKept();
    if (entry) this.activity.committed(entry);
    // The file store's images go once the rows that named them are gone: a file that could not be
    // removed is named by no row any more, and the deletion stands.
    await afterCommit().catch(this.onBackgroundError);
    return deleted;
  }

  /** The names of the service's own images that the account's articles or revisions show and no other account's do. */
  private async unsharedMedia(trx: Transaction<Database>, accountId: number): Promise<string[]> {
    const prefix = `${this.publicUrl}/media/`;
    const used = (table: 'articles' | 'revisions') =>
      trx.selectFrom(table).select('featured_image_url as url').where('account_id', '=', accountId).where(sql<string>`substr(featured_image_url, 1, ${sql.lit(prefix.length)})`, '=', prefix);
    const ours = [...new Set((await used('articles').union(used('revisions')).execute()).map((row) => row.url!))];
    const shared = new Set<string>();
    for (let i = 0; i < ours.length; i += urlBatch) {
      const batch = ours.slice(i, i + urlBatch);
      const elsewhere = (table: 'articles' | 'revisions') =>
        trx.selectFrom(table).select('featured_image_url as url').where('account_id', '<>', accountId).where('featured_image_url', 'in', batch);
      for (const row of await elsewhere('articles').union(elsewhere('revisions')).execute()) shared.add(row.url!);
    }
    return ours.filter((url) => !shared.has(url)).map((url) => url.slice(prefix.length));
  }

  /** Deletes every row the account owns, children before the rows they name. */
  private async deleteRows(trx: Transaction<Database>, accountId: number) {
    const users = trx.selectFrom('users').select('id').where('account_id', '=', accountId);
    const sites = trx.selectFrom('sites').select('id').where('account_id', '=', accountId);
    const grants = trx.selectFrom('oauth_grants').select('id').where((eb) => eb.or([eb('account_id', '=', accountId), eb('user_id', 'in', users)]));
    const n = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);
    await trx
      .deleteFrom('report_mail_sent')
      .where('subscription_id', 'in', trx.selectFrom('report_subscriptions').select('id').where((eb) => eb.or([eb('account_id', '=', accountId), eb('site_id', 'in', sites), eb('user_id', 'in', users)])))
      .execute();
    await trx.deleteFrom('report_subscriptions').where((eb) => eb.or([eb('account_id', '=', accountId), eb('site_id', 'in', sites), eb('user_id', 'in', users)])).execute();
    await trx.deleteFrom('report_shares').where((eb) => eb.or([eb('account_id', '=', accountId), eb('site_id', 'in', sites), eb('user_id', 'in', users)])).execute();
    await trx.deleteFrom('import_uploads').where('user_id', 'in', users).execute();
    await trx.deleteFrom('password_links').where((eb) => eb.or([eb('user_id', 'in', users), eb('created_by', 'in', users)])).execute();
    await trx.deleteFrom('oauth_tokens').where('grant_id', 'in', grants).execute();
    await trx.deleteFrom('oauth_codes').where((eb) => eb.or([eb('user_id', 'in', users), eb('grant_id', 'in', grants)])).execute();
    const oauthGrants = n(await trx.deleteFrom('oauth_grants').where((eb) => eb.or([eb('account_id', '=', accountId), eb('user_id', 'in', users)])).executeTakeFirst());
    await trx.deleteFrom('sessions').where('user_id', 'in', users).execute();
    const apiKeys = n(await trx.deleteFrom('api_keys').where((eb) => eb.or([eb('account_id', '=', accountId), eb('user_id', 'in', users)])).executeTakeFirst());
    await trx.deleteFrom('idempotency_keys').where('account_id', '=', accountId).execute();
    await trx.deleteFrom('edit_counts').where('account_id', '=', accountId).execute();
    for (const table of ['backlink_day_counts', 'backlink_month_counts', 'article_day_counts', 'article_month_counts'] as const) {
      await trx.deleteFrom(table).where('site_id', 'in', sites).execute();
    }
    const articles = trx.selectFrom('articles').select('id').where('site_id', 'in', sites);
    const revisions = n(await trx.deleteFrom('revisions').where((eb) => eb.or([eb('account_id', '=', accountId), eb('article_id', 'in', articles)])).executeTakeFirst());
    const articleRows = n(await trx.deleteFrom('articles').where((eb) => eb.or([eb('account_id', '=', accountId), eb('site_id', 'in', sites)])).executeTakeFirst());
    const backlinks = n(await trx.deleteFrom('backlinks').where((eb) => eb.or([eb('account_id', '=', accountId), eb('site_id', 'in', sites)])).executeTakeFirst());
    const siteRows = n(await trx.deleteFrom('sites').where('account_id', '=', accountId).executeTakeFirst());
    const userRows = n(await trx.deleteFrom('users').where('account_id', '=', accountId).executeTakeFirst());
    return { users: userRows, sites: siteRows, articles: articleRows, revisions, backlinks, api_keys: apiKeys, oauth_grants: oauthGrants };
  }
}
