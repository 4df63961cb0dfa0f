// Puts the bridge together as services (src/server/), each added once what it uses has started, so that the shutdown
// runs in the reverse order without being written out: no new connections first; the bridge's timers and its own
// shutdown (events ended, connections closed); the event log's last commit; the cluster link; the connections still
// open; the metrics port; the database; the lock.
import type { Server } from 'node:http';
import type { Knex } from 'knex';
import { pino } from 'pino';
import pretty from 'pino-pretty';
import { AuditTrail } from './admin/audit.js';
import type { Registry } from './admin/registry.js';
import { ConfigError, type Config } from './config.js';
import type { Bridge } from './core/bridge.js';
import type { Directory } from './core/directory.js';
import type { SessionTable } from './core/sessions.js';
import type { Clock } from './shared/clock.js';
import { withFields, type Logger } from './shared/logger.js';
import { AuditStore } from './store/audit-log.js';
import { SignInStore } from './store/sign-ins.js';
import { isPostgresUrl } from './store/database-url.js';
import { EventLogReader } from './store/event-log.js';
import { RegistryStore } from './store/registry.js';
import type { WriteBehind } from './store/write-behind.js';
import { readTlsFiles, type TlsFiles } from './tls.js';
import { adminRegistry } from './server/admin.js';
import { bridgeCore, revokeHandlers } from './server/bridge-core.js';
import { chooseClock, clockHandlers } from './server/clock.js';
import { clusterControl, clusterLink, countClusterTraffic, nodeIdOf } from './server/cluster-link.js';
import { database, databaseLock } from './server/database.js';
import { chooseEngine } from './server/engine.js';
import { eventLog, eventLogHandlers } from './server/event-log.js';
import { connectionBounds, unauthenticatedConnections } from './server/connection-bounds.js';
import { httpConnections, httpListening } from './server/http-server.js';
import { metricsPort, metricsServer } from './server/metrics-server.js';
import { observers } from './server/observers.js';
import { disconnectHandlers } from './server/disconnect.js';
import { orgLiveHandlers } from './server/org-live.js';
import { overviewHandlers, overviewSampling } from './server/overview.js';
import { NO_PEERS } from './server/peers.js';
import { Readiness } from './server/readiness.js';
import { registrationHandlers, registrations } from './server/registrations.js';
import { Services } from './server/services.js';
import { sessionHandlers, sessionTable } from './server/sessions.js';
import { lostOutcomes, sweeps } from './server/sweeps.js';
import { tokenExpiries } from './server/token-expiries.js';
import { eventTracing } from './server/tracing.js';
import { webApp } from './server/web.js';

export { READY_EVENT_LOG_MS } from './server/readiness.js';
export { SWEEP_INTERVAL_MS } from './server/sweeps.js';

export interface RunningBridge {
  /**
   * `http://host:port`, `https://…` with TLS_CERT_FILE: the HTTP base (admin API, directory); WebSockets are under
   * `ws://host:port/v1/ws/…` (`wss://`).
   */
  url: string;
  port: number;
  /** `http://host:port/metrics` when METRICS_PORT serves it apart (O12); undefined: `${url}/metrics`. */
  metricsUrl: string | undefined;
  clock: Clock;
  bridge: Bridge;
  directory: Directory;
  registry: Registry;
  sessions: SessionTable;
  writer: WriteBehind;
  /** The HTTP or HTTPS server (tests inject its accept errors and drops). */
  server: Server;
  /** Graceful shutdown: stop accepting, end events in flight, close sockets (1001), flush the event log. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Replaces the clock (tests pass a frozen AdjustableClock). */
  clock?: Clock;
  log?: Logger;
  /** Events of a disconnected agent wait this long for it (default: the spec's agentReconnectGraceMs). */
  agentReconnectGraceMs?: number;
  /** Delays between retries of an event-log commit the database did not take (default 100 ms doubling to 5 s). */
  eventLogRetryMs?: { first: number; max: number };
}

