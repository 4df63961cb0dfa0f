// The bridge core: connections, the per-event flow, limits and timers. No sockets and no database here: a
// transport hands it a Socket and the handshake's raw facts, gets back the connection's handlers, and does I/O.
import {
  CLOSE_CODES,
  ERRORS,
  LIMITS,
  validateAgentId,
  validateAgentToServiceMessage,
  validateAppToServiceMessage,
  validateEventId,
  type AgentErrorMessage,
  type AgentReplyMessage,
  type AgentTokenMessage,
  type ClientKind,
  type ErrorCode,
  type EventMessage,
} from '../../generated/index.js';
import { systemClock, type Clock, type Timer } from '../shared/clock.js';
import { errorText } from '../shared/error-text.js';
import { DAY_MS } from '../shared/time.js';
import type { AgentRecord, AppRecord, Directory, Principal } from './directory.js';
import * as frames from './frames.js';
import { compactJson } from './compact-json.js';
import { eventIdFactory } from './ids.js';
import { parseInbound } from './inbound.js';
import { LocalRouter, type AgentEventMessage, type Connection, type Router } from './router.js';
import { agentSessionKey, storedSessionKey } from './session-keys.js';
import { silentLogger, type Logger } from '../shared/logger.js';
import { noObserver, type BridgeObserver, type EventEnd, type EventStart } from './observer.js';
import { RateLimiter, type EventRateLimit } from './rate-limit.js';
import { SessionTable, type SessionRecord } from './sessions.js';
import { BurstLog, LOG_WINDOW_MS } from './burst-log.js';
import {
  ConnectionBounds,
  DEFAULT_CONNECTION_LIMITS,
  type ConnectionBound,
  type ConnectionLimits,
} from './connection-bounds.js';
import { endpointOf, identify, type ConnectionFacts, type HandshakeRefusalCode } from './handshake.js';
import type { ConnectionHandlers, Socket } from './transport.js';
import { ByteBounds, type ByteBoundCounters } from './byte-bounds.js';
import { Heartbeats, type DeadReason, type Liveness } from './liveness.js';
import type { Owner, SharedBounds } from './held-bytes.js';
import type { LiveClient } from './live-picture.js';
import { ByteBudget, StreamedText, type NotKept } from './streamed-text.js';
import { ResumeStore, type KeptStream, type ResumeBounds, type ResumeStats } from './resume-store.js';
import { newResumeToken, unknownResume } from './resume.js';
import { ResumeDesk } from './resume-desk.js';
import { DEFAULT_FAIR_SHARES, FairShares, type FairShareLimits, type FairShareStats } from './fair-share.js';

export interface BridgeOptions {
  directory: Directory;
  router?: Router;
  clock?: Clock;
  log?: Logger;
  /** AGENT_TIMEOUT after this long without a reply (default LIMITS.agentTimeoutMs). */
  agentTimeoutMs?: number;
  /** Events of a disconnected agent wait this long for it to come back (default LIMITS.agentReconnectGraceMs). */
  agentReconnectGraceMs?: number;
  /** A connection on which nothing arrives for this long is closed (default LIMITS.idleCloseMs). */
  idleCloseMs?: number;
  /** Per-app event rate limit (default: off); on several nodes an answer may take a round trip (EventRateLimit). */
  rateLimiter?: EventRateLimit;
  /** The live sessions (default: a fresh table). */
  sessions?: SessionTable;
  /** Told about every event's start and end and every session opened (event log, metrics, persistence). */
  observer?: BridgeObserver;
  /** Events in flight one app may have, all its connections together (default LIMITS.eventsInFlightPerAppMax). */
  maxEventsInFlightPerApp?: number;
  /** Events in flight one agent may have (default LIMITS.eventsInFlightPerAgentMax). */
  maxEventsInFlightPerAgent?: number;
  /** Events in flight on this node, every app's together (default LIMITS.eventsInFlightMax; L23). */
  maxEventsInFlight?: number;
  /** Bytes of payloads this node holds for its events in flight (default LIMITS.eventPayloadsMaxBytes; L23). */
  eventPayloadsMaxBytes?: number;
  /** Streamed text kept per event for an empty-content reply (default LIMITS.streamedTextMaxBytes). */
  streamedTextMaxBytes?: number;
  /** Memory the kept texts of one agent's events may hold together (default LIMITS.streamedTextPerAgentMaxBytes). */
  streamedTextPerAgentMaxBytes?: number;
  /** Memory the kept texts of all this node's events may hold together (default LIMITS.streamedTextTotalMaxBytes; L23). */
  streamedTextTotalMaxBytes?: number;
  /** Bounds on live connections (L18; default from LIMITS). */
  connectionLimits?: ConnectionLimits;
  /** Unread bytes a connection may have queued before it is closed with SLOW_CONSUMER (W17; default LIMITS). */
  sendBufferMaxBytes?: number;
  /** Unread bytes of all the connections of an app, of an agent, of the node (L19; default LIMITS). */
  sendBufferBounds?: Partial<SharedBounds>;
  /** Bytes of messages received in part, the same sums (L20; default LIMITS). */
  partialMessageBounds?: Partial<SharedBounds>;
  /** How long a message may take to arrive whole (L20; default LIMITS.partialMessageTimeoutMs). */
  partialMessageTimeoutMs?: number;
  /** A WebSocket ping to a connection silent this long, 0 never (L22; default LIMITS.wsPingAfterMs). */
  wsPingAfterMs?: number;
  /** How long the pong may take (L22; default LIMITS.wsPongTimeoutMs). */
  wsPongTimeoutMs?: number;
  /** How long a resumable event is kept after its end (R7; default LIMITS.resumeWindowMs). */
  resumeWindowMs?: number;
  /** Bytes kept for resumes of one app's events (R7; default LIMITS.resumeBufferPerAppMaxBytes). */
  resumeBufferPerAppMaxBytes?: number;
  /** Bytes kept for resumes on this node (R7; default LIMITS.resumeBufferMaxBytes). */
  resumeBufferMaxBytes?: number;
  /** Each organization's share of fragments, discovers, resumes and replayed bytes (F3, R10; default from LIMITS). */
  fairShares?: FairShareLimits;
}

