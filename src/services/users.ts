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