export function makeLogger(level: Config['logLevel'], format: Config['logFormat'] = 'json'): Logger {
  const options = { level, base: undefined, redact: ['req.headers.authorization', 'token'] };
  if (format === 'json' || (format === 'auto' && !process.stdout.isTTY)) return pino(options);
  // Synchronous: a development terminal, where a line must be out before the process that wrote it exits.
  const colorize = format === 'auto' || Boolean(process.stdout.isTTY);
  return pino(options, pretty({ colorize, sync: true, translateTime: 'SYS:HH:MM:ss.l' }));
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningBridge> {
  const log = options.log ?? makeLogger(config.logLevel, config.logFormat);
  for (const { name, meant } of config.unknownSettings) {
    const hint = meant ? `; did you mean ${meant}?` : '';
    log.warn({ variable: name, ...(meant ? { meant } : {}) }, `${name} is not a setting of the bridge: ignored${hint}`);
  }
  // Before the database: a wrong certificate is the operator's to fix, and no lock or file need be touched for it.
  const tls = config.tlsCertFile && config.tlsKeyFile ? readTlsFiles(config.tlsCertFile, config.tlsKeyFile) : undefined;
  if (config.redisUrl && !isPostgresUrl(config.databaseUrl)) {
    throw new ConfigError(
      'Invalid configuration: REDIS_URL makes this bridge one node of several, and they must share one database: set DATABASE_URL=postgres://… (SQLite is one process\'s alone). See the README\'s "Several nodes".',
    );
  }
  // A start that fails stops what had started: a bridge that failed to start keeps neither its database nor the lock.
  const services = new Services(log);
  await services.add(databaseLock(config, log));
  const db = await services.add(database(config.databaseUrl));
  return startOnDatabase(config, options, { log, tls, services, db });
}

async function startOnDatabase(
  config: Config,
  options: StartOptions,
  { log, tls, services, db }: { log: Logger; tls: TlsFiles | undefined; services: Services; db: Knex },
): Promise<RunningBridge> {
  const time = chooseClock(config, options.clock, log);
  const { clock } = time;
  const apart =
    config.metricsPort === undefined
      ? undefined
      : await services.add(metricsServer(config.metricsPort, config.metricsHost));
  const front = await services.add(httpConnections(tls));
  const cluster = config.redisUrl
    ? await services.add(clusterLink({ ...config, redisUrl: config.redisUrl }, log))
    : undefined;
  const peers = cluster ?? NO_PEERS;
  const nodeId = nodeIdOf(cluster, config);
  const store = new RegistryStore(db);
  const reader = new EventLogReader(db);
  const directory = await services.add(registrations(store));
  const writer = await services.add(eventLog(db, config, { clock, log, retryMs: options.eventLogRetryMs }));
  const sessions = await services.add(sessionTable(reader, writer, config, { clock, log }));
  const unauthenticated = await services.add(unauthenticatedConnections(config, { clock, log, tls: Boolean(tls) }));
  const engine = chooseEngine(config, cluster, { testClock: time.testClock });
  const coreLog = withFields(log, { node: nodeId });
  const eventSteps = config.logLevel === 'debug' || config.logLevel === 'trace' ? coreLog : undefined;
  const tracing = await services.add(eventTracing(config.tracing, { clock, log: coreLog, nodeId }));
  const { metrics, overview, observer, watch } = observers({
    writer,
    sessions,
    unauthenticated,
    clock,
    eventSteps,
    tracing,
  });
  if (cluster) countClusterTraffic(metrics, cluster, engine);
  const audit = new AuditTrail(new AuditStore(db), clock, log, metrics.adminAction);
  const { agentReconnectGraceMs } = options;
  const swept = { config, clock, log, reader, writer, sessions, audit, metrics, agentReconnectGraceMs };
  await services.add(lostOutcomes(swept));
  await services.add(sweeps(swept));
  const bounds = connectionBounds(config.maxConnections);
  const { maxWebSockets } = bounds;
  // The core's lines say which node they come from: one operator reads the logs of every node together.
  const traceparentOf = tracing?.traceparentOf;
  const core = {
    directory,
    engine,
    clock,
    log: coreLog,
    sessions,
    observer,
    traceparentOf,
    maxWebSockets,
    agentReconnectGraceMs,
  };
  const bridge = await services.add(bridgeCore(config, core));
  watch(bridge);
  await services.add(overviewSampling(overview));
  const expiries = await services.add(tokenExpiries(directory, bridge, clock));
  const registry = adminRegistry({ store, directory, clock, engine, bridge, expiries, sessions, writer, peers });
  if (cluster) {
    // Each part answers the other nodes for what it holds; an op without a handler here fails the typecheck.
    const handlers = {
      ...registrationHandlers(store, directory, expiries),
      ...revokeHandlers(bridge, directory),
      ...sessionHandlers(sessions, writer),
      ...clockHandlers(time),
      ...eventLogHandlers(writer),
      ...overviewHandlers(overview, nodeId),
      ...orgLiveHandlers(bridge, nodeId),
      ...disconnectHandlers(bridge, nodeId),
    };
    await services.add(clusterControl(cluster, handlers));
  }
  const readiness = new Readiness({ db, writer, cluster });
  const ready = readiness.check;
  const metricsUrl = apart && (await services.add(metricsPort(apart, { registry: metrics.registry, log, ready })));
  const signIns = new SignInStore(db);
  const web = { config, log, time, registry, audit, signIns, directory, reader, writer, sessions, overview, bridge };
  const app = webApp({ ...web, nodeId, peers, readiness, metrics: apart ? undefined : metrics.registry });
  const listening = { config, bounds, tls, app, bridge, unauthenticated, readiness, metrics, metricsUrl, clock, log };
  const { url, port } = await services.add(httpListening(front, listening));
  const close = stopWithin(services, config.shutdownTimeoutMs, log);
  return { url, port, metricsUrl, clock, bridge, directory, registry, sessions, writer, server: front.server, close };
}

/** Stops the services once, however often it is called; gives up waiting after `timeoutMs` (logged). */
function stopWithin(services: Services, timeoutMs: number, log: Logger): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () =>
    (closing ??= Promise.race([
      services.stop(),
      new Promise<void>((resolve) =>
        setTimeout(() => {
          log.error({ timeoutMs }, 'graceful shutdown timed out');
          resolve();
        }, timeoutMs).unref(),
      ),
    ]));
}
