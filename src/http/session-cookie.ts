// How a browser request proves its dashboard session: the HttpOnly, SameSite=Strict cookie names the session,
// and a request that writes also carries the session's CSRF token and, when the browser names its origin, comes
// from this bridge's own host (decision D3).
import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { AuditActor } from '../../generated/index.js';
import { problem } from '../admin/problem.js';
import { hashToken } from '../core/directory.js';
import { ADMIN_SESSION_TTL_MS, type AdminSession, type AdminSessions } from './admin-sessions.js';

export const SESSION_COOKIE = 'bridge_session';
const READ_ONLY = new Set(['GET', 'HEAD']);

export function sessionOf(ctx: Context, sessions: AdminSessions): Promise<AdminSession | undefined> {
  return sessions.find(ctx.cookies.get(SESSION_COOKIE));
}

/**
 * Hosts, not full origins, are compared: behind a proxy that ends TLS the bridge sees http while the browser
 * says https, and the host is what a cross-site page cannot fake.
 */
export function requireOwnOrigin(ctx: Context): void {
  const origin = ctx.get('origin');
  if (!origin) return;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined; // `null` origins (sandboxed frames, some redirects) are never ours
  }
  if (host !== ctx.host) throw problem('FORBIDDEN', 'foreign_page', { origin: origin.slice(0, 100) });
}

export function requireCsrf(ctx: Context, session: AdminSession): void {
  if (READ_ONLY.has(ctx.method)) return;
  requireOwnOrigin(ctx);
  const given = ctx.get('x-csrf-token');
  if (!given || !timingSafeEqual(hashToken(given), hashToken(session.csrfToken))) {
    throw problem('FORBIDDEN', 'no_csrf');
  }
}

/**
 * How the audit trail names a dashboard session: the first 12 hex digits of the SHA-256 of its cookie (AuditActor's
 * pattern). It tells two sessions apart without being usable as a cookie.
 */
export function sessionActor(session: AdminSession): AuditActor {
  return { kind: 'dashboard_session', session: session.key.slice(0, 12) };
}

export function setSessionCookie(ctx: Context, cookie: string): void {
  ctx.append('Set-Cookie', sessionCookie(ctx, cookie, ADMIN_SESSION_TTL_MS / 1000));
}

export function clearSessionCookie(ctx: Context): void {
  ctx.append('Set-Cookie', sessionCookie(ctx, '', 0));
}

function sessionCookie(ctx: Context, value: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${ctx.secure ? '; Secure' : ''}`;
}
