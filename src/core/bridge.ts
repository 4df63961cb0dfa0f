// The bridge core: its parts put together. No sockets and no database here: a transport hands it a Socket and the
// handshake's raw facts, gets back the connection's handlers, and does I/O. Each part owns its own state —
// connections (connections.ts), the app side's admission (app-side.ts, admission.ts), the events in flight
// (event-table.ts, event-in-flight.ts), the agent side's streaming and replies (agent-side.ts, replies.ts), endings
// and revocation (endings.ts), resumes (resume-desk.ts) — and reaches another only through what it was given here.
import type { ClientKind, RevokeCause } from '../../generated/index.js';
import { errorText } from '../shared/error-text.js';
import { Admission } from './admission.js';
import { AgentSide } from './agent-side.js';
import { AppSide } from './app-side.js';
import { settingsOf, type BridgeOptions, type BridgeSettings } from './bridge-options.js';
import { ByteBounds } from './byte-bounds.js';
import { CancelledEvents } from './cancelled-events.js';
import { Cancels, type CancelOutcome } from './cancels.js';
import { ConnectionBounds } from './connection-bounds.js';
import { Connections, type Client, type ConnectionHooks } from './connections.js';
import type { Principal } from './directory.js';
import type { Connection } from './engine.js';
import { Endings } from './endings.js';
import { EventTable } from './event-table.js';
import { FairShares, type FairShareStats } from './fair-share.js';
import { fromOtherNodes } from './from-other-nodes.js';
import type { ConnectionFacts } from './handshake.js';
import { eventIdFactory } from './ids.js';
import { newCoreCounters, type LimitCounters } from './limit-counters.js';
import type { ClosedClient, LiveClient } from './live-picture.js';
import { Heartbeats } from './liveness.js';
import { Replies } from './replies.js';
import { ResumeDesk, type ResumeHost } from './resume-desk.js';
import { ResumeStore, type ResumeStats } from './resume-store.js';
import type { ConnectionHandlers, Socket } from './transport.js';

export type { BridgeOptions } from './bridge-options.js';
export type { LimitCounters, ReplyRefusal } from './limit-counters.js';

export interface Bridge {
  /**
   * A socket whose WebSocket handshake on an endpoint (see `endpointOf`) has just completed: identified from the
   * raw facts, then opened or refused (one `error`, then the close). The transport calls the handlers returned.
   */
  connect(socket: Socket, facts: ConnectionFacts): ConnectionHandlers;
  /**
   * A socket already known to be `principal`: opened, or refused when over a bound (L18). `resumable`: an app
   * connection opened with ?resume=1 (R1); `cancellable`: an agent connection opened with ?cancel=1 (S1).
   */
  open(
    socket: Socket,
    principal: Principal,
    address?: string,
    resumable?: boolean,
    cancellable?: boolean,
  ): ConnectionHandlers;
  /** Closes the connections opened with this token (its rotation grace has ended): UNAUTHORIZED. */
  expireToken(hash: Buffer): void;
  /**
   * The app or agent was deactivated, or deleted with its organization (`cause`, for the error text only): its
   * connections close with TOKEN_REVOKED, an agent's events end with AGENT_OFFLINE.
   */
  revoke(kind: ClientKind, id: string, cause?: RevokeCause): void;
  /** Ends every event in flight with SHUTTING_DOWN and closes every connection with 1001. */
  shutdown(): void;
  /** What is live right now. */
  stats(): { apps: number; agents: number; eventsInFlight: number };
  /** Whether the app has at least one live connection. */
  isAppOnline(appId: string): boolean;
  /** Apps with at least one live connection on this node. */
  appsOnline(): number;
  /** The live connections on this node of an organization's apps and agents, oldest first (D8). */
  liveConnections(orgId: string): LiveClient[];
  /**
   * Closes this node's connection `connectionId` with DISCONNECTED_BY_ADMIN (H8): what it was, or undefined when
   * this node holds none of that id. Its events in flight fare as after any close.
   */
  disconnect(connectionId: string): ClosedClient | undefined;
  /** Token fragments forwarded to apps since start (a counter for metrics, kept off the observer's path). */
  tokensForwarded(): number;
  /** What the bounds on events and replies have done since start (counters for metrics). */
  limitCounters(): LimitCounters;
  /** Bytes held right now for the streamed text of events in flight (L14). */
  streamedTextBytes(): number;
  /** Bytes queued for every connection and not yet taken by the network, read from each now (L19). */
  sendBufferBytes(): number;
  /** Bytes received of messages not yet whole, on every connection (L20). */
  partialMessageBytes(): number;
  /** What is kept for resumes right now, and what was dropped and resumed since start (R7). */
  resumeStats(): ResumeStats;
  /** What the organizations' fair shares did since start (F3, R10). */
  fairShareStats(): FairShareStats;
  /** Cancels since start by outcome, and the cancelled events whose late agent frames are dropped now (S4, S7). */
  cancelStats(): { cancels: Record<CancelOutcome, number>; remembered: number };
}