/** What the bounds of L13-L16 have done since start, for metrics (read when scraped, like tokensForwarded). */
export interface LimitCounters {
  /** Events refused with TOO_MANY_EVENTS, by the bound that refused them (L13, L23). */
  eventsRefused: Record<InFlightBound, number>;
  /** Events whose kept streamed text was discarded, by why (L14, L15). */
  textDiscarded: Record<NotKept | 'app_gone', number>;
  /** Agent replies refused with REPLY_TOO_LARGE (L14, L16). */
  repliesRefused: Record<ReplyRefusal, number>;
  /** Handshakes refused, by code (W1, L18). */
  handshakesRefused: Record<HandshakeRefusalCode, number>;
  /** Handshakes refused with TOO_MANY_CONNECTIONS, by the bound that refused them (L18). */
  connectionsRefused: Record<ConnectionBound, number>;
  /** Connections closed with SLOW_CONSUMER, by the sum that was over (W17, L19). */
  slowConsumers: ByteBoundCounters['slowConsumers'];
  /** Connections closed with INCOMPLETE_MESSAGE, by the sum that was over, or `timeout` (L20). */
  incompleteMessages: ByteBoundCounters['incompleteMessages'];
  /** Connections closed already and destroyed, still holding the most of a sum over its bound (L19, L20). */
  destroyed: ByteBoundCounters['destroyed'];
  /** Connections closed with HEARTBEAT_TIMEOUT, by why (L7, L22). */
  heartbeatTimeouts: Record<DeadReason, number>;
}

/** Writes a frame to the agent an event belongs to: its socket on this node, or through the router. */
type AgentAnswer = (frame: string) => void;

/** too_large: the text or the whole frame is over its limit; text_not_kept: empty content after a discarded stream. */
export type ReplyRefusal = 'too_large' | 'text_not_kept';

export interface Bridge {
  /**
   * A socket whose WebSocket handshake on an endpoint (see `endpointOf`) has just completed: identified from the
   * raw facts, then opened or refused (one `error`, then the close). The transport calls the handlers returned.
   */
  connect(socket: Socket, facts: ConnectionFacts): ConnectionHandlers;
  /**
   * A socket already known to be `principal`: opened, or refused when over a bound (L18). `resumable`: an app
   * connection opened with ?resume=1 (R1).
   */
  open(socket: Socket, principal: Principal, address?: string, resumable?: boolean): ConnectionHandlers;
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
}

/** Why an app or agent was revoked, as its clients read it in the error text. */
export type RevokeCause = 'deactivated' | 'deleted with its organization';

interface Client {
  conn: Connection;
  principal: Principal;
  address: string | undefined;
  connectedAt: number;
  lastPingAt: number | null;
  liveness: Liveness;
  /** Dropped (closed, refused, replaced) or shut down: its socket's last frames and timers are not heard. */
  gone: boolean;
  /**
   * Waiting for an answer the frame in hand needs (the shared rate limit, on several nodes): the socket is
   * paused and the frames it had already read wait in `backlog`, so that every answer keeps its frame's order.
   */
  paused: boolean;
  backlog: { data: string; isBinary: boolean }[];
  socket: Socket;
  /** Opened with ?resume=1 (R1): its events are kept for a resume, and it may resume. */
  resumable: boolean;
}

interface InFlight {
  eventId: string;
  app: AppRecord;
  appConn: Connection;
  agentId: string;
  threadId: string;
  sessionKey: string;
  /** The payload's compact JSON, echoed in the reply: from 1 KiB on, as bytes outside the JS heap (L13). */
  payload: string | Buffer;
  receivedAt: number;
  /** `receivedAt` on the monotonic clock: latency_ms is measured from it (W10), whatever the wall clock does. */
  startedAt: number;
  /** The fragments forwarded so far, for an empty-content reply (W10); null once discarded (L14, L15). */
  text: StreamedText | null;
  fragmentCount: number;
  /** Made at the first fragment: most events in a burst of short ones never stream. */
  tokenPrefix: string | undefined;
  timeout: Timer;
  /** What is kept for a resume, when it was sent on a resumable connection (R7). */
  kept: KeptStream | undefined;
}

const truncate = (value: unknown, max: number): string | null =>
  typeof value === 'string' ? [...value].slice(0, max).join('') : null;

const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8');
/** Whether `text` is at most `max` UTF-8 bytes; a UTF-16 unit is at most 3 bytes, so short texts are not measured. */
const fitsBytes = (text: string, max: number) => text.length * 3 <= max || utf8Length(text) <= max;
/**
 * Payloads from this size on are kept as bytes (their own ArrayBuffer, off the V8 heap) while their event is in
 * flight; smaller ones as strings, where a buffer's fixed cost would outweigh them.
 */
const OFF_HEAP_PAYLOAD_BYTES = 1024;

/** The bounds on events in flight (L13, L23): the label of bridge_events_refused_total. */
type InFlightBound = 'app' | 'agent' | 'total' | 'payloads';

/**
 * What a payload holds (L23): its bytes when kept as bytes; kept as a string (under OFF_HEAP_PAYLOAD_BYTES), two
 * bytes a character, what V8 takes at most. `length`: the bytes of a Buffer, the UTF-8 bytes of the JSON otherwise.
 */
function heldBytes(payload: string | Buffer, bytes: number): number {
  if (typeof payload !== 'string') return payload.length;
  return bytes < OFF_HEAP_PAYLOAD_BYTES ? payload.length * 2 : bytes;
}

function holdPayload(json: string, bytes: number): string | Buffer {
  if (bytes < OFF_HEAP_PAYLOAD_BYTES) return json;
  const held = Buffer.allocUnsafeSlow(bytes); // not Buffer.from: a pooled slice would pin Node's whole 8 KB pool
  held.write(json, 0, 'utf8');
  return held;
}

