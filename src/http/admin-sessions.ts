// Dashboard sign-ins (D1): kept in the database, so that every node of a cluster takes the cookie another node set,
// a restart signs nobody out, and a sign-out ends the sign-in on every node at once. Timed on the bridge's clock so
// that tests move time instead of waiting.
import { randomBytes } from 'node:crypto';
import { hashToken } from '../core/directory.js';
import type { Clock } from '../shared/clock.js';
import type { SignInStore } from '../store/sign-ins.js';

export const ADMIN_SESSION_TTL_MS = 12 * 3_600_000;

/**
 * Live sign-ins kept at most; a new one past it ends the oldest. Only the admin token signs in, so this bounds an
 * operator's script that signs in in a loop, not a stranger.
 */
export const ADMIN_SESSIONS_MAX = 1_000;

export interface AdminSession {
  /** Hex SHA-256 of the cookie's value (256 random bits, never shown to the page's scripts: HttpOnly). */
  key: string;
  /** Sent back by the page as X-CSRF-Token with every write; a cross-site form cannot know it. */
  csrfToken: string;
  expiresAt: number;
}

const secret = () => randomBytes(32).toString('base64url');
const keyOf = (cookie: string) => hashToken(cookie).toString('hex');

export class AdminSessions {
  constructor(
    private readonly store: SignInStore,
    private readonly clock: Clock,
    private readonly max = ADMIN_SESSIONS_MAX,
  ) {}

  /** A new sign-in, and the cookie value that names it (only the browser keeps it). */
  async open(): Promise<{ cookie: string; session: AdminSession }> {
    const now = this.clock.now();
    await this.store.prune(now, this.max - 1); // bounded without a timer: only sign-ins add rows
    const cookie = secret();
    const session = { key: keyOf(cookie), csrfToken: secret(), expiresAt: now + ADMIN_SESSION_TTL_MS };
    await this.store.insert({
      key: session.key,
      csrf_token: session.csrfToken,
      created_at: now,
      expires_at: session.expiresAt,
    });
    return { cookie, session };
  }

  /** The live sign-in this cookie names, if any. */
  async find(cookie: string | undefined): Promise<AdminSession | undefined> {
    if (!cookie) return undefined;
    const row = await this.store.find(keyOf(cookie));
    if (!row) return undefined;
    if (row.expires_at <= this.clock.now()) {
      await this.store.delete(row.key);
      return undefined;
    }
    return { key: row.key, csrfToken: row.csrf_token, expiresAt: row.expires_at };
  }

  async close(session: AdminSession): Promise<void> {
    await this.store.delete(session.key);
  }
}