export function makeBridge(options: BridgeOptions): Bridge {
  const parts = assemble(settingsOf(options));
  const { s, connections, table, endings, counters, byteBounds, heartbeats, resumes, shares, agentSide } = parts;
  const { cancels, cancelled } = parts;
  const owns = (kind: ClientKind, id: string) => (c: Client) =>
    c.principal.kind === kind &&
    (c.principal.kind === 'app' ? c.principal.app.app_id : c.principal.agent.agent_id) === id;
  return {
    connect: (socket, facts) => connections.connect(socket, facts),
    open: (socket, principal, address, resumable, cancellable) =>
      connections.open(socket, principal, address, resumable, cancellable),
    expireToken(hash) {
      const withToken = (c: Client) => c.principal.token.hash.equals(hash);
      connections.closeWhere(withToken, 'UNAUTHORIZED', errorText('UNAUTHORIZED', 'grace_ended'));
    },
    revoke(kind, id, cause = 'deactivated') {
      connections.closeWhere(owns(kind, id), 'TOKEN_REVOKED', errorText('TOKEN_REVOKED', 'live', { kind, cause }));
      if (kind === 'agent') endings.agentRevoked(id, cause);
    },
    shutdown() {
      endings.shutdown();
      connections.closeAll();
      for (const part of [parts.admission, byteBounds, heartbeats, endings, resumes, parts.desk, shares, cancelled])
        part.stop();
    },
    stats() {
      const { apps, agents } = connections.stats();
      return { apps, agents, eventsInFlight: table.size };
    },
    isAppOnline: (appId) => s.engine.isAppOnline(appId),
    appsOnline: () => parts.bounds.appCount(),
    liveConnections: (orgId) => connections.liveConnections(orgId),
    disconnect: (connectionId) => connections.disconnect(connectionId),
    tokensForwarded: () => agentSide.tokensForwarded,
    limitCounters: () => ({
      ...structuredClone(counters),
      ...byteBounds.counters(),
      heartbeatTimeouts: heartbeats.counters(),
    }),
    streamedTextBytes: () => table.streamedTextBytes(),
    sendBufferBytes: () => byteBounds.sendBufferBytes(),
    partialMessageBytes: () => byteBounds.partialMessageBytes(),
    resumeStats: () => resumes.stats(),
    fairShareStats: () => structuredClone(shares.stats),
    cancelStats: () => ({ cancels: { ...cancels.counts }, remembered: cancelled.size }),
  };
}

