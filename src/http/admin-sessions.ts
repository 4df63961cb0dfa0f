// Dashboard sign-ins: kept in memory only, so a restart of the bridge signs everyone out (decision D1), and timed
// on the bridge's clock so that tests move time instead of waiting.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock.js';

export const ADMIN_SESSION_TTL_MS = 12 * 3_600_000;

export interface AdminSession {
  /** The cookie's value: 256 random bits, never shown to the page's scripts (HttpOnly). */
  id: string;
  /** Sent back by the page as X-CSRF-Token with every write; a cross-site form cannot know it. */
  csrfToken: string;
  expiresAt: number;
}

const secret = () => randomBytes(32).toString('base64url');

export class AdminSessions {
  private readonly byId = new Map<string, AdminSession>();

  constructor(private readonly clock: Clock) {}

  open(): AdminSession {
    this.forgetExpired(); // bounds the map without a timer: only sign-ins add to it
    const session = { id: secret(), csrfToken: secret(), expiresAt: this.clock.now() + ADMIN_SESSION_TTL_MS };
    this.byId.set(session.id, session);
    return session;
  }

  /** The live session with this id, if any. */
  find(id: string | undefined): AdminSession | undefined {
    const session = id ? this.byId.get(id) : undefined;
    if (!session || session.expiresAt > this.clock.now()) return session;
    this.byId.delete(session.id);
    return undefined;
  }

  close(id: string): void {
    this.byId.delete(id);
  }

  private forgetExpired(): void {
    const now = this.clock.now();
    for (const [id, session] of this.byId) if (session.expiresAt <= now) this.byId.delete(id);
  }
}
