// Wires the bridge together: database -> directory -> core -> HTTP and WebSocket adapters.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import { pino } from 'pino';
import { Registry } from './admin/registry.js';
import type { Config } from './config.js';
import { makeBridge, type Bridge } from './core/bridge.js';
import { AdjustableClock, systemClock, type Clock } from './core/clock.js';
import { Directory } from './core/directory.js';
import type { Logger } from './core/logger.js';
import { LocalRouter } from './core/router.js';
import { httpApp } from './http/app.js';
import { openDatabase } from './store/database.js';
import { RegistryStore } from './store/registry.js';
import { attachWebSockets } from './ws/upgrade.js';

export interface RunningBridge {
  /** `http://host:port`: the HTTP base (admin API, directory); WebSockets are under `ws://host:port/v1/ws/…`. */
  url: string;
  port: number;
  clock: Clock;
  bridge: Bridge;
  directory: Directory;
  registry: Registry;
  /** Ends events in flight, closes connections (1001), stops listening and closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Replaces the clock (tests pass a frozen AdjustableClock). */
  clock?: Clock;
  log?: Logger;
  /** Events of a disconnected agent wait this long for it (default: the spec's agentReconnectGraceMs). */
  agentReconnectGraceMs?: number;
}

export function makeLogger(level: Config['logLevel']): Logger {
  return pino({ level, base: undefined, redact: ['req.headers.authorization', 'token'] });
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningBridge> {
  const log = options.log ?? makeLogger(config.logLevel);
  const clock = options.clock ?? (config.testClock ? new AdjustableClock({ frozen: false }) : systemClock);
  if (config.testClock) log.warn({}, 'BRIDGE_TEST_CLOCK is on: POST /admin/v1/test/clock moves time. Never use this in production.');

  const db: Knex = await openDatabase(config.databaseUrl);
  const directory = new Directory();
  const store = new RegistryStore(db);
  await store.load(directory);

  const router = new LocalRouter();
  const bridge = makeBridge({
    directory,
    router,
    clock,
    log,
    agentTimeoutMs: config.agentTimeoutMs,
    ...(options.agentReconnectGraceMs !== undefined ? { agentReconnectGraceMs: options.agentReconnectGraceMs } : {}),
  });
  const registry = new Registry(store, directory, clock, (agentId) => router.isAgentOnline(agentId));
  const testClock = config.testClock && clock instanceof AdjustableClock ? clock : undefined;
  const app = httpApp({ registry, directory, clock, adminToken: config.adminToken, testClock, log });

  const server: Server = createServer(app.callback());
  const sockets = attachWebSockets(server, { bridge, directory, clock, log });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  log.info({ url, database: config.databaseUrl.replace(/\/\/[^@]*@/, '//***@'), admin: Boolean(config.adminToken) }, 'bridge listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    clock,
    bridge,
    directory,
    registry,
    close() {
      closing ??= (async () => {
        bridge.shutdown();
        sockets.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await db.destroy();
      })();
      return closing;
    },
  };
}
