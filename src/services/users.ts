import { hash, verify } from '@node-rs/argon2';
import type { Kysely } from 'kysely';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import type { Database, User } from '../db/schema.js';
import { isUniqueViolation } from '../db/connect.js';

export interface NewUser {
  email: string;
  password: string;
  /** The account to create for this user; defaults to the e-mail. */
  account?: string;
  staff?: boolean;
}

export class UserExistsError extends Error {}

/** The rules of a new user and account, for sign-up and for accounts staff create. */
export const minPasswordLength = 10;
const maxEmailLength = 254;
const maxAccountNameLength = 200;

/** What an operator runs on a fresh database, where nobody can sign in yet (docs/operations.md). */
export const firstStaffCommand = 'anchorage user create --email you@example.com --password "a long password" --staff';

/** Why a password cannot be chosen, or undefined. */
export const passwordProblem = (password: string): string | undefined =>
  [...password].length < minPasswordLength ? `Choose a password of at least ${minPasswordLength} characters.` : undefined;

/** Why an e-mail address cannot be a user's, or undefined. */
export const emailProblem = (email: string): string | undefined =>
  /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) && email.length <= maxEmailLength ? undefined : 'Enter a valid e-mail address.';

/** Why a name cannot be an account's, or undefined. */
export const accountNameProblem = (name: string): string | undefined => (name.length > maxAccountNameLength ? 'The account name is too long.' : undefined);

/** A hash to verify against when the e-mail is unknown, so both cases take the same time. */
const decoyHash = hash('anchorage-decoy-password');

export class UsersService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  /** Creates a user with a new account of their own. */
  async create(input: NewUser): Promise<{ user_id: number; account_id: number }> {
    const passwordHash = await hash(input.password);
    const now = toTimestamp(this.clock.now());
    const email = input.email.trim().toLowerCase();
    try {
      return await this.db.transaction().execute(async (trx) => {
        const account = await trx
          .insertInto('accounts')
          .values({ name: input.account ?? email, created_at: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        const user = await trx
          .insertInto('users')
          .values({
            account_id: account.id,
            email,
            password_hash: passwordHash,
            staff: input.staff ? 1 : 0,
            created_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        return { user_id: user.id, account_id: account.id };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new UserExistsError(`A user with e-mail ${email} exists already.`);
      throw error;
    }
  }

  /** Whether anyone can sign in yet (a fresh database has no user: `serve` and sign-in say how to make one). */
  async any(): Promise<boolean> {
    return (await this.db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined;
  }

  async byEmail(email: string): Promise<User | undefined> {
    return this.db.selectFrom('users').selectAll().where('email', '=', email.trim().toLowerCase()).executeTakeFirst();
  }

  async byId(id: number): Promise<User | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The user whose e-mail and password match, or undefined. */
  async verifyPassword(email: string, password: string): Promise<User | undefined> {
    const user = await this.byEmail(email);
    const ok = await verify(user?.password_hash ?? (await decoyHash), password).catch(() => false);
    return user && ok ? user : undefined;
  }
}
