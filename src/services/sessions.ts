import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
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

/** AES-256-GCM key for a session's flash: derived from the cookie secret, which the database never holds. */
const flashKey = (sessionId: string): Buffer => Buffer.from(hkdfSync('sha256', sessionId, '', 'anchorage session flash', 32));

function seal(sessionId: string, value: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', flashKey(sessionId), iv);
  const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), sealed].map((part) => part.toString('base64url')).join('.');
}

function unseal(sessionId: string, stored: string): string | undefined {
  const [iv, tag, sealed] = stored.split('.').map((part) => Buffer.from(part, 'base64url'));
  if (!iv || !tag || !sealed) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', flashKey(sessionId), iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** Browser sessions for the UI and the OAuth sign-in, stored from sign-in on (anonymous visitors have none). */
export class SessionsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async start(userId: number): Promise<Session> {
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
    return { id, csrfToken, user: await this.userOf(userId) };
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

  /**
   * Keeps a message for the page after a redirect (POST-redirect-GET), such as a new API key shown
   * once. It is sealed with the session id, so the stored row alone never reveals it.
   */
  async setFlash(id: string, value: string): Promise<void> {
    await this.db.updateTable('sessions').set({ flash: seal(id, value) }).where('id_hash', '=', sha256(id)).execute();
  }

  /** The flash, once: cleared as it is read (of two requests racing for it, one gets it). */
  async takeFlash(id: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('sessions').select('flash').where('id_hash', '=', sha256(id)).executeTakeFirst();
    if (!row?.flash) return undefined;
    const taken = await this.db
      .updateTable('sessions')
      .set({ flash: null })
      .where('id_hash', '=', sha256(id))
      .where('flash', '=', row.flash)
      .executeTakeFirst();
    return Number(taken.numUpdatedRows) === 1 ? unseal(id, row.flash) : undefined;
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
