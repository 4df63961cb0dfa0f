// Wires the bridge together: database -> directory and sessions -> core -> HTTP and WebSocket adapters, with the
// event log, metrics, sweeps and token expiries around it.
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import { pino } from 'pino';
import { LIMITS } from '../generated/index.js';
import { AuditTrail } from './admin/audit.js';
import { Registry } from './admin/registry.js';
import { ConfigError, type Config } from './config.js';
import type { ControlHandlers } from './cluster/control-handlers.js';
import { joinCluster, type ClusterNode, type ControlOp } from './cluster/node.js';
import { RedisRateLimiter } from './cluster/redis-rate-limit.js';
import { makeBridge, type Bridge } from './core/bridge.js';
import { errorText } from './shared/error-text.js';
import { AdjustableClock, systemClock, type Clock, type Timer } from './shared/clock.js';
import { Directory, type TokenRecord } from './core/directory.js';
import type { Logger } from './shared/logger.js';
import { fanOut } from './core/observer.js';
import { RateLimiter } from './core/rate-limit.js';
import { every, oneAtATime } from './core/repeat.js';
import { describeStep, SWEEP_CLOCK_STEP_MAX_MS, SweepClock } from './core/sweep-clock.js';
import { LocalRouter, type Router } from './core/router.js';
import { mergeSessions, SessionTable } from './core/sessions.js';
import { httpApp } from './web-app.js';
import { clientAddress } from './http/proxy.js';
import type { NotReady } from './http/routes.js';
import { isListenError, ListenFailure, listenFailure } from './shared/listen-error.js';
import { connectionCap, watchAccepts, webSocketCap, type AcceptFailures } from './ops/accept-failures.js';
import { makeMetrics } from './ops/metrics.js';
import { bridgeGauges, OverviewRing } from './ops/overview-ring.js';
import { CONNECTIONS_LISTED_PER_APP } from './admin/org-live.js';
import { nodeConnections } from './core/live-picture.js';
import { newNodeId } from './cluster/redis-bus.js';
import { registerClusterMetrics } from './ops/cluster-metrics.js';
import { metricsApp } from './ops/metrics-server.js';
import { claimDatabase, databaseAnswers, openDatabase } from './store/database.js';
import type { DatabaseLock } from './store/database-lock.js';
import { isPostgresUrl } from './store/database-url.js';
import { shownUrl } from './shared/shown-url.js';
import { DAY_MS } from './shared/time.js';
import { AuditStore } from './store/audit-log.js';
import { EventLogReader } from './store/event-log.js';
import { eventRecorder } from './store/event-recorder.js';
import { lostAfterMs, markLostAtStart, markLostOutcomes } from './store/lost-outcomes.js';
import { RegistryStore } from './store/registry.js';
import { WriteBehind } from './store/write-behind.js';
import { readTlsFiles, type TlsFiles } from './tls.js';
import { attachWebSockets } from './ws/upgrade.js';
import { SERVER_DEADLINES, UnauthenticatedConnections } from './ws/unauthenticated.js';

/** Sessions and event-log retention are swept this often, on the bridge's clock. */
export const SWEEP_INTERVAL_MS = 3_600_000;
/**
 * /readyz answers 500 once the database has not answered for this long: within the 2 s or more a load balancer's
 * health check waits, whatever the database does (O15).
 */
const READY_DATABASE_MS = 1_500;
/**
 * /readyz answers 500 once the event log's commits have failed for this long, on the bridge's clock (O15): a database
 * that answers `select 1` but takes no writes (a full disk, a read-only file) loses the log a bound's worth at a time.
 */
export const READY_EVENT_LOG_MS = 30_000;

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

