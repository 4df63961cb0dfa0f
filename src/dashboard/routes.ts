// The dashboard: its page and files, and the sign-in session (POST/GET/DELETE /dashboard/session). Everything
// else the page does goes through the admin API with the session cookie.
import { Router } from '@koa/router';
import type { Context, Next } from 'koa';
import { validateDashboardSignIn, type DashboardSession } from '../../generated/index.js';
import type { AuditTrail } from '../admin/audit.js';
import { problem } from '../admin/problem.js';
import { adminApiOff, adminTokenCheck } from '../http/auth.js';
import { body } from '../http/input.js';
import { iso } from '../shared/time.js';
import { loadAssets } from './assets.js';
import type { AdminSession, AdminSessions } from '../http/admin-sessions.js';
import {
  clearSessionCookie,
  requireCsrf,
  requireOwnOrigin,
  sessionActor,
  sessionOf,
  setSessionCookie,
} from '../http/session-cookie.js';

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

export const isDashboardPath = (path: string) => path === '/dashboard' || path.startsWith('/dashboard/');

/** On every dashboard answer, errors included: no inline or foreign code, no framing, no sniffing, no referrer. */
export async function dashboardHeaders(ctx: Context, next: Next): Promise<void> {
  ctx.set(SECURITY_HEADERS);
  await next();
}

const view = (session: AdminSession): DashboardSession => ({
  csrf_token: session.csrfToken,
  expires_at: iso(session.expiresAt),
  fingerprint: sessionActor(session).session!,
});

export function dashboardRoutes(deps: {
  adminToken: string | undefined;
  sessions: AdminSessions;
  audit: AuditTrail;
}): Router {
  const { sessions, audit } = deps;
  const isAdminToken = adminTokenCheck(deps.adminToken);
  const { page, files } = loadAssets();
  const router = new Router();

  router.get('/dashboard', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.type = page.type;
    ctx.body = page.body;
  });
  // Browsers ask for /favicon.ico whatever the page links; the same icon, with the page's headers (it is an SVG).
  const icon = files.get('favicon.svg')!;
  router.get('/favicon.ico', (ctx) => {
    ctx.set(SECURITY_HEADERS);
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = icon.type;
    ctx.body = icon.body;
  });
  router.get('/dashboard/assets/:file', (ctx) => {
    const asset = files.get(ctx.params.file!);
    if (!asset) throw problem('NOT_FOUND', 'dashboard_file', { file: ctx.params.file!.slice(0, 80) });
    ctx.set('Cache-Control', 'no-cache'); // asked for again on every load, so that an upgraded bridge's page is used at once
    ctx.type = asset.type;
    ctx.body = asset.body;
  });

  router.get('/dashboard/session', async (ctx) => {
    if (!isAdminToken) throw adminApiOff();
    const session = await sessionOf(ctx, sessions);
    if (!session) throw problem('UNAUTHORIZED', 'not_signed_in');
    ctx.body = view(session);
  });
  // Failed sign-ins are not recorded (D10): anybody could fill the audit trail with them.
  router.post('/dashboard/session', async (ctx) => {
    if (!isAdminToken) throw adminApiOff();
    requireOwnOrigin(ctx);
    const { admin_token } = body(ctx, validateDashboardSignIn);
    if (!isAdminToken(admin_token)) throw problem('UNAUTHORIZED', 'not_the_admin_token');
    const previous = await sessionOf(ctx, sessions);
    if (previous) await sessions.close(previous);
    const { cookie, session } = await sessions.open();
    await audit.record(sessionActor(session), 'dashboard.sign_in', null);
    setSessionCookie(ctx, cookie);
    ctx.body = view(session);
  });
  router.delete('/dashboard/session', async (ctx) => {
    if (!isAdminToken) throw adminApiOff();
    const session = await sessionOf(ctx, sessions);
    if (!session) {
      clearSessionCookie(ctx);
      throw problem('UNAUTHORIZED', 'signed_out_already');
    }
    requireCsrf(ctx, session);
    await sessions.close(session);
    clearSessionCookie(ctx);
    await audit.record(sessionActor(session), 'dashboard.sign_out', null);
    ctx.status = 204;
  });
  return router;
}
