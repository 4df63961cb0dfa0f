// /metrics on a port of its own (METRICS_PORT, O12): the scraper reaches it on the internal network while the main
// port, the one a proxy or the internet reaches, no longer answers it. Plain HTTP: it carries no secret. The probes
// are answered here too: a load balancer's health check on this port gets its answer whatever load the main port
// carries, authenticated or not (L21).
import { Router } from '@koa/router';
import Koa from 'koa';
import type { Registry as PromRegistry } from 'prom-client';
import type { Logger } from '../shared/logger.js';
import { errorBodies } from '../http/errors.js';
import { healthRoutes, metricsHandler, type NotReady } from '../http/routes.js';

export function metricsApp(metrics: PromRegistry, log: Logger, ready: () => Promise<NotReady | undefined>): Koa {
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  router.get('/metrics', metricsHandler(metrics));
  healthRoutes(router, ready);
  app.use(errorBodies(log));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