export function makeLogger(level: Config['logLevel']): Logger {
  return pino({ level, base: undefined, redact: ['req.headers.authorization', 'token'] });
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningBridge> {
  const log = options.log ?? makeLogger(config.logLevel);
  // Before the database: a wrong certificate is the operator's to fix, and no lock or file need be touched for it.
  const tls = config.tlsCertFile && config.tlsKeyFile ? readTlsFiles(config.tlsCertFile, config.tlsKeyFile) : undefined;
  if (config.redisUrl && !isPostgresUrl(config.databaseUrl)) {
    throw new ConfigError(
      'Invalid configuration: REDIS_URL makes this bridge one node of several, and they must share one database: set DATABASE_URL=postgres://… (SQLite is one process\'s alone). See the README\'s "Several nodes".',
    );
  }
  // One bridge per database (O7, O13), checked before anything reads it; :memory: is this process's alone. The
  // nodes of one bridge (REDIS_URL) share theirs.
  const lock = await claimDatabase(config.databaseUrl, log, { shared: Boolean(config.redisUrl) });
  let db: Knex | undefined;
  let cluster: ClusterNode | undefined;
  try {
    db = await openDatabase(config.databaseUrl);
    if (config.redisUrl) cluster = await joinCluster({ redisUrl: config.redisUrl, nodeId: config.nodeId, log });
    return await startOnDatabase(config, options, log, db, lock, tls, cluster);
  } catch (err) {
    // A bridge that failed to start (a port in use, an unreadable file) keeps neither its database nor the lock.
    await cluster?.close();
    await db?.destroy();
    await lock?.release();
    throw err;
  }
}

/** Listens, or rejects with the failure in one line naming the settings to change (O11). */
async function listen(server: Server, port: number, host: string, settings: string): Promise<number> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    throw isListenError(err) ? new ListenFailure(listenFailure(err, host, port, settings), err) : err;
  }
  return (server.address() as AddressInfo).port;
}

/** A URL for `host` as a client on this machine can use it: 0.0.0.0 is every interface, reached on 127.0.0.1. */
function baseUrl(scheme: string, host: string, port: number): string {
  const shown = host.includes(':') ? `[${host}]` : host;
  return `${scheme}://${shown === '0.0.0.0' ? '127.0.0.1' : shown}:${port}`;
}

