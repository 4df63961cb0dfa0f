// The Koa application: error bodies, JSON bodies, the API routes, the documentation and the dashboard. It sits above
// http/ and dashboard/ so that the dashboard can use http/'s pieces without http/ knowing the dashboard.
import Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { LIMITS } from '../generated/index.js';
import type { Logger } from './shared/logger.js';
import type { SignInStore } from './store/sign-ins.js';
import { dashboardHeaders, dashboardRoutes, isDashboardPath } from './dashboard/routes.js';
import { AdminSessions } from './http/admin-sessions.js';
import { adminOnly } from './http/auth.js';
import { docsPages } from './http/docs.js';
import { errorBodies } from './http/errors.js';
import { proxyOptions } from './http/proxy.js';
import { liveRoutes, type LiveDeps } from './http/live-routes.js';
import { routes, type RouteDeps } from './http/routes.js';

export interface AppDeps extends RouteDeps, LiveDeps {
  log: Logger;
  /** Reverse proxies whose X-Forwarded-* headers are believed (TRUST_PROXY): ctx.secure, ctx.ip (O12). */
  trustProxy: number;
  /** Dashboard sign-ins, in the database every node reads (D1). */
  signIns: SignInStore;
}

export function httpApp(deps: AppDeps): Koa {
  const app = new Koa(proxyOptions(deps.trustProxy));
  app.silent = true; // errors become {code, error} bodies in errorBodies and are logged there
  const sessions = new AdminSessions(deps.signIns, deps.clock);
  const router = routes(deps);
  const live = liveRoutes(deps);
  const dashboard = dashboardRoutes({ adminToken: deps.adminToken, sessions, audit: deps.audit });
  app.use(errorBodies(deps.log));
  app.use((ctx, next) => (isDashboardPath(ctx.path) ? dashboardHeaders(ctx, next) : next()));
  // Before routing, so that an unknown admin path answers like a known one while the admin API is off or locked.
  const requireAdmin = adminOnly(deps.adminToken, sessions);
  app.use((ctx, next) => (ctx.path === '/admin' || ctx.path.startsWith('/admin/') ? requireAdmin(ctx, next) : next()));
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: LIMITS.frameMaxBytes }));
  app.use(docsPages());
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.use(live.routes());
  app.use(live.allowedMethods());
  app.use(dashboard.routes());
  app.use(dashboard.allowedMethods());
  return app;
}
