// The Koa application: error bodies, JSON bodies, routes.
import Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { LIMITS } from '../../generated/index.js';
import type { Logger } from '../core/logger.js';
import { adminOnly } from './auth.js';
import { errorBodies } from './errors.js';
import { routes, type RouteDeps } from './routes.js';

export function httpApp(deps: RouteDeps & { log: Logger }): Koa {
  const app = new Koa();
  app.silent = true; // errors become {code, error} bodies in errorBodies and are logged there
  const router = routes(deps);
  app.use(errorBodies(deps.log));
  // Before routing, so that an unknown admin path answers like a known one while the admin API is off or locked.
  const requireAdmin = adminOnly(deps.adminToken);
  app.use((ctx, next) => (ctx.path === '/admin' || ctx.path.startsWith('/admin/') ? requireAdmin(ctx, next) : next()));
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: LIMITS.frameMaxBytes }));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
