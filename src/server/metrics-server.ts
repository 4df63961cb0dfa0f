// /metrics on a port of its own (METRICS_PORT, O12), with /healthz and /readyz: two services. The server is made
// early, so it is closed late: a scraper and a load balancer still reach it while the bridge drains. It listens
// late, once what it reports on exists.
import { createServer, type Server } from 'node:http';
import type { Registry as PromRegistry } from 'prom-client';
import type { NotReady } from '../http/routes.js';
import { metricsApp } from '../ops/metrics-server.js';
import type { Logger } from '../shared/logger.js';
import { baseUrl, listen } from './listen.js';
import type { Service } from './services.js';

export interface MetricsServer {
  server: Server;
  port: number;
  host: string;
}

export function metricsServer(port: number, host: string): Service<MetricsServer> {
  return {
    name: 'metrics server',
    start: () => ({ server: createServer(), port, host }),
    stop({ server }) {
      server.close();
      server.closeAllConnections();
    },
  };
}

/** Resolves with the URL of /metrics. */
export function metricsPort(
  { server, port, host }: MetricsServer,
  deps: { registry: PromRegistry; log: Logger; ready: () => Promise<NotReady | undefined> },
): Service<string> {
  return {
    name: 'metrics port',
    async start() {
      server.on('request', metricsApp(deps.registry, deps.log, deps.ready).callback());
      const listening = await listen(server, port, host, 'METRICS_PORT, METRICS_HOST');
      return `${baseUrl('http', host, listening)}/metrics`;
    },
  };
}