export function makeBridge(options: BridgeOptions): Bridge {
  const { directory } = options;
  const router: Router = options.router ?? new LocalRouter();
  const clock = options.clock ?? systemClock;
  const log = options.log ?? silentLogger;
  const agentTimeoutMs = options.agentTimeoutMs ?? LIMITS.agentTimeoutMs;
  const graceMs = options.agentReconnectGraceMs ?? LIMITS.agentReconnectGraceMs;
  const idleCloseMs = options.idleCloseMs ?? LIMITS.idleCloseMs;
  const newEventId = eventIdFactory(clock, router.eventIdSuffix);
  const rateLimiter = options.rateLimiter ?? new RateLimiter(0, 0);
  const sessions = options.sessions ?? new SessionTable();
  const observer = options.observer ?? noObserver;
  const maxPerApp = options.maxEventsInFlightPerApp ?? LIMITS.eventsInFlightPerAppMax;
  const maxPerAgent = options.maxEventsInFlightPerAgent ?? LIMITS.eventsInFlightPerAgentMax;
  const maxInFlight = options.maxEventsInFlight ?? LIMITS.eventsInFlightMax;
  const payloadsMaxBytes = options.eventPayloadsMaxBytes ?? LIMITS.eventPayloadsMaxBytes;
  const textMaxBytes = options.streamedTextMaxBytes ?? LIMITS.streamedTextMaxBytes;
  const textPerAgentMaxBytes = options.streamedTextPerAgentMaxBytes ?? LIMITS.streamedTextPerAgentMaxBytes;
  const textTotalMaxBytes = options.streamedTextTotalMaxBytes ?? LIMITS.streamedTextTotalMaxBytes;
  const byteBounds = new ByteBounds({
    clock,
    log,
    sendBufferMaxBytes: options.sendBufferMaxBytes ?? LIMITS.sendBufferMaxBytes,
    send: {
      app: LIMITS.sendBufferPerAppMaxBytes,
      agent: LIMITS.sendBufferPerAgentMaxBytes,
      total: LIMITS.sendBufferTotalMaxBytes,
      ...options.sendBufferBounds,
    },
    partial: {
      app: LIMITS.partialMessagesPerAppMaxBytes,
      agent: LIMITS.partialMessagesPerAgentMaxBytes,
      total: LIMITS.partialMessagesTotalMaxBytes,
      ...options.partialMessageBounds,
    },
    partialTimeoutMs: options.partialMessageTimeoutMs ?? LIMITS.partialMessageTimeoutMs,
    refuse: (conn, code, error) => refuse(conn, code, error),
  });
  const heartbeats = new Heartbeats({
    clock,
    log,
    idleCloseMs,
    pingAfterMs: options.wsPingAfterMs ?? LIMITS.wsPingAfterMs,
    pongTimeoutMs: options.wsPongTimeoutMs ?? LIMITS.wsPongTimeoutMs,
  });
  const resumeBounds: ResumeBounds = {
    windowMs: options.resumeWindowMs ?? LIMITS.resumeWindowMs,
    eventMaxBytes: textMaxBytes,
    appMaxBytes: options.resumeBufferPerAppMaxBytes ?? LIMITS.resumeBufferPerAppMaxBytes,
    nodeMaxBytes: options.resumeBufferMaxBytes ?? LIMITS.resumeBufferMaxBytes,
  };
  const resumes = new ResumeStore(resumeBounds, clock, log);
  const shares = new FairShares(options.fairShares ?? DEFAULT_FAIR_SHARES, clock, log);
  const desk = new ResumeDesk({
    shares,
    store: resumes,
    bounds: resumeBounds,
    router,
    clock,
    host: {
      plainInFlight(eventId) {
        const ev = events.get(eventId);
        return ev && !ev.kept ? { appId: ev.app.app_id } : undefined;
      },
      holdBy(eventId, conn, ifHeldBy) {
        const ev = events.get(eventId);
        if (!ev?.kept || (ifHeldBy && ev.appConn !== ifHeldBy)) return undefined;
        const previous = ev.appConn;
        holdBy(ev, conn);
        return previous;
      },
      orgOf: (appId) => directory.apps.get(appId)?.org_id,
    },
  });
  let tokensForwarded = 0;
  const counters: Omit<LimitCounters, keyof ByteBoundCounters | 'heartbeatTimeouts'> = {
    eventsRefused: { app: 0, agent: 0, total: 0, payloads: 0 },
    textDiscarded: { event_limit: 0, agent_limit: 0, node_limit: 0, app_gone: 0 },
    repliesRefused: { too_large: 0, text_not_kept: 0 },
    handshakesRefused: { UNAUTHORIZED: 0, TOKEN_REVOKED: 0, FORBIDDEN: 0, TOO_MANY_CONNECTIONS: 0 },
    connectionsRefused: { total: 0, address: 0, app: 0 },
  };
  const bounds = new ConnectionBounds(options.connectionLimits ?? DEFAULT_CONNECTION_LIMITS);
  // A client can make these happen as often as it likes: logged a burst at a time, each one counted.
  const refusedLog = new BurstLog<HandshakeRefusalCode>({
    clock,
    windowMs: LOG_WINDOW_MS,
    report: (counts, refused) =>
      log.info({ refused, codes: Object.fromEntries(counts) }, `handshakes refused: ${refused}`),
  });
  // An app that goes with 1000 events in flight lets go of 1000 texts at once: one line, not 1000.
  const discardedLog = new BurstLog<NotKept | 'app_gone'>({
    clock,
    windowMs: LOG_WINDOW_MS,
    report: (reasons, events) =>
      log.info({ events, reasons: Object.fromEntries(reasons) }, `streamed text no longer kept: ${events} event(s)`),
  });
  const evictedLog = new BurstLog<string>({
    clock,
    windowMs: LOG_WINDOW_MS,
    report: (byApp, evicted) =>
      log.info(
        { evicted, apps: Object.fromEntries(byApp) },
        `sessions evicted (apps over their session bound): ${evicted}`,
      ),
  });

  const clients = new Map<Connection, Client>();
  const events = new Map<string, InFlight>();
  const eventsByAgent = new Map<string, Set<string>>();
  /** Per app, its events in flight (L13); per app connection, the events it sent (to let go of their text, L15). */
  const inFlightByApp = new Map<string, number>();
  const eventsByConn = new Map<Connection, Set<InFlight>>();
  /** Per agent with events in flight, the memory its events' kept texts share (L14). */
  const textBudgets = new Map<string, ByteBudget>();
  /** Every agent's budget takes from it too: the kept texts of the whole node (L23). */
  const textBudgetOfNode = new ByteBudget(textTotalMaxBytes, 'node_limit');
  /** Bytes the payloads of the events in flight hold (L23). */
  let payloadBytesHeld = 0;
  const offlineGrace = new Map<string, Timer>();

  // ---- connections -------------------------------------------------------------------------------------

  function connect(socket: Socket, facts: ConnectionFacts): ConnectionHandlers {
    const kind = endpointOf(facts.path);
    if (!kind) throw new Error(`not a WebSocket endpoint: ${facts.path}`); // the transport answers 404 before upgrading
    const who = identify(directory, kind, facts, clock.now());
    if (!who.ok) return refuseHandshake(socket, kind, who.code, who.error);
    return open(socket, who.principal, facts.address, kind === 'app' && facts.resumable === true);
  }

  /**
   * A handshake refused before the connection is a client: its error frame is of the endpoint it came to. Until
   * its socket is gone, what it sends of a message still counts in the node's bound (L20).
   */
  function refuseHandshake(
    socket: Socket,
    endpoint: ClientKind,
    code: HandshakeRefusalCode,
    error: string,
  ): ConnectionHandlers {
    counters.handshakesRefused[code]++;
    refusedLog.record(code);
    socket.send(endpoint === 'agent' ? frames.agentError(code, error) : frames.appError(code, error));
    socket.close(ERRORS[code].closeCode, code);
    const tracked = byteBounds.track(socket, undefined);
    return { message() {}, closed: tracked.gone, partial: tracked.partial };
  }

  const ownerOf = (p: Principal): Owner =>
    p.kind === 'app' ? { kind: 'app', id: p.app.app_id } : { kind: 'agent', id: p.agent.agent_id };

  function open(socket: Socket, principal: Principal, address?: string, resumable = false): ConnectionHandlers {
    const over = bounds.check(principal, address);
    if (over) {
      counters.connectionsRefused[over.bound]++;
      return refuseHandshake(socket, principal.kind, 'TOO_MANY_CONNECTIONS', over.error);
    }
    const firstOfApp = principal.kind === 'app' && !bounds.hasApp(principal.app.app_id);
    bounds.add(principal, address);
    socket.accepted?.();
    if (firstOfApp) router.appPresence(principal.app.app_id, true);
    // What the rest of the core writes to: the socket's sends within the bounds of W17 and L19.
    const tracked = byteBounds.track(socket, ownerOf(principal));
    const { conn } = tracked;
    const now = clock.now();
    const liveness = heartbeats.watch(socket, (text) => refuse(conn, 'HEARTBEAT_TIMEOUT', text));
    const client: Client = {
      conn,
      principal,
      address,
      connectedAt: now,
      lastPingAt: null,
      liveness,
      gone: false,
      paused: false,
      backlog: [],
      socket,
      resumable,
    };
    clients.set(conn, client);
    log.debug({ conn: conn.id, endpoint: principal.kind, address }, 'connection open');
    if (principal.kind === 'agent') attachAgent(conn, principal.agent.agent_id);
    return {
      message: (data, isBinary) => receive(client, data, isBinary),
      closed: () => {
        tracked.gone();
        drop(client);
      },
      partial: tracked.partial,
      pong: () => client.liveness.pong(),
    };
  }

  function attachAgent(conn: Connection, agentId: string): void {
    const replaced = router.attachAgent(agentId, conn);
    agentBack(agentId);
    if (replaced) {
      log.info({ agent_id: agentId }, 'agent connection replaced by a newer one');
      refuse(replaced, 'CONNECTION_REPLACED', errorText('CONNECTION_REPLACED', 'replaced'));
    }
  }

  /** The one way a client stops being one, whoever ended it (its socket, a refusal, a revocation): once. */
  function drop(client: Client): void {
    if (client.gone) return;
    client.gone = true;
    client.backlog = [];
    const { conn } = client;
    clients.delete(conn);
    client.liveness.stop();
    bounds.remove(client.principal, client.address);
    if (client.principal.kind === 'app') {
      const appId = client.principal.app.app_id;
      if (!bounds.hasApp(appId)) router.appPresence(appId, false);
      // Nobody can receive these events' text any more (L15); they go on until their agent answers. A resumable
      // event's text stays: a resume may still need the reply it builds (R7).
      for (const ev of eventsByConn.get(conn) ?? []) if (!ev.kept) discardText(ev, 'app_gone');
      eventsByConn.delete(conn);
      desk.connectionGone(conn);
      return;
    }
    const agentId = client.principal.agent.agent_id;
    if (router.detachAgent(agentId, conn)) agentLeft(agentId);
  }

  /** The agent's connection is gone, here or on another node: its events held here wait `graceMs` for it (L6). */
  function agentLeft(agentId: string): void {
    if (!eventsByAgent.get(agentId)?.size) return;
    offlineGrace.get(agentId)?.cancel();
    offlineGrace.set(
      agentId,
      clock.setTimer(graceMs, () => {
        offlineGrace.delete(agentId);
        if (!router.isAgentOnline(agentId))
          failEventsOf(agentId, errorText('AGENT_OFFLINE', 'dropped', { agent_id: agentId, seconds: graceMs / 1000 }));
      }),
    );
  }

  function agentBack(agentId: string): void {
    offlineGrace.get(agentId)?.cancel();
    offlineGrace.delete(agentId);
  }

  /** Ends a client's connection with a connection error: one `error`, then the code's close code. */
  function refuse(conn: Connection, code: ErrorCode, error: string): void {
    const client = clients.get(conn);
    const toAgent = client?.principal.kind === 'agent';
    conn.send(toAgent ? frames.agentError(code, error) : frames.appError(code, error));
    const closeCode = ERRORS[code].closeCode ?? CLOSE_CODES.INTERNAL_ERROR;
    conn.close(closeCode, code);
    if (client) drop(client);
  }

  function receive(client: Client, data: string, isBinary: boolean): void {
    if (client.gone) return;
    client.liveness.message();
    if (client.paused) client.backlog.push({ data, isBinary });
    else handle(client, data, isBinary);
  }

  function handle(client: Client, data: string, isBinary: boolean): void {
    try {
      const waiting =
        client.principal.kind === 'app'
          ? fromApp(client, client.principal.app, data, isBinary)
          : fromAgent(client, client.principal.agent, data, isBinary);
      if (waiting) pauseFor(client, waiting);
    } catch (err) {
      failed(client, err);
    }
  }

  /** A bug must cost at most this connection, never the process or another client's data. */
  function failed(client: Client, err: unknown): void {
    log.error({ conn: client.conn.id, err }, 'frame handling failed');
    refuse(client.conn, 'INTERNAL_ERROR', errorText('INTERNAL_ERROR', 'frame'));
  }

  function pauseFor(client: Client, waiting: Promise<void>): void {
    client.paused = true;
    client.socket.pause?.();
    waiting.then(
      () => {
        client.paused = false;
        while (!client.paused && !client.gone && client.backlog.length) {
          const next = client.backlog.shift()!;
          handle(client, next.data, next.isBinary);
        }
        if (!client.paused) client.socket.resume?.();
      },
      (err) => failed(client, err),
    );
  }

  // ---- app side ----------------------------------------------------------------------------------------

  function fromApp(client: Client, app: AppRecord, data: string, isBinary: boolean): Promise<void> | void {
    const { conn } = client;
    const parsed = parseInbound(data, isBinary, validateAppToServiceMessage, 'AppToServiceMessage');
    if (!parsed.ok) {
      if (parsed.type === 'resume' && !client.resumable) return conn.send(unknownResume());
      if (parsed.type !== 'event') return conn.send(frames.appError(parsed.code, parsed.error));
      const { fields } = parsed;
      const payload = fields.payload;
      return rejectEvent(
        conn,
        parsed.code,
        parsed.error,
        {
          app_id: app.app_id,
          agent_id: truncate(fields.agent_id, LIMITS.idMaxChars) ?? '',
          thread_id: truncate(fields.thread_id, LIMITS.threadIdMaxChars),
          session_key: null,
          payload_bytes:
            payload && typeof payload === 'object' && !Array.isArray(payload) ? utf8Length(compactJson(payload)) : 0,
          received_at: clock.now(),
        },
        { agentId: validateAgentId(fields.agent_id) ? fields.agent_id : undefined },
      );
    }
    const message = parsed.message;
    switch (message.type) {
      case 'ping':
        client.lastPingAt = clock.now();
        return conn.send(frames.PONG);
      case 'discover': {
        const wait = shares.discover(app.org_id);
        if (wait) {
          const text = errorText('TOO_MANY_REQUESTS', 'discover', { org_id: app.org_id, seconds: wait });
          return conn.send(frames.appError('TOO_MANY_REQUESTS', text, { metadata: { retry_after_seconds: wait } }));
        }
        return conn.send(frames.agents(directory.usableBy(app)));
      }
      case 'event':
        return acceptEvent(conn, app, message);
      case 'resume':
        return client.resumable ? desk.resume(conn, app.app_id, message) : conn.send(unknownResume());
    }
  }

  /** The event's frames go to `conn` from now on (the old connection, if still open, gets nothing more of it). */
  function holdBy(ev: InFlight, conn: Connection): void {
    eventsByConn.get(ev.appConn)?.delete(ev);
    ev.appConn = conn;
    if (!clients.has(conn)) return;
    let ofConn = eventsByConn.get(conn);
    if (!ofConn) eventsByConn.set(conn, (ofConn = new Set()));
    ofConn.add(ev);
  }

  /** Whether a frame sent to `conn` can reach an app (a resumable event's connection may be gone meanwhile). */
  const reaches = (conn: Connection) => clients.has(conn) || desk.reaches(conn);

  /** Whether the event's end has anyone to go to: its app's connection, or a resume to come. */
  const heard = (ev: InFlight) => (ev.kept ? !ev.kept.gapped : clients.has(ev.appConn));

  function rejectEvent(
    conn: Connection,
    code: ErrorCode,
    error: string,
    start: Omit<EventStart, 'event_id'>,
    extra: { agentId?: string | undefined; metadata?: { retry_after_seconds: number }; admitted?: boolean } = {
      agentId: start.agent_id,
    },
  ): void {
    const event_id = newEventId();
    const { agentId, metadata } = extra;
    conn.send(
      frames.appError(code, error, {
        event_id,
        ...(agentId ? { agent_id: agentId } : {}),
        ...(metadata ? { metadata } : {}),
      }),
    );
    observer.eventRejected({ event_id, ...start }, code, extra.admitted ?? false);
  }

  /** Returns a promise when the rate limit's answer takes a round trip: the connection's next frames wait for it. */
  function acceptEvent(conn: Connection, app: AppRecord, message: EventMessage): Promise<void> | void {
    const receivedAt = clock.now();
    const startedAt = clock.monotonic();
    const payloadJson = compactJson(message.payload);
    const size = utf8Length(payloadJson);
    const start = {
      app_id: app.app_id,
      agent_id: message.agent_id,
      thread_id: message.thread_id,
      session_key: null,
      payload_bytes: size,
      received_at: receivedAt,
    };
    if (size > LIMITS.payloadMaxBytes) {
      return rejectEvent(
        conn,
        'PAYLOAD_TOO_LARGE',
        errorText('PAYLOAD_TOO_LARGE', 'too_large', { bytes: size, limit: LIMITS.payloadMaxBytes }),
        start,
      );
    }
    const wait = rateLimiter.take(app.app_id, startedAt);
    if (typeof wait === 'number') return admitEvent(conn, app, message, payloadJson, start, wait, startedAt);
    return wait.then((seconds) =>
      clients.has(conn) ? admitEvent(conn, app, message, payloadJson, start, seconds, startedAt) : undefined,
    ); // closed meanwhile: nobody to answer
  }

  function admitEvent(
    conn: Connection,
    app: AppRecord,
    message: EventMessage,
    payloadJson: string,
    start: Omit<EventStart, 'event_id'>,
    wait: number,
    startedAt: number,
  ): Promise<void> | void {
    const agentId = message.agent_id;
    if (wait > 0) {
      const retry = Math.ceil(wait * 1000) / 1000;
      return rejectEvent(
        conn,
        'RATE_LIMIT_EXCEEDED',
        errorText('RATE_LIMIT_EXCEEDED', 'too_fast', { app_id: app.app_id, seconds: retry }),
        start,
        { agentId, metadata: { retry_after_seconds: retry } },
      );
    }
    const agent = directory.agentFor(app, agentId);
    const admitted = { agentId, admitted: true };
    if (!agent)
      return rejectEvent(
        conn,
        'AGENT_NOT_FOUND',
        errorText('AGENT_NOT_FOUND', 'unknown', { agent_id: agentId }),
        start,
        admitted,
      );
    if (!directory.mayUse(app, agent)) {
      return rejectEvent(
        conn,
        'PERMISSION_DENIED',
        errorText('PERMISSION_DENIED', 'not_allowed', { app_id: app.app_id, agent_id: agentId }),
        start,
        admitted,
      );
    }
    const offline = () =>
      rejectEvent(
        conn,
        'AGENT_OFFLINE',
        errorText('AGENT_OFFLINE', 'not_connected', { agent_id: agentId }),
        start,
        admitted,
      );
    const located = router.locateAgent?.(agentId);
    if (!located)
      return router.isAgentOnline(agentId)
        ? deliverEvent(conn, app, agent, message, payloadJson, start, startedAt)
        : offline();
    return located.then((online) => {
      if (!clients.has(conn)) return;
      if (online) deliverEvent(conn, app, agent, message, payloadJson, start, startedAt);
      else offline();
    });
  }

  function deliverEvent(
    conn: Connection,
    app: AppRecord,
    agent: AgentRecord,
    message: EventMessage,
    payloadJson: string,
    start: Omit<EventStart, 'event_id'>,
    startedAt: number,
  ): void {
    const { agent_id: agentId, thread_id: threadId } = message;
    const { received_at: receivedAt, payload_bytes: size } = start;
    const admitted = { agentId, admitted: true };
    const tooMany = overInFlightBound(app.app_id, agentId, heldBytes(payloadJson, size));
    if (tooMany) {
      counters.eventsRefused[tooMany.bound]++;
      return rejectEvent(conn, 'TOO_MANY_EVENTS', tooMany.error, start, admitted);
    }

    const eventId = newEventId();
    const sessionKey = storedSessionKey(agentId, app.app_id, threadId);
    const resumeToken = clients.get(conn)?.resumable ? newResumeToken() : undefined;
    const ev: InFlight = {
      eventId,
      app,
      appConn: conn,
      agentId,
      threadId,
      sessionKey,
      payload: holdPayload(payloadJson, size),
      receivedAt,
      startedAt,
      text: null,
      fragmentCount: 0,
      tokenPrefix: undefined,
      timeout: clock.setTimer(agentTimeoutMs, () => {
        fail(
          ev,
          'AGENT_TIMEOUT',
          errorText('AGENT_TIMEOUT', 'no_answer', { agent_id: agentId, seconds: Math.round(agentTimeoutMs / 1000) }),
          'agent_timeout',
        );
      }),
      kept: resumeToken && resumes.open(eventId, app.app_id, agentId, resumeToken.hash),
    };
    track(ev);

    conn.send(frames.accepted(eventId, agentId, sessionKey, resumeToken?.token));
    router.toAgent(
      agentId,
      frames.eventToAgent(
        {
          event_id: eventId,
          app_id: app.app_id,
          thread_id: threadId,
          session_key: agentSessionKey(app.app_id, threadId),
        },
        payloadJson,
      ),
    );
    const opened = sessions.open(sessionKey, agentId, app.app_id, threadId, agent.ttl_days * DAY_MS, receivedAt);
    if (opened.evicted) evicted(opened.evicted);
    if (opened.change !== 'reused') observer.sessionOpened(opened.session, opened.change);
    observer.eventAccepted({ ...start, event_id: eventId, session_key: sessionKey });
  }

  /** Told before the session that took its place, so a store applies the two in order. */
  function evicted(session: SessionRecord): void {
    evictedLog.record(session.app_id);
    observer.sessionEvicted(session);
  }

  /** The bound of L13 (or the node's, L23) that refuses one more event, the app's first; none when all have room. */
  function overInFlightBound(
    appId: string,
    agentId: string,
    payloadBytes: number,
  ): { bound: InFlightBound; error: string } | undefined {
    const ofApp = inFlightByApp.get(appId) ?? 0;
    if (ofApp >= maxPerApp) {
      return { bound: 'app', error: errorText('TOO_MANY_EVENTS', 'app', { app_id: appId, count: ofApp }) };
    }
    const ofAgent = eventsByAgent.get(agentId)?.size ?? 0;
    if (ofAgent >= maxPerAgent) {
      return { bound: 'agent', error: errorText('TOO_MANY_EVENTS', 'agent', { agent_id: agentId, count: ofAgent }) };
    }
    if (events.size >= maxInFlight)
      return { bound: 'total', error: errorText('TOO_MANY_EVENTS', 'total', { count: events.size }) };
    if (payloadBytesHeld + payloadBytes > payloadsMaxBytes) {
      return { bound: 'payloads', error: errorText('TOO_MANY_EVENTS', 'payloads', { bytes: payloadBytesHeld }) };
    }
    return undefined;
  }

  /** Files an accepted event under its app, its app connection and its agent (undone by `untrack`). */
  function track(ev: InFlight): void {
    events.set(ev.eventId, ev);
    payloadBytesHeld += heldBytes(ev.payload, ev.payload.length);
    inFlightByApp.set(ev.app.app_id, (inFlightByApp.get(ev.app.app_id) ?? 0) + 1);
    let ofConn = eventsByConn.get(ev.appConn);
    if (!ofConn) eventsByConn.set(ev.appConn, (ofConn = new Set()));
    ofConn.add(ev);
    let own = eventsByAgent.get(ev.agentId);
    if (!own) eventsByAgent.set(ev.agentId, (own = new Set()));
    own.add(ev.eventId);
    let budget = textBudgets.get(ev.agentId);
    if (!budget)
      textBudgets.set(ev.agentId, (budget = new ByteBudget(textPerAgentMaxBytes, 'agent_limit', textBudgetOfNode)));
    ev.text = new StreamedText(budget, textMaxBytes);
  }

  function untrack(ev: InFlight): void {
    events.delete(ev.eventId);
    payloadBytesHeld -= heldBytes(ev.payload, ev.payload.length);
    const ofApp = (inFlightByApp.get(ev.app.app_id) ?? 1) - 1;
    if (ofApp > 0) inFlightByApp.set(ev.app.app_id, ofApp);
    else inFlightByApp.delete(ev.app.app_id);
    eventsByConn.get(ev.appConn)?.delete(ev);
    ev.text?.release();
    ev.text = null;
    const own = eventsByAgent.get(ev.agentId);
    own?.delete(ev.eventId);
    if (own && own.size === 0) {
      eventsByAgent.delete(ev.agentId);
      textBudgets.delete(ev.agentId); // every text of the agent has been released: its budget is back at 0
    }
  }

  // ---- agent side --------------------------------------------------------------------------------------

  /** Returns a promise when the agent's organization is over its share of fragments (F3): its socket waits for it. */
  function fromAgent(client: Client, agent: AgentRecord, data: string, isBinary: boolean): Promise<void> | void {
    const { conn } = client;
    const parsed = parseInbound(data, isBinary, validateAgentToServiceMessage, 'AgentToServiceMessage');
    if (!parsed.ok) {
      const eventId = validateEventId(parsed.fields.event_id) ? parsed.fields.event_id : undefined;
      return conn.send(frames.agentError(parsed.code, parsed.error, eventId));
    }
    const message = parsed.message;
    if (message.type === 'ping') {
      client.lastPingAt = clock.now();
      return conn.send(frames.PONG);
    }
    // Taken, never dropped: over the share the fragment goes on and the agent's next frames wait.
    const pause = message.type === 'token' ? shares.fragment(agent.org_id) : 0;
    if (events.has(message.event_id) || !router.toEventHome(agent.agent_id, message))
      agentMessage(agent.agent_id, message, (frame) => conn.send(frame));
    if (pause) return new Promise((resolve) => clock.setTimer(pause, resolve));
  }

  /** An agent's message about an event, on the node the event lives on; `answer` reaches the agent wherever it is. */
  function agentMessage(agentId: string, message: AgentEventMessage, answer: AgentAnswer): void {
    const ev = events.get(message.event_id);
    if (!ev || ev.agentId !== agentId) {
      return answer(
        frames.agentError(
          'INVALID_EVENT_ID',
          errorText('INVALID_EVENT_ID', 'unknown', { event_id: message.event_id }),
          message.event_id,
        ),
      );
    }
    switch (message.type) {
      case 'token':
        return forwardToken(answer, ev, message);
      case 'reply':
        return finishWithReply(answer, ev, message);
      case 'error':
        return finishWithAgentError(ev, message);
    }
  }

  /** What other nodes hand this one: an agent's message for an event held here, the agent's comings and goings. */
  router.listen({
    agentMessage(agentId, message) {
      try {
        agentMessage(agentId, message, (frame) => router.toAgent(agentId, frame));
      } catch (err) {
        log.error({ agent_id: agentId, event_id: message.event_id, err }, 'agent message from another node failed');
      }
    },
    agentPresence: (agentId, online) => (online ? agentBack(agentId) : agentLeft(agentId)),
    agentReplaced(agentId, conn) {
      if (!clients.has(conn)) return;
      log.info({ agent_id: agentId }, 'agent connection replaced by a newer one on another node');
      refuse(conn, 'CONNECTION_REPLACED', errorText('CONNECTION_REPLACED', 'replaced'));
    },
    agentsCutOff(agentIds) {
      for (const agentId of agentIds)
        failEventsOf(agentId, errorText('AGENT_OFFLINE', 'cut_off', { agent_id: agentId }));
    },
    resumeRequest: (from, request, connId) =>
      fromNode('resume from another node', request.event_id, () => desk.resumeRequest(from, request, connId)),
    framesForApp: (from, connId, eventId, sent) =>
      fromNode('resumed frames from another node', eventId, () => desk.framesForApp(from, connId, eventId, sent)),
    resumerGone: (from, connId, eventId) =>
      fromNode('resumer gone on another node', eventId, () => desk.resumerGone(from, connId, eventId)),
  });

  /** What another node hands this one: a bug costs that message, never the bus's other listeners. */
  function fromNode(what: string, eventId: string, handle: () => void): void {
    try {
      handle();
    } catch (err) {
      log.error({ event_id: eventId, err }, `${what} failed`);
    }
  }

  function forwardToken(answer: AgentAnswer, ev: InFlight, message: AgentTokenMessage): void {
    const size = utf8Length(message.token);
    if (size > LIMITS.tokenFragmentMaxBytes) {
      return answer(
        frames.agentError(
          'MESSAGE_TOO_LARGE',
          errorText('MESSAGE_TOO_LARGE', 'fragment', { bytes: size, limit: LIMITS.tokenFragmentMaxBytes }),
          ev.eventId,
        ),
      );
    }
    if (ev.kept) return forwardKept(ev, ev.kept, message.token, size);
    if (!clients.has(ev.appConn)) return; // the app is gone: nothing to forward, nothing to keep (L15)
    ev.fragmentCount++;
    keepText(ev, message.token, size);
    tokensForwarded++;
    ev.tokenPrefix ??= frames.tokenPrefix(ev.eventId, ev.agentId);
    ev.appConn.send(frames.tokenFrame(ev.tokenPrefix, message.token));
  }

  /** A resumable event's fragment: numbered and kept whether or not its connection is there to receive it (R3, R7). */
  function forwardKept(ev: InFlight, stream: KeptStream, fragment: string, size: number): void {
    ev.fragmentCount++;
    keepText(ev, fragment, size);
    const json = JSON.stringify(fragment);
    const seq = resumes.keepFragment(stream, json);
    if (!reaches(ev.appConn)) return;
    tokensForwarded++;
    ev.tokenPrefix ??= frames.tokenPrefix(ev.eventId, ev.agentId);
    ev.appConn.send(frames.seqTokenFrame(ev.tokenPrefix, json, seq));
  }

  /** Adds a forwarded fragment to the event's kept text; a fragment over a bound discards the whole text (L14). */
  function keepText(ev: InFlight, fragment: string, size: number): void {
    const notKept = ev.text?.append(fragment, size);
    if (notKept) discardText(ev, notKept);
  }

  /** The event's kept text is let go for good: its reply then needs `content` (L14, L15). Logged a burst at a time. */
  function discardText(ev: InFlight, reason: NotKept | 'app_gone'): void {
    if (!ev.text) return;
    ev.text.release();
    ev.text = null;
    counters.textDiscarded[reason]++;
    discardedLog.record(reason);
  }

  /**
   * The agent's reply, checked in the order of L16: its content's size (whatever became of the app), then whether
   * the app is still there to receive it, then the streamed text it stands for, then the whole frame.
   */
  function finishWithReply(answer: AgentAnswer, ev: InFlight, message: AgentReplyMessage): void {
    if (message.content !== '') {
      const replyJson = JSON.stringify(message.content);
      if (!fitsReplyText(answer, ev, replyJson)) return;
      return heard(ev) ? sendReply(answer, ev, message, replyJson) : endUnheard(ev, message);
    }
    if (!heard(ev)) return endUnheard(ev, message);
    if (!ev.text) {
      const why = errorText('REPLY_TOO_LARGE', 'text_not_kept', {
        event_limit: textMaxBytes,
        agent_limit: textPerAgentMaxBytes,
        node_limit: textTotalMaxBytes,
      });
      return refuseReply(answer, ev, 'text_not_kept', why);
    }
    const replyJson = JSON.stringify(ev.text.text());
    if (fitsReplyText(answer, ev, replyJson)) sendReply(answer, ev, message, replyJson);
  }

  /** The text as the app's frame carries it, without the quotes, against replyContentMaxBytes; refused if over. */
  function fitsReplyText(answer: AgentAnswer, ev: InFlight, replyJson: string): boolean {
    if (fitsBytes(replyJson, LIMITS.replyContentMaxBytes + 2)) return true;
    const bytes = utf8Length(replyJson) - 2;
    refuseReply(
      answer,
      ev,
      'too_large',
      errorText('REPLY_TOO_LARGE', 'text_too_large', { bytes, limit: LIMITS.replyContentMaxBytes }),
    );
    return false;
  }

  function sendReply(answer: AgentAnswer, ev: InFlight, message: AgentReplyMessage, replyJson: string): void {
    const now = clock.now();
    const tokensUsed = message.metadata?.tokens_used ?? ev.fragmentCount;
    const metadata = {
      tokens_used: tokensUsed,
      model: message.metadata?.model ?? 'unknown',
      latency_ms: latencyOf(ev),
      session_key: ev.sessionKey,
    };
    const frame = frames.reply(
      { event_id: ev.eventId, agent_id: ev.agentId, thread_id: ev.threadId },
      replyJson,
      ev.payload.toString(),
      metadata,
    );
    // Within replyContentMaxBytes only an outsized metadata.model can still push the frame over (L16).
    if (!fitsBytes(frame, LIMITS.frameMaxBytes)) {
      return refuseReply(
        answer,
        ev,
        'too_large',
        errorText('REPLY_TOO_LARGE', 'frame_too_large', { bytes: utf8Length(frame), limit: LIMITS.frameMaxBytes }),
      );
    }
    end(ev, { outcome: 'replied', code: null, tokens_used: tokensUsed, completed_at: now });
    deliverFinal(ev, frame);
  }

  /** The reply or error that ends an event, to its connection; a resumable event's is kept for the window (R7). */
  function deliverFinal(ev: InFlight, frame: string): void {
    if (!ev.kept) return ev.appConn.send(frame);
    resumes.keepFinal(ev.kept, frame);
    if (reaches(ev.appConn)) ev.appConn.send(frame);
    desk.released(ev.appConn);
  }

  /** The reply of an event whose app is gone ends it as usual, without building a frame nobody can receive (L15). */
  function endUnheard(ev: InFlight, message: AgentReplyMessage): void {
    end(ev, {
      outcome: 'replied',
      code: null,
      tokens_used: message.metadata?.tokens_used ?? ev.fragmentCount,
      completed_at: clock.now(),
    });
  }

  /** REPLY_TOO_LARGE: the agent learns it in answer to its reply, the app in place of the reply; the event ends. */
  function refuseReply(answer: AgentAnswer, ev: InFlight, reason: ReplyRefusal, why: string): void {
    counters.repliesRefused[reason]++;
    log.info({ event_id: ev.eventId, agent_id: ev.agentId, reason }, 'reply refused: too large for one frame');
    answer(frames.agentError('REPLY_TOO_LARGE', errorText('REPLY_TOO_LARGE', 'to_agent', { why }), ev.eventId));
    fail(ev, 'REPLY_TOO_LARGE', errorText('REPLY_TOO_LARGE', 'to_app', { why }), 'agent_error');
  }

  function finishWithAgentError(ev: InFlight, message: AgentErrorMessage): void {
    if (message.code === 'AGENT_TIMEOUT') fail(ev, 'AGENT_TIMEOUT', message.error, 'agent_timeout');
    else fail(ev, 'AGENT_ERROR', message.error, 'agent_error');
  }

  // ---- endings -----------------------------------------------------------------------------------------

  function end(ev: InFlight, how: Omit<EventEnd, 'event_id' | 'latency_ms'>): void {
    ev.timeout.cancel();
    untrack(ev);
    // A wall clock stepped back meanwhile must not end an event before it began.
    observer.eventEnded({
      event_id: ev.eventId,
      ...how,
      completed_at: Math.max(how.completed_at, ev.receivedAt),
      latency_ms: latencyOf(ev),
    });
  }

  /** Milliseconds since the event was received, on the monotonic clock (W10). */
  function latencyOf(ev: InFlight): number {
    return Math.round(clock.monotonic() - ev.startedAt);
  }

  function fail(ev: InFlight, code: ErrorCode, error: string, outcome: EventEnd['outcome']): void {
    end(ev, { outcome, code, tokens_used: null, completed_at: clock.now() });
    deliverFinal(ev, frames.appError(code, error, { event_id: ev.eventId, agent_id: ev.agentId }));
  }

  function closeWhere(match: (client: Client) => boolean, code: ErrorCode, error: string): void {
    for (const client of [...clients.values()]) if (match(client)) refuse(client.conn, code, error);
  }

  function expireToken(hash: Buffer): void {
    closeWhere((c) => c.principal.token.hash.equals(hash), 'UNAUTHORIZED', errorText('UNAUTHORIZED', 'grace_ended'));
  }

  function revoke(kind: ClientKind, id: string, cause: RevokeCause = 'deactivated'): void {
    const owns = (c: Client) =>
      c.principal.kind === kind &&
      (c.principal.kind === 'app' ? c.principal.app.app_id : c.principal.agent.agent_id) === id;
    closeWhere(owns, 'TOKEN_REVOKED', errorText('TOKEN_REVOKED', 'live', { kind, cause }));
    if (kind !== 'agent') return;
    offlineGrace.get(id)?.cancel();
    offlineGrace.delete(id);
    failEventsOf(id, errorText('AGENT_OFFLINE', 'revoked', { agent_id: id, cause }));
  }

  /** Ends with AGENT_OFFLINE every event of the agent held on this node. */
  function failEventsOf(agentId: string, error: string): void {
    for (const eventId of [...(eventsByAgent.get(agentId) ?? [])]) {
      const ev = events.get(eventId);
      if (ev) fail(ev, 'AGENT_OFFLINE', error, 'agent_offline');
    }
  }

  function shutdown(): void {
    for (const ev of [...events.values()])
      fail(ev, 'SHUTTING_DOWN', errorText('SHUTTING_DOWN', 'in_flight'), 'shutdown');
    for (const timer of offlineGrace.values()) timer.cancel();
    offlineGrace.clear();
    for (const client of [...clients.values()]) {
      client.gone = true;
      client.liveness.stop();
      client.conn.close(CLOSE_CODES.GOING_AWAY, 'SHUTTING_DOWN');
    }
    clients.clear();
    refusedLog.stop();
    evictedLog.stop();
    byteBounds.stop();
    heartbeats.stop();
    discardedLog.stop();
    resumes.stop();
    desk.stop();
    shares.stop();
  }

  function stats() {
    let apps = 0;
    for (const c of clients.values()) if (c.principal.kind === 'app') apps++;
    return { apps, agents: clients.size - apps, eventsInFlight: events.size };
  }

  const isAppOnline = (appId: string) => router.isAppOnline(appId);

  function liveConnections(orgId: string): LiveClient[] {
    const live: LiveClient[] = [];
    for (const { principal: p, connectedAt, lastPingAt } of clients.values()) {
      const [id, org] = p.kind === 'app' ? [p.app.app_id, p.app.org_id] : [p.agent.agent_id, p.agent.org_id];
      if (org === orgId) live.push({ kind: p.kind, id, connected_at: connectedAt, last_ping_at: lastPingAt });
    }
    return live;
  }

  function streamedTextBytes(): number {
    let bytes = 0;
    for (const budget of textBudgets.values()) bytes += budget.used;
    return bytes;
  }

  return {
    connect,
    open,
    expireToken,
    revoke,
    shutdown,
    stats,
    isAppOnline,
    appsOnline: () => bounds.appCount(),
    liveConnections,
    tokensForwarded: () => tokensForwarded,
    limitCounters: () => ({
      ...structuredClone(counters),
      ...byteBounds.counters(),
      heartbeatTimeouts: heartbeats.counters(),
    }),
    streamedTextBytes,
    sendBufferBytes: () => byteBounds.sendBufferBytes(),
    partialMessageBytes: () => byteBounds.partialMessageBytes(),
    resumeStats: () => resumes.stats(),
    fairShareStats: () => structuredClone(shares.stats),
  };
}
