// Who may call on HTTP: the admin (Bearer admin token, constant-time comparison, or a dashboard session) and apps
// (Bearer app token) for the directory.
import { timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { AuditActor } from '../../generated/index.js';
import { hashToken, type AppRecord, type Directory } from '../core/directory.js';
import { authenticate, bearerToken } from '../core/handshake.js';
import { errorText } from '../shared/error-text.js';
import type { Clock } from '../shared/clock.js';
import { Problem } from '../admin/problem.js';
import type { AdminSessions } from './admin-sessions.js';
import { requireCsrf, sessionActor, sessionOf } from './session-cookie.js';

const ADMIN_TOKEN_ACTOR: AuditActor = { kind: 'admin_token', session: null };

export const bearer = (ctx: Context): string | undefined => bearerToken(ctx.get('authorization'));

/** Whether a token is the server's ADMIN_TOKEN (constant time); undefined while the admin API is off. */
export function adminTokenCheck(adminToken: string | undefined): ((given: string) => boolean) | undefined {
  if (!adminToken) return undefined;
  const expected = hashToken(adminToken);
  return (given) => timingSafeEqual(hashToken(given), expected);
}

export function adminApiOff(): Problem {
  return new Problem('ADMIN_API_DISABLED', errorText('ADMIN_API_DISABLED', 'off'));
}

/**
 * The admin API is off without ADMIN_TOKEN (every route ADMIN_API_DISABLED). Otherwise it takes the admin token
 * as a Bearer, or a dashboard session cookie; an Authorization header, when sent, decides alone. Who it was is
 * left on ctx.state for the audit trail (actorOf).
 */
export function adminOnly(adminToken: string | undefined, sessions: AdminSessions) {
  const isAdminToken = adminTokenCheck(adminToken);
  return async function requireAdmin(ctx: Context, next: Next): Promise<void> {
    if (!isAdminToken) throw adminApiOff();
    if (ctx.get('authorization')) {
      const given = bearer(ctx);
      if (!given || !isAdminToken(given)) throw new Problem('UNAUTHORIZED', errorText('UNAUTHORIZED', 'admin_token'));
      ctx.state.actor = ADMIN_TOKEN_ACTOR;
    } else {
      const session = await sessionOf(ctx, sessions);
      if (!session) throw new Problem('UNAUTHORIZED', errorText('UNAUTHORIZED', 'admin_token_or_session'));
      requireCsrf(ctx, session);
      ctx.state.actor = sessionActor(session);
    }
    await next();
  };
}

/** Who made this admin request (adminOnly authenticated it). */
export function actorOf(ctx: Context): AuditActor {
  const actor = ctx.state.actor as AuditActor | undefined;
  if (!actor) throw new Error('an admin route ran without adminOnly: nobody to record in the audit trail');
  return actor;
}

/** The calling app, from its `rlk_` token. */
export function appFromBearer(ctx: Context, directory: Directory, clock: Clock): AppRecord {
  const who = authenticate(directory, bearer(ctx), { kind: 'app', place: 'The directory' }, clock.now());
  if (!who.ok) throw new Problem(who.code, who.error);
  return who.principal.app;
}
