import type { Kysely } from 'kysely';
import { randomBase62, sha256 } from '../core/secrets.js';
import type { Clock } from '../core/time.js';
import { toTimestamp } from '../core/time.js';
import type { Database } from '../db/schema.js';

export interface SessionUser {
  userId: number;
  accountId: number;
  email: string;
  staff: boolean;
}

export interface Session {
  /** The secret in the cookie; only its hash is stored. */
  id: string;
  csrfToken: string;
  user: SessionUser | null;
}

const lifetimeMs = 7 * 24 * 3_600_000;

/** Browser sessions for the UI and the OAuth sign-in: anonymous first (for CSRF), then signed in. */
export class SessionsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async start(userId: number | null): Promise<Session> {
    const id = randomBase62(43);
    const csrfToken = randomBase62(32);
    const now = this.clock.now();
    await this.db
      .insertInto('sessions')
      .values({
        id_hash: sha256(id),
        user_id: userId,
        csrf_token: csrfToken,
        created_at: toTimestamp(now),
        expires_at: toTimestamp(new Date(now.getTime() + lifetimeMs)),
      })
      .execute();
    return { id, csrfToken, user: userId === null ? null : await this.userOf(userId) };
  }

  async find(id: string): Promise<Session | undefined> {
    const row = await this.db
      .selectFrom('sessions')
      .selectAll()
      .where('id_hash', '=', sha256(id))
      .where('expires_at', '>', toTimestamp(this.clock.now()))
      .executeTakeFirst();
    if (!row) return undefined;
    return { id, csrfToken: row.csrf_token, user: row.user_id === null ? null : await this.userOf(row.user_id) };
  }

  /** Signs a user in under a new session id (the old one is dropped: no session fixation). */
  async signIn(previousId: string | undefined, userId: number): Promise<Session> {
    if (previousId) await this.end(previousId);
    return this.start(userId);
  }

  async end(id: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id_hash', '=', sha256(id)).execute();
  }

  private async userOf(userId: number): Promise<SessionUser | null> {
    const user = await this.db
      .selectFrom('users')
      .select(['id', 'account_id', 'email', 'staff'])
      .where('id', '=', userId)
      .executeTakeFirst();
    return user ? { userId: user.id, accountId: user.account_id, email: user.email, staff: user.staff === 1 } : null;
  }
}
