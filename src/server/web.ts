// The Koa app on PORT given what its routes read and change: on this node, and through `peers` on every node.
import type Koa from 'koa';
import type { Registry as PromRegistry } from 'prom-client';
import type { AuditTrail } from '../admin/audit.js';
import type { Registry } from '../admin/registry.js';
import type { Config } from '../config.js';
import type { Bridge } from '../core/bridge.js';
import type { Directory } from '../core/directory.js';
import type { SessionTable } from '../core/sessions.js';
import type { OverviewRing } from '../ops/overview-ring.js';
import type { Logger } from '../shared/logger.js';
import type { EventLogReader } from '../store/event-log.js';
import type { SignInStore } from '../store/sign-ins.js';
import type { WriteBehind } from '../store/write-behind.js';
import { httpApp } from '../web-app.js';
import { clockMoved, type BridgeClock } from './clock.js';
import { flushEveryNode } from './event-log.js';
import { disconnectOnAnyNode } from './disconnect.js';
import { everyNodesConnections } from './org-live.js';
import { everyNodesOverview } from './overview.js';
import type { Peers } from './peers.js';
import type { Readiness } from './readiness.js';
import { everyNodesSessions } from './sessions.js';

export interface WebParts {
  config: Config;
  log: Logger;
  time: BridgeClock;
  registry: Registry;
  audit: AuditTrail;
  signIns: SignInStore;
  directory: Directory;
  reader: EventLogReader;
  writer: WriteBehind;
  sessions: SessionTable;
  overview: OverviewRing;
  bridge: Bridge;
  nodeId: string;
  peers: Peers;
  readiness: Readiness;
  /** Undefined when /metrics is served on its own port instead (METRICS_PORT, O12). */
  metrics: PromRegistry | undefined;
}

export function webApp(parts: WebParts): Koa {
  const { config, time, bridge, nodeId, peers } = parts;
  return httpApp({
    registry: parts.registry,
    audit: parts.audit,
    signIns: parts.signIns,
    directory: parts.directory,
    clock: time.clock,
    testClock: time.testClock,
    adminToken: config.adminToken,
    // Every node's clock moves with this one's, and the answer waits until they have.
    clockMoved: clockMoved(peers),
    log: parts.log,
    events: parts.reader,
    flushEventLog: flushEveryNode(parts.writer, peers),
    overview: everyNodesOverview(parts.overview, nodeId, peers),
    organizationConnections: everyNodesConnections(bridge, nodeId, peers),
    disconnect: disconnectOnAnyNode(bridge, nodeId, peers),
    openConnection: (socket, principal) => bridge.open(socket, principal),
    liveSessions: everyNodesSessions(parts.sessions, peers),
    metrics: parts.metrics,
    trustProxy: config.trustProxy,
    ready: parts.readiness.check,
  });
}