async function startOnDatabase(
  config: Config,
  options: StartOptions,
  log: Logger,
  db: Knex,
  lock: DatabaseLock | undefined,
  tls: TlsFiles | undefined,
  cluster: ClusterNode | undefined,
): Promise<RunningBridge> {
  const clock = options.clock ?? (config.testClock ? new AdjustableClock({ frozen: false }) : systemClock);
  if (config.testClock)
    log.warn({}, 'BRIDGE_TEST_CLOCK is on: POST /admin/v1/test/clock moves time. Never use this in production.');

  const directory = new Directory();
  const store = new RegistryStore(db);
  await store.load(directory);
  const reader = new EventLogReader(db);
  const sessions = new SessionTable(config.maxSessionsPerApp, config.maxSessions);
  await reader.deleteExpiredSessions(clock.now()); // those that expired while the bridge was stopped
  const overBound = sessions.load(await reader.liveSessions(clock.now()));
  const writer = new WriteBehind(db, log, {
    flushMs: config.eventLogFlushMs,
    maxRows: config.eventLogQueueMaxRows,
    commitMaxRows: config.eventLogCommitMaxRows,
    clock,
    retryMs: options.eventLogRetryMs,
  });
  if (overBound.length) {
    // MAX_SESSIONS_PER_APP was lowered since they were stored (L17).
    log.info(
      { evicted: overBound.length, maxPerApp: config.maxSessionsPerApp, max: config.maxSessions },
      'sessions evicted at start: over the per-app or the node bound',
    );
    writer.deleteSessions(overBound.map((s) => s.session_key));
  }

  const router: Router = cluster?.router ?? new LocalRouter();
  const cap = connectionCap();
  const maxWebSockets = webSocketCap(config.maxConnections, cap);
  let bridgeRef: Bridge | undefined;
  // Connections to PORT that have not proved a token (L21); behind trusted proxies every one has a proxy's address.
  const unauthenticated = new UnauthenticatedConnections(
    {
      total: config.maxUnauthenticatedConnections,
      perAddress: config.trustProxy > 0 ? 0 : config.maxUnauthenticatedConnectionsPerAddress,
    },
    { clock, log, tls: Boolean(tls) },
  );
  const metrics = makeMetrics(
    () => bridgeRef!,
    writer,
    () => sessions.size,
    () => unauthenticated.stats(),
  );
  const overview = new OverviewRing({ clock, gauges: bridgeGauges(() => bridgeRef!) });
  // The overview and the live picture name each node: a bridge of one node has an id too (its NODE_ID, or made up).
  const nodeId = cluster?.bus.nodeId ?? config.nodeId ?? newNodeId();
  // The test clock moves the shared bucket's time (Redis's own) as it moves this node's.
  const advanced = config.testClock && clock instanceof AdjustableClock ? () => clock.advanced : undefined;
  const rateLimiter = cluster
    ? new RedisRateLimiter(
        cluster.bus.commands,
        config.rateLimitPerSecond,
        config.rateLimitBurst,
        log,
        cluster.bus.prefix,
        advanced,
      )
    : new RateLimiter(config.rateLimitPerSecond, config.rateLimitBurst);
  const bridge = makeBridge({
    directory,
    router,
    clock,
    log,
    sessions,
    agentTimeoutMs: config.agentTimeoutMs,
    rateLimiter,
    maxEventsInFlightPerApp: config.maxEventsInFlightPerApp,
    maxEventsInFlightPerAgent: config.maxEventsInFlightPerAgent,
    maxEventsInFlight: config.maxEventsInFlight,
    eventPayloadsMaxBytes: config.eventPayloadsMaxBytes,
    streamedTextMaxBytes: config.streamedTextMaxBytes,
    streamedTextPerAgentMaxBytes: config.streamedTextPerAgentMaxBytes,
    streamedTextTotalMaxBytes: config.streamedTextTotalMaxBytes,
    resumeBufferPerAppMaxBytes: config.resumeBufferPerAppMaxBytes,
    resumeBufferMaxBytes: config.resumeBufferMaxBytes,
    fairShares: {
      fragmentsPerSecond: config.fragmentsPerOrgPerSecond,
      fragmentsBurst: config.fragmentsPerOrgBurst,
      discoversPerSecond: config.discoversPerOrgPerSecond,
      discoversBurst: config.discoversPerOrgBurst,
      resumesPerSecond: config.resumesPerOrgPerSecond,
      resumesBurst: config.resumesPerOrgBurst,
      replayBytesPerSecond: config.resumeReplayBytesPerOrgPerSecond,
      replayBytesBurst: config.resumeReplayBytesPerOrgBurst,
    },
    connectionLimits: {
      total: maxWebSockets,
      perAddress: config.maxConnectionsPerAddress,
      perApp: config.maxConnectionsPerApp,
    },
    sendBufferMaxBytes: config.sendBufferMaxBytes,
    sendBufferBounds: {
      app: config.sendBufferPerAppMaxBytes,
      agent: config.sendBufferPerAgentMaxBytes,
      total: config.sendBufferTotalMaxBytes,
    },
    partialMessageBounds: {
      app: config.partialMessagesPerAppMaxBytes,
      agent: config.partialMessagesPerAgentMaxBytes,
      total: config.partialMessagesTotalMaxBytes,
    },
    partialMessageTimeoutMs: config.partialMessageTimeoutMs,
    wsPingAfterMs: config.wsPingAfterMs,
    wsPongTimeoutMs: config.wsPongTimeoutMs,
    observer: fanOut(eventRecorder(writer), metrics.observer, overview.observer),
    ...(options.agentReconnectGraceMs !== undefined ? { agentReconnectGraceMs: options.agentReconnectGraceMs } : {}),
  });
  bridgeRef = bridge;
  if (cluster) {
    const { bus, router: clusterRouter } = cluster;
    registerClusterMetrics(metrics.registry, {
      linked: () => bus.isLinked(),
      peers: () => bus.peers().length,
      traffic: () => bus.traffic,
      counters: () => clusterRouter.counters,
      rateLimitFallbacks: () => (rateLimiter instanceof RedisRateLimiter ? rateLimiter.fallbacks : 0),
    });
  }

  const audit = new AuditTrail(new AuditStore(db), clock, log, metrics.adminAction);
  const timers: Timer[] = [overview.start()];
  // Once per token: on several nodes, every reload of the registrations offers each rotated token again.
  const expiring = new Set<string>();
  const scheduleExpiry = (token: TokenRecord) => {
    const key = token.hash.toString('hex');
    if (token.expires_at === null || expiring.has(key)) return;
    expiring.add(key);
    timers.push(clock.setTimer(token.expires_at - clock.now(), () => bridge.expireToken(token.hash)));
  };
  for (const owner of [...directory.apps.keys(), ...directory.agents.keys()])
    directory.tokensOf(owner).forEach(scheduleExpiry);
  // Rows a crash left pending are marked lost once no event can still be in flight for them (O9).
  const lostAfter = lostAfterMs(config.agentTimeoutMs, options.agentReconnectGraceMs ?? LIMITS.agentReconnectGraceMs);
  timers.push(await markLostAtStart(reader, clock, lostAfter, log));
  // Every deletion and marking below counts from the wall clock: none on a step it cannot explain (F2).
  const sweepClock = new SweepClock(clock);
  const sweepDatabase = (): Promise<unknown> => {
    const now = clock.now();
    return Promise.all([
      markLostOutcomes(reader, clock, lostAfter, log).catch((err) =>
        log.error({ err }, 'marking lost event outcomes failed'),
      ),
      reader.deleteExpiredSessions(now).catch((err) => log.error({ err }, 'session sweep failed')),
      config.eventLogRetentionDays > 0 &&
        reader.deleteBefore(now - config.eventLogRetentionDays * DAY_MS).then(
          (deleted) => deleted && log.info({ deleted }, 'event log retention sweep'),
          (err) => log.error({ err }, 'event log retention sweep failed'),
        ),
      config.auditLogRetentionDays > 0 &&
        audit.deleteBefore(now - config.auditLogRetentionDays * DAY_MS).then(
          (deleted) => deleted && log.info({ deleted }, 'audit trail retention sweep'),
          (err) => log.error({ err }, 'audit trail retention sweep failed'),
        ),
    ]);
  };
  // The database's part one at a time: those falling due while one is deleting (a large table, a slow database)
  // become one more.
  const databaseSweeps = oneAtATime(sweepDatabase);
  timers.push(
    { cancel: databaseSweeps.stop },
    every(clock, SWEEP_INTERVAL_MS, () => {
      const verdict = sweepClock.check();
      if (!verdict.trusted) {
        metrics.sweepRefused();
        log.warn(
          { stepMs: verdict.stepMs, maxStepMs: SWEEP_CLOCK_STEP_MAX_MS },
          `hourly sweep skipped: the wall clock is ${describeStep(verdict.stepMs)} the time that passed since the last sweep; nothing is deleted until it is back within a day of it, or the bridge restarts`,
        );
        return;
      }
      const expired = sessions.sweep(clock.now());
      if (expired.length) writer.deleteSessions(expired.map((s) => s.session_key));
      databaseSweeps.request();
    }),
  );

  /** Changes told to the other nodes by the admin call in progress; its `changed()` waits for them. */
  const told: Promise<unknown>[] = [];
  const tell = (change: ControlOp): Promise<unknown> => cluster?.ask(change) ?? Promise.resolve();
  const dropSessions = (ownerIds: ReadonlySet<string>) => {
    const gone = sessions.remove((s) => ownerIds.has(s.agent_id) || ownerIds.has(s.app_id));
    if (gone.length) writer.deleteSessions(gone.map((s) => s.session_key)); // queued after any pending upsert of them
  };
  const testClock = config.testClock && clock instanceof AdjustableClock ? clock : undefined;
  const registry = new Registry(store, directory, clock, {
    isAgentOnline: (agentId) => router.isAgentOnline(agentId),
    locateAgent: (agentId) => router.locateAgent?.(agentId) ?? router.isAgentOnline(agentId),
    isAppOnline: (appId) => bridge.isAppOnline(appId),
    scheduleExpiry,
    revoke: (kind, id, cause) => {
      bridge.revoke(kind, id, cause);
      told.push(tell({ op: 'revoke', kind, id, cause }));
    },
    dropSessions: (ownerIds) => {
      dropSessions(ownerIds);
      told.push(tell({ op: 'drop-sessions', ids: [...ownerIds] }));
    },
    changed: async () => {
      told.push(tell({ op: 'directory' }));
      await Promise.all(told.splice(0));
    },
  });
  /** What this node does with each change or question another node sends: one handler per op. */
  const handlers: ControlHandlers = {
    async directory() {
      const fresh = new Directory();
      await store.load(fresh);
      directory.replaceContents(fresh);
      for (const owner of [...directory.apps.keys(), ...directory.agents.keys()])
        directory.tokensOf(owner).forEach(scheduleExpiry);
    },
    revoke(change) {
      // Inactive here at once, before the reload that follows: a reconnect in between is refused too.
      const owner = change.kind === 'app' ? directory.apps.get(change.id) : directory.agents.get(change.id);
      if (owner) owner.active = false;
      bridge.revoke(change.kind, change.id, change.cause);
    },
    'drop-sessions': (change) => dropSessions(new Set(change.ids)),
    clock(change) {
      testClock?.advance(Math.max(0, change.to - clock.now()));
    },
    'flush-event-log': () => writer.flush(),
    sessions: (change) => sessions.list(change.now, change.filter),
    overview: (change) => overview.node(nodeId, change.after),
    'org-live': (change) => ownConnections(change.org_id),
  };
  if (cluster) {
    cluster.handleChanges(handlers);
    // A change another node made between this node's first read of the registrations and now was not heard.
    await handlers.directory({ op: 'directory' });
  }

  /** This node's share of an organization's live picture, as it also answers the other nodes. */
  function ownConnections(orgId: string) {
    return nodeConnections(nodeId, bridge.liveConnections(orgId), CONNECTIONS_LISTED_PER_APP);
  }
  /** This node's answer and, on several nodes, every other node's (those that did not answer named). */
  async function fromEveryNode<T>(own: T, others: Promise<{ answers: T[]; missing: string[] }> | undefined) {
    const { answers, missing } = (await others) ?? { answers: [], missing: [] };
    return { nodes: [own, ...answers], missing_nodes: missing };
  }
  let shuttingDown = false;
  let accepts: AcceptFailures | undefined;
  /** What /readyz answers, on PORT and on METRICS_PORT alike (L21). */
  const ready = async (): Promise<NotReady | undefined> => {
    if (shuttingDown) return { code: 'SHUTTING_DOWN', why: errorText('SHUTTING_DOWN', 'not_ready') };
    if (cluster && !cluster.bus.isLinked())
      return { code: 'INTERNAL_ERROR', why: errorText('INTERNAL_ERROR', 'cluster_link') };
    await databaseAnswers(db, READY_DATABASE_MS);
    const stuck = writer.failing;
    if (stuck && stuck.forMs >= READY_EVENT_LOG_MS) {
      return {
        code: 'INTERNAL_ERROR',
        why: errorText('INTERNAL_ERROR', 'event_log', {
          seconds: Math.floor(stuck.forMs / 1000),
          reason: stuck.reason.slice(0, 200),
          rows: stuck.waiting,
        }),
      };
    }
    const overloaded = accepts?.recent();
    return overloaded ? { code: 'OVERLOADED', why: overloaded } : undefined;
  };
  const app = httpApp({
    registry,
    audit,
    directory,
    clock,
    adminToken: config.adminToken,
    testClock,
    // Every node's clock moves with this one's, and the answer waits until they have.
    clockMoved: async (now) => void (await tell({ op: 'clock', to: now })),
    log,
    events: reader,
    flushEventLog: async () => {
      await Promise.all([writer.flush(), cluster?.ask({ op: 'flush-event-log' })]);
    },
    overview: (after) =>
      fromEveryNode(
        overview.node(nodeId, after),
        cluster?.gather({ op: 'overview', ...(after === undefined ? {} : { after }) }),
      ),
    organizationConnections: (orgId) =>
      fromEveryNode(ownConnections(orgId), cluster?.gather({ op: 'org-live', org_id: orgId })),
    openConnection: (socket, principal) => bridge.open(socket, principal),
    liveSessions: async (now, filter) =>
      mergeSessions([sessions.list(now, filter), ...((await cluster?.ask({ op: 'sessions', now, filter })) ?? [])]),
    // Served on its own port instead when METRICS_PORT is set (O12).
    metrics: config.metricsPort === undefined ? metrics.registry : undefined,
    trustProxy: config.trustProxy,
    ready,
  });

  // The same Koa app and WebSocket upgrades either way: https.Server emits 'request' and 'upgrade' like http.Server.
  const server: Server = tls
    ? createTlsServer({ cert: tls.cert, key: tls.key, ...SERVER_DEADLINES }, app.callback())
    : createServer(SERVER_DEADLINES, app.callback());
  unauthenticated.watch(server);
  const sockets = attachWebSockets(server, {
    bridge,
    log,
    addressOf: (req) => clientAddress(app, req),
    authenticated: (socket) => unauthenticated.authenticated(socket),
  });
  const metricsServer =
    config.metricsPort === undefined ? undefined : createServer(metricsApp(metrics.registry, log, ready).callback());
  let port: number;
  let metricsUrl: string | undefined;
  try {
    if (metricsServer)
      metricsUrl = `${baseUrl('http', config.metricsHost, await listen(metricsServer, config.metricsPort!, config.metricsHost, 'METRICS_PORT, METRICS_HOST'))}/metrics`;
    port = await listen(server, config.port, config.host, 'PORT, HOST');
  } catch (err) {
    metricsServer?.close();
    for (const t of timers) t.cancel();
    throw err;
  }
  accepts = watchAccepts(server, { clock, log, count: metrics.acceptFailed, cap });
  const url = baseUrl(tls ? 'https' : 'http', config.host, port);
  const maxConnections = server.maxConnections ?? null;
  log.info(
    {
      url,
      database: shownUrl(config.databaseUrl),
      admin: Boolean(config.adminToken),
      maxConnections,
      maxWebSockets,
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

  let closing: Promise<void> | undefined;
  const shutdown = async () => {
    shuttingDown = true;
    server.close(); // no new connections; the HTTP requests in progress finish
    sockets.stopAccepting();
    bridge.shutdown();
    for (const t of timers) t.cancel();
    accepts?.stop();
    unauthenticated.stop();
    await writer.close();
    await cluster?.close(); // after the connections closed: the others heard each agent leave
    sockets.close();
    server.closeAllConnections();
    metricsServer?.close();
    metricsServer?.closeAllConnections();
    try {
      await db.destroy();
    } finally {
      await lock?.release(); // last: the next bridge may open the file once this one no longer writes to it
    }
  };
  return {
    url,
    port,
    metricsUrl,
    clock,
    bridge,
    directory,
    registry,
    sessions,
    writer,
    server,
    close() {
      closing ??= Promise.race([
        shutdown(),
        new Promise<void>((resolve) =>
          setTimeout(() => {
            log.error({ timeoutMs: config.shutdownTimeoutMs }, 'graceful shutdown timed out');
            resolve();
          }, config.shutdownTimeoutMs).unref(),
        ),
      ]);
      return closing;
    },
  };
}
