// Bearer tokens on HTTP: the admin token (constant-time comparison) and app tokens for the directory.
import { timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import { hashToken, type AppRecord, type Directory } from '../core/directory.js';
import type { Clock } from '../core/clock.js';
import { Problem } from '../admin/problem.js';

export function bearer(ctx: Context): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
  return match?.[1];
}

/** The admin API is off without ADMIN_TOKEN (every route ADMIN_API_DISABLED), and needs it otherwise. */
export function adminOnly(adminToken: string | undefined) {
  const expected = adminToken ? hashToken(adminToken) : undefined;
  return async function requireAdmin(ctx: Context, next: Next): Promise<void> {
    if (!expected) throw new Problem('ADMIN_API_DISABLED', 'The admin API is off: start the bridge with ADMIN_TOKEN set.');
    const given = bearer(ctx);
    if (!given || !timingSafeEqual(hashToken(given), expected)) {
      throw new Problem('UNAUTHORIZED', 'Send the server\'s ADMIN_TOKEN as Authorization: Bearer <ADMIN_TOKEN>.');
    }
    await next();
  };
}

/** The calling app, from its `rlk_` token. */
export function appFromBearer(ctx: Context, directory: Directory, clock: Clock): AppRecord {
  const token = bearer(ctx);
  if (!token) throw new Problem('UNAUTHORIZED', 'Send the app token as Authorization: Bearer rlk_….');
  const result = directory.authenticate(token, clock.now());
  if (!result.ok) throw new Problem(result.code, result.code === 'TOKEN_REVOKED' ? 'This app was deactivated.' : 'The token is wrong, expired or rotated out.');
  if (result.principal.kind !== 'app') throw new Problem('FORBIDDEN', 'The directory takes an app token (rlk_), not an agent token.');
  return result.principal.app;
}
