import { hash } from '@node-rs/argon2';
import type { Kysely, Transaction } from 'kysely';
import { AppError, validationFailed } from '../core/errors.js';
import { randomBase62, sha256 } from '../core/secrets.js';
import { addDays, type Clock, toTimestamp } from '../core/time.js';
import { singleLine } from '../core/values.js';
import { isUniqueViolation } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import type { ActivityLog } from './activity.js';
import { importFileSchema } from './import.js';
import type { Mailer } from './mailer.js';
import { requireStaff, staffEntry } from './staff-actions.js';
import { accountNameProblem, emailProblem, passwordProblem } from './users.js';

/** Days a password link works. */
export const passwordLinkDays = 7;

/** A password link's token: `pl_` and 40 base62 characters (238 random bits). */
const passwordTokenPattern = /^pl_[0-9A-Za-z]{40}$/;
const newLinkToken = (): string => `pl_${randomBase62(40)}`;

/** The members of a site staff give, with the rules and limits an import file's site has. */
const newSiteSchema = importFileSchema.shape.sites.element.pick({ name: true, website_url: true, language: true });

/**
 * A user staff created has no password until they choose one through their link: no password
 * verifies against this (argon2 cannot read it), so nobody can sign in as them meanwhile.
 */
const noPasswordYet = '';

export interface NewAccount {
  account: string;
  email: string;
}

export interface CreatedAccount {
  accountId: number;
  userId: number;
  email: string;
  /** The one-time link, shown once: only its hash is kept. */
  link: string;
  expiresAt: string;
  /** Whether the link went out by e-mail: `off` without SMTP_URL. */
  mail: 'sent' | 'off' | 'failed';
}

export interface NewSite {
  name: string;
  website_url: string;
  language: string;
}

/** What a password link opens: its user, or why it no longer does. */
export type OpenedLink = { state: 'open'; email: string } | { state: 'used' | 'expired' };

/**
 * Onboarding without a shell: staff create a customer account with its first user, who chooses a
 * password through a one-time link, and add sites to an account. Each action is in the staff
 * member's activity log, written in the transaction of the change.
 */