/** The parts, each given what it reaches of the others; the engine then hears from the other nodes. */
function assemble(s: BridgeSettings) {
  const { clock, log, engine, directory } = s;
  const counters = newCoreCounters();
  const table = new EventTable(s.events);
  const resumes = new ResumeStore(s.resumeBounds, clock, log);
  const shares = new FairShares(s.fairShares, clock, log);
  const bounds = new ConnectionBounds(s.connectionLimits);
  const byteBounds = new ByteBounds({
    ...s.byteBounds,
    clock,
    log,
    refuse: (conn, code, error) => connections.refuse(conn, code, error),
  });
  const heartbeats = new Heartbeats({ ...s.liveness, clock, log });
  const isLive = (conn: Connection) => connections.has(conn);
  const desk = deskOf(s, table, resumes, shares, isLive);
  const endings = new Endings({ ...s, table, presence: engine, resumes, desk, counters, isLive });
  const admission = new Admission({
    ...s,
    table,
    endings,
    resumes,
    counters,
    newEventId: eventIdFactory(clock, engine.eventIdSuffix),
    isLive,
    isResumable: (conn) => connections.get(conn)?.resumable === true,
  });
  const cancelled = new CancelledEvents(clock, s.agentTimeoutMs, s.events.perAgent);
  const cancels = new Cancels({ table, endings, desk, delivery: engine, relay: engine, remembered: cancelled });
  const appSide = new AppSide({ directory, admission, desk, cancels, shares, clock });
  const replies = new Replies({ endings, clock, log, counters, limits: s.events });
  const agentSide = new AgentSide({
    delivery: engine,
    isLive,
    table,
    endings,
    replies,
    resumes,
    cancelled,
    shares,
    observer: s.observer,
    clock,
  });
  const connections: Connections = new Connections({
    ...s,
    presence: engine,
    bounds,
    byteBounds,
    heartbeats,
    counters,
    hooks: hooksOf(appSide, agentSide, endings, table, desk),
  });
  engine.listen(
    fromOtherNodes({ delivery: engine, agentSide, connections, endings, desk, cancels, observer: s.observer, log }),
  );
  return {
    s,
    counters,
    table,
    resumes,
    shares,
    bounds,
    byteBounds,
    heartbeats,
    desk,
    endings,
    admission,
    agentSide,
    connections,
    cancels,
    cancelled,
  };
}

/** The resume desk, and what it reaches of the events in flight. */
function deskOf(
  s: BridgeSettings,
  table: EventTable,
  resumes: ResumeStore,
  shares: FairShares,
  isLive: (conn: Connection) => boolean,
): ResumeDesk {
  const host: ResumeHost = {
    plainInFlight(eventId) {
      const ev = table.get(eventId);
      return ev && !ev.kept ? { appId: ev.app.app_id } : undefined;
    },
    holdBy(eventId, conn, ifHeldBy) {
      const ev = table.get(eventId);
      if (!ev?.kept || (ifHeldBy && ev.appConn !== ifHeldBy)) return undefined;
      const previous = ev.appConn;
      table.move(ev, conn, isLive(conn));
      return previous;
    },
    orgOf: (appId) => s.directory.apps.get(appId)?.org_id,
  };
  return new ResumeDesk({ shares, store: resumes, bounds: s.resumeBounds, relay: s.engine, clock: s.clock, host });
}

/** What the connections hand on: frames to the side they came from, comings and goings to the events' parts. */
function hooksOf(
  appSide: AppSide,
  agentSide: AgentSide,
  endings: Endings,
  table: EventTable,
  desk: ResumeDesk,
): ConnectionHooks {
  return {
    frame: (client, data, isBinary) =>
      client.principal.kind === 'app'
        ? appSide.frame(client, client.principal.app, data, isBinary)
        : agentSide.frame(client, client.principal.agent, data, isBinary),
    agentAttached: (agentId) => endings.agentBack(agentId),
    agentLeft: (agentId) => endings.agentLeft(agentId),
    appConnectionGone(conn) {
      // Nobody can receive these events' text any more (L15); they go on until their agent answers. A resumable
      // event's text stays: a resume may still need the reply it builds (R7).
      for (const ev of table.takeOfConn(conn)) if (!ev.kept) endings.discardText(ev, 'app_gone');
      desk.connectionGone(conn);
    },
  };
}
