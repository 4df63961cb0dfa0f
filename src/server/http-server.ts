// The server on PORT (HTTP, or HTTPS with TLS_CERT_FILE): the admin API, the dashboard and the WebSocket endpoints.
// Two services: made early, so that the connections still open are dropped late (after the event log's last commit
// and the cluster link's close); listening late, once the bridge behind it exists, so that it is the first to stop
// (no new connection during the shutdown).
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type Koa from 'koa';
import type { Config } from '../config.js';
import type { Bridge } from '../core/bridge.js';
import { clientAddress } from '../http/proxy.js';
import { watchAccepts, type AcceptFailures } from '../ops/accept-failures.js';
import type { Metrics } from '../ops/metrics.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { shownUrl } from '../shared/shown-url.js';
import type { TlsFiles } from '../tls.js';
import { SERVER_DEADLINES, type UnauthenticatedConnections } from '../ws/unauthenticated.js';
import { attachWebSockets, type WebSocketEndpoints } from '../ws/upgrade.js';
import type { ConnectionBounds } from './connection-bounds.js';
import { baseUrl, listen } from './listen.js';
import type { Readiness } from './readiness.js';
import type { Service } from './services.js';

export interface Front {
  server: Server;
  /** Once it listens. */
  sockets?: WebSocketEndpoints;
}

export function httpConnections(tls: TlsFiles | undefined): Service<Front> {
  return {
    name: 'http connections',
    start() {
      // The same Koa app and WebSocket upgrades either way: https.Server emits 'request' and 'upgrade' like http.Server.
      const server: Server = tls
        ? createTlsServer({ cert: tls.cert, key: tls.key, ...SERVER_DEADLINES })
        : createServer(SERVER_DEADLINES);
      return { server };
    },
    stop(front) {
      front.sockets?.close();
      front.server.closeAllConnections();
    },
  };
}

export interface ListeningDeps {
  config: Config;
  bounds: ConnectionBounds;
  tls: TlsFiles | undefined;
  app: Koa;
  bridge: Bridge;
  unauthenticated: UnauthenticatedConnections;
  readiness: Readiness;
  metrics: Metrics;
  /** Where /metrics is served apart (METRICS_PORT), if it is. */
  metricsUrl: string | undefined;
  clock: Clock;
  log: Logger;
}

export interface Listening {
  url: string;
  port: number;
  accepts: AcceptFailures;
}

export function httpListening(front: Front, deps: ListeningDeps): Service<Listening> {
  const { server } = front;
  return {
    name: 'http listening',
    async start() {
      const { config, app, unauthenticated, log } = deps;
      server.on('request', app.callback());
      unauthenticated.watch(server);
      front.sockets = attachWebSockets(server, {
        bridge: deps.bridge,
        log,
        addressOf: (req) => clientAddress(app, req),
        authenticated: (socket) => unauthenticated.authenticated(socket),
      });
      const port = await listen(server, config.port, config.host, 'PORT, HOST');
      const accepts = watchAccepts(server, {
        clock: deps.clock,
        log,
        count: deps.metrics.acceptFailed,
        cap: deps.bounds.cap,
      });
      deps.readiness.watch(accepts);
      const url = baseUrl(deps.tls ? 'https' : 'http', config.host, port);
      logListening(url, front, deps);
      return { url, port, accepts };
    },
    stop({ accepts }) {
      deps.readiness.shutDown();
      server.close(); // no new connections; the HTTP requests in progress finish
      front.sockets?.stopAccepting();
      accepts.stop();
    },
  };
}

function logListening(url: string, front: Front, { config, bounds, tls, metricsUrl, log }: ListeningDeps): void {
  log.info(
    {
      url,
      database: shownUrl(config.databaseUrl),
      admin: Boolean(config.adminToken),
      maxConnections: front.server.maxConnections ?? null,
      maxWebSockets: bounds.maxWebSockets,
      ...(tls ? { certificateValidTo: tls.validTo.toISOString() } : {}),
      trustProxy: config.trustProxy,
      metrics: metricsUrl ?? `${url}/metrics`,
    },
    'bridge listening',
  );
  if (tls && tls.validTo.getTime() < Date.now())
    log.warn(
      { certificateValidTo: tls.validTo.toISOString() },
      'the TLS certificate has expired: clients will refuse it',
    );
}