export class OnboardingService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly activity: ActivityLog,
    private readonly publicUrl: string,
    private readonly mailer: Mailer | undefined,
  ) {}

  /** A customer account, its first user (without a password) and their password link. */
  async createAccount(actor: Actor, input: NewAccount): Promise<CreatedAccount> {
    requireStaff(actor);
    const email = input.email.trim().toLowerCase();
    const name = singleLine(input.account) || email;
    const fields: Record<string, string[]> = {};
    const emailWrong = emailProblem(email);
    if (emailWrong) fields.email = [emailWrong];
    const nameWrong = accountNameProblem(name);
    if (nameWrong) fields.account = [nameWrong];
    if (Object.keys(fields).length > 0) throw validationFailed(fields);
    const now = toTimestamp(this.clock.now());
    const token = newLinkToken();
    const entry = staffEntry(actor, 'createAccount', '/app/staff/accounts', 201);
    let created: { accountId: number; userId: number };
    try {
      created = await this.db.transaction().execute(async (trx) => {
        const account = await trx.insertInto('accounts').values({ name, created_at: now }).returning('id').executeTakeFirstOrThrow();
        const user = await trx
          .insertInto('users')
          .values({ account_id: account.id, email, password_hash: noPasswordYet, staff: 0, created_at: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        await this.storeLink(trx, actor, user.id, token, now);
        await this.activity.recordIn(trx, entry);
        return { accountId: account.id, userId: user.id };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw validationFailed({ email: ['A user with this e-mail exists already.'] });
      throw error;
    }
    this.activity.committed(entry);
    return this.handOut({ ...created, email }, name, token, now);
  }

  /** The users of an account who have not chosen a password yet (their link may be lost or expired). */
  async awaitingPassword(accountId: number): Promise<{ id: number; email: string }[]> {
    return this.db.selectFrom('users').select(['id', 'email']).where('account_id', '=', accountId).where('password_hash', '=', noPasswordYet).orderBy('id').execute();
  }

  /**
   * A new link for a user of the account who has not chosen a password yet; their earlier links
   * stop working. Never for a user with a password: staff cannot take over a customer's sign-in.
   */
  async newLink(actor: Actor, accountId: number, userId: number): Promise<CreatedAccount> {
    requireStaff(actor);
    const now = toTimestamp(this.clock.now());
    const token = newLinkToken();
    const entry = staffEntry(actor, 'createPasswordLink', `/app/staff/accounts/${accountId}/users/${userId}/link`, 201);
    const found = await this.db.transaction().execute(async (trx) => {
      const user = await trx
        .selectFrom('users')
        .innerJoin('accounts', 'accounts.id', 'users.account_id')
        .select(['users.email', 'accounts.name'])
        .where('users.id', '=', userId)
        .where('users.account_id', '=', accountId)
        .where('users.password_hash', '=', noPasswordYet)
        .executeTakeFirst();
      if (!user) throw new AppError('not_found', 'No user of this account is waiting for a password link.');
      await trx.updateTable('password_links').set({ used_at: now }).where('user_id', '=', userId).where('used_at', 'is', null).execute();
      await this.storeLink(trx, actor, userId, token, now);
      await this.activity.recordIn(trx, entry);
      return user;
    });
    this.activity.committed(entry);
    return this.handOut({ accountId, userId, email: found.email }, found.name, token, now);
  }

  private async storeLink(trx: Transaction<Database>, actor: Actor, userId: number, token: string, now: string): Promise<void> {
    const expiresAt = toTimestamp(addDays(new Date(now), passwordLinkDays));
    await trx.insertInto('password_links').values({ user_id: userId, token_hash: sha256(token), created_by: actor.userId, created_at: now, expires_at: expiresAt }).execute();
  }

  /** The link as the staff member sees it, e-mailed too when e-mail is configured. */
  private async handOut(user: { accountId: number; userId: number; email: string }, account: string, token: string, now: string): Promise<CreatedAccount> {
    const link = `${this.publicUrl}/app/welcome/${token}`;
    const expiresAt = toTimestamp(addDays(new Date(now), passwordLinkDays));
    return { ...user, link, expiresAt, mail: await this.mailLink(user.email, account, link, expiresAt) };
  }

  /** Sends the link when e-mail is configured; a failed send leaves the link to be passed on by hand. */
  private async mailLink(email: string, account: string, link: string, expiresAt: string): Promise<CreatedAccount['mail']> {
    if (!this.mailer) return 'off';
    const text = [
      `An Anchorage account has been created for you (${account}).`,
      '',
      `Choose your password here; the link works once, until ${expiresAt.slice(0, 10)}:`,
      link,
      '',
      `You then sign in with the e-mail address ${email}.`,
    ].join('\n');
    try {
      await this.mailer.send({ to: email, subject: 'Your Anchorage account: choose your password', text });
      return 'sent';
    } catch {
      return 'failed';
    }
  }

  /** A site of the account, with the fields and rules of an import file's site. */
  async addSite(actor: Actor, accountId: number, input: NewSite): Promise<number> {
    requireStaff(actor);
    const given = { name: input.name.trim() || null, website_url: input.website_url.trim(), language: input.language.trim() || null };
    const parsed = newSiteSchema.safeParse(given);
    const fields: Record<string, string[]> = {};
    if (given.website_url === '') fields.website_url = ['Required: a site is matched by its account and website_url.'];
    for (const issue of parsed.error?.issues ?? []) (fields[String(issue.path[0])] ??= []).push(issue.message);
    if (Object.keys(fields).length > 0 || !parsed.success) throw validationFailed(fields);
    const site = { name: parsed.data.name ?? null, website_url: given.website_url, language: parsed.data.language ?? null };
    const entry = staffEntry(actor, 'createSite', `/app/staff/accounts/${accountId}/sites`, 201);
    const siteId = await this.db.transaction().execute(async (trx) => {
      const account = await trx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
      if (!account) throw new AppError('not_found', 'No account with this id.');
      const same = await trx.selectFrom('sites').select('id').where('account_id', '=', accountId).where('website_url', '=', site.website_url).executeTakeFirst();
      if (same) throw validationFailed({ website_url: ['This account has a site at this address already.'] });
      const row = await trx
        .insertInto('sites')
        .values({ account_id: accountId, ...site, website_url_lc: site.website_url.toLowerCase(), created_at: toTimestamp(this.clock.now()) })
        .returning('id')
        .executeTakeFirstOrThrow();
      await this.activity.recordIn(trx, entry);
      return row.id;
    });
    this.activity.committed(entry);
    return siteId;
  }

  private async linkRow(token: string) {
    if (!passwordTokenPattern.test(token)) return undefined;
    return this.db
      .selectFrom('password_links')
      .innerJoin('users', 'users.id', 'password_links.user_id')
      .select(['password_links.id', 'password_links.user_id', 'password_links.expires_at', 'password_links.used_at', 'users.email'])
      .where('password_links.token_hash', '=', sha256(token))
      .executeTakeFirst();
  }

  /** What a token opens, or undefined for one that names no link. */
  async openLink(token: string): Promise<OpenedLink | undefined> {
    const row = await this.linkRow(token);
    if (!row) return undefined;
    if (row.used_at) return { state: 'used' };
    if (row.expires_at <= toTimestamp(this.clock.now())) return { state: 'expired' };
    return { state: 'open', email: row.email };
  }

  /**
   * Sets the password of the link's user and uses the link up (of two requests racing for it, one
   * wins); the user's id, or why the link no longer works. A password the rules refuse changes nothing.
   */
  async setPassword(token: string, password: string): Promise<{ userId: number } | { state: 'used' | 'expired' } | undefined> {
    const row = await this.linkRow(token);
    if (!row) return undefined;
    const now = toTimestamp(this.clock.now());
    if (row.used_at) return { state: 'used' };
    if (row.expires_at <= now) return { state: 'expired' };
    const problem = passwordProblem(password);
    if (problem) throw validationFailed({ password: [problem] });
    const passwordHash = await hash(password);
    return this.db.transaction().execute(async (trx) => {
      const used = await trx
        .updateTable('password_links')
        .set({ used_at: now })
        .where('id', '=', row.id)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      if (Number(used.numUpdatedRows) !== 1) return { state: 'used' as const };
      await trx.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', row.user_id).execute();
      return { userId: row.user_id };
    });
  }
}
