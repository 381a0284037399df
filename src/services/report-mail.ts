import { type Kysely, sql } from 'kysely';
import type { SendMailOptions } from 'nodemailer';
import { z } from 'zod';
import { reportLocale, type ReportLocale } from '../core/i18n/locale.js';
import { randomBase62 } from '../core/secrets.js';
import { type Clock, toDay, toTimestamp } from '../core/time.js';
import { singleLine } from '../core/values.js';
import type { Db } from '../db/connect.js';
import type { Database, SiteRow } from '../db/schema.js';
import type { Actor } from './actor.js';
import { Mailer } from './mailer.js';
import type { MonthlyReport } from './report-pdf.js';

/** Addresses one site's report may go to. */
export const maxSubscriptionsPerSite = 20;

export interface ReportSubscription {
  id: number;
  address: string;
  created_at: string;
}

/** Why an address was not added, in the catalogue's voice. */
export class SubscriptionRefused extends Error {}

const addressSchema = z.email().max(254);

/** Who subscribes sites to their monthly report, and who unsubscribes with one click. */
export class ReportSubscriptionsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async list(accountId: number, siteId: number): Promise<ReportSubscription[]> {
    return this.db.selectFrom('report_subscriptions').select(['id', 'address', 'created_at']).where('account_id', '=', accountId).where('site_id', '=', siteId).orderBy('id').execute();
  }

  /** Adds an address to the site's report (the caller checked the site is the user's). */
  async subscribe(site: SiteRow, userId: number, address: string): Promise<void> {
    const normalised = address.trim().toLowerCase();
    if (!addressSchema.safeParse(normalised).success) throw new SubscriptionRefused('Give one e-mail address, such as client@example.com.');
    const existing = await this.list(site.account_id, site.id);
    if (existing.some((s) => s.address === normalised)) throw new SubscriptionRefused(`${normalised} already receives this report.`);
    if (existing.length >= maxSubscriptionsPerSite) throw new SubscriptionRefused(`A site's report goes to at most ${maxSubscriptionsPerSite} addresses. Remove one first.`);
    await this.db
      .insertInto('report_subscriptions')
      .values({ account_id: site.account_id, site_id: site.id, user_id: userId, address: normalised, unsubscribe_token: `ru_${randomBase62(40)}`, created_at: toTimestamp(this.clock.now()) })
      .execute();
  }

  /** Removes one of the account's subscriptions to the site; whether one was removed. */
  async remove(accountId: number, siteId: number, id: number): Promise<boolean> {
    const result = await this.db.deleteFrom('report_subscriptions').where('id', '=', id).where('account_id', '=', accountId).where('site_id', '=', siteId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** The one-click unsubscribe: the address it removed, or undefined for a token that names none. */
  async unsubscribe(token: string): Promise<string | undefined> {
    if (!/^ru_[0-9A-Za-z]{40}$/.test(token)) return undefined;
    const row = await this.db.selectFrom('report_subscriptions').select(['id', 'address']).where('unsubscribe_token', '=', token).executeTakeFirst();
    if (!row) return undefined;
    await this.db.deleteFrom('report_subscriptions').where('id', '=', row.id).execute();
    return row.address;
  }

  /** Whether a token names a subscription (the confirmation page). */
  async exists(token: string): Promise<boolean> {
    if (!/^ru_[0-9A-Za-z]{40}$/.test(token)) return false;
    return (await this.db.selectFrom('report_subscriptions').select('id').where('unsubscribe_token', '=', token).executeTakeFirst()) !== undefined;
  }
}

export interface ReportMailSettings {
  smtpUrl: string;
  from: string;
  publicUrl: string;
}

/** The lock that lets one node at a time send the monthly reports (PostgreSQL). */
const reportMailLockId = 7321012;

/** The month before a `YYYY-MM`. */
export function monthBefore(month: string): string {
  const year = Number(month.slice(0, 4));
  const index = Number(month.slice(5, 7)) - 2;
  return index < 0 ? `${year - 1}-12` : `${year}-${String(index + 1).padStart(2, '0')}`;
}

/** "12 (+3, +33%)": a number and its change from the month before, in the report's language (a plain-text hyphen for minus). */
function withChange(current: number, previous: number, locale: ReportLocale): string {
  const difference = current - previous;
  const sign = difference > 0 ? '+' : difference < 0 ? '-' : '±';
  const percent = previous === 0 ? '' : `, ${sign === '±' ? '' : sign}${locale.percent(Math.abs(difference) / previous)}`;
  return `${locale.number(current)} (${sign}${locale.number(Math.abs(difference))}${percent})`;
}

/** The e-mail of one report, in the site's language: the summary with the change from the month before, the PDF attached. */
export function reportMessage(report: MonthlyReport, to: string, unsubscribeUrl: string, from: string): SendMailOptions {
  const locale = reportLocale(report.site);
  const { t } = locale;
  // Names stored before import made them one line may still hold line breaks.
  const name = singleLine(report.site.name ?? '') || t.untitledSite(report.site.id);
  const month = locale.month(report.month);
  const { stats, previous } = report;
  const text = [
    t.mail.heading(name, month),
    '',
    t.mail.comparedWith(locale.month(monthBefore(report.month))),
    ...(['articles_published', 'backlinks_acquired', 'backlinks_industry', 'backlinks_local'] as const).map((key) => `${t.measures[key]}: ${withChange(stats[key], previous[key], locale)}`),
    '',
    t.mail.attached,
    '',
    t.mail.unsubscribe(unsubscribeUrl),
  ].join('\n');
  return {
    from,
    to,
    subject: t.mail.subject(name, month),
    text,
    headers: { 'Content-Language': locale.language, 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}

/** Loads a site's report for a month, as the UI computes it. */
export type ReportLoader = (actor: Actor, site: SiteRow, month: string) => Promise<MonthlyReport>;

/** Draws a report as a PDF for an account (off the event loop: `HtmlPool.renderReportPdf`). */
export type ReportRenderer = (accountId: number, report: MonthlyReport) => Promise<Buffer>;

/**
 * The monthly e-mails: each run (hourly) sends the report of the month before to every address
 * subscribed before the month began and not yet sent to. One node at a time sends (an advisory
 * lock on PostgreSQL); a row per sent e-mail, written in the transaction around the send, means a
 * restart or another node never sends one twice.
 */
export class ReportMailJob {
  private readonly mailer: Mailer;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> = Promise.resolve(0);

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly settings: ReportMailSettings,
    private readonly load: ReportLoader,
    private readonly render: ReportRenderer,
  ) {
    this.mailer = new Mailer({ smtpUrl: settings.smtpUrl, from: settings.from });
  }

  /** Sends what is due now; the number of e-mails sent. */
  async runOnce(): Promise<number> {
    if (this.db.dialect !== 'postgres') return this.sendDue();
    // The lock is held by one pooled connection for the whole run; the work uses the others.
    return this.db.kysely.connection().execute(async (conn) => {
      const locked = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${reportMailLockId}) as locked`.execute(conn);
      if (!locked.rows[0]?.locked) return 0;
      try {
        return await this.sendDue();
      } finally {
        await sql`select pg_advisory_unlock(${reportMailLockId})`.execute(conn);
      }
    });
  }

  private async sendDue(): Promise<number> {
    const conn = this.db.kysely;
    const now = this.clock.now();
    const month = monthBefore(toDay(now).slice(0, 7));
    const monthStart = `${toDay(now).slice(0, 7)}-01T00:00:00Z`;
    const due = await conn
      .selectFrom('report_subscriptions')
      .innerJoin('sites', 'sites.id', 'report_subscriptions.site_id')
      .leftJoin('report_mail_sent', (join) => join.onRef('report_mail_sent.subscription_id', '=', 'report_subscriptions.id').on('report_mail_sent.month', '=', month))
      .select(['report_subscriptions.id', 'report_subscriptions.address', 'report_subscriptions.unsubscribe_token', 'report_subscriptions.user_id', 'report_subscriptions.account_id', 'report_subscriptions.site_id'])
      .where('report_mail_sent.subscription_id', 'is', null)
      .where('report_subscriptions.created_at', '<', monthStart)
      .orderBy('report_subscriptions.id')
      .execute();
    let sent = 0;
    for (const subscription of due) {
      const site = await conn.selectFrom('sites').selectAll().where('id', '=', subscription.site_id).where('account_id', '=', subscription.account_id).executeTakeFirst();
      if (!site) continue;
      const actor: Actor = { accountId: subscription.account_id, userId: subscription.user_id, credential: { kind: 'operator' }, channel: 'editor', staff: false, scopes: ['read'], request: null };
      const report = await this.load(actor, site, month);
      const pdf = await this.render(subscription.account_id, report);
      const unsubscribeUrl = `${this.settings.publicUrl}/unsubscribe/${subscription.unsubscribe_token}`;
      const message = { ...reportMessage(report, subscription.address, unsubscribeUrl, this.settings.from), attachments: [{ filename: `report-${month}.pdf`, content: pdf, contentType: 'application/pdf' }] };
      // The row and the send commit together: a failed send leaves no row, and a row claimed
      // meanwhile by another run (SQLite has no advisory lock) means it went out already.
      const claimed = await conn.transaction().execute(async (trx) => {
        const inserted = await trx
          .insertInto('report_mail_sent')
          .values({ subscription_id: subscription.id, month, sent_at: toTimestamp(this.clock.now()) })
          .onConflict((oc) => oc.columns(['subscription_id', 'month']).doNothing())
          .returning('subscription_id')
          .executeTakeFirst();
        if (!inserted) return false;
        await this.mailer.send(message);
        return true;
      });
      if (claimed) sent += 1;
    }
    return sent;
  }

  /** Runs now and then every `intervalMs`; a failed run is reported and retried at the next. */
  schedule(intervalMs: number, onSent: (count: number) => void, onError: (error: unknown) => void): void {
    const run = () => {
      this.running = this.runOnce().then(
        (count) => {
          if (count > 0) onSent(count);
          return count;
        },
        (error: unknown) => {
          onError(error);
          return 0;
        },
      );
    };
    run();
    this.timer = setInterval(run, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    this.mailer.close();
  }
}
