// The live connections of this node: opened from a handshake's facts (or refused, with the one error of W1 and
// L18), each one's frames handed on in order (a connection waits while an answer its frame needs is on its way),
// and ended once, whoever ends it. What a connection sends is the app side's or the agent side's to judge.
import { CLOSE_CODES, ERRORS, type ClientKind, type ErrorCode } from '../../generated/index.js';
import type { Clock } from '../shared/clock.js';
import { errorText } from '../shared/error-text.js';
import type { Logger } from '../shared/logger.js';
import { BurstLog, LOG_WINDOW_MS } from './burst-log.js';
import type { ByteBounds } from './byte-bounds.js';
import type { ConnectionBounds } from './connection-bounds.js';
import type { Directory, Principal } from './directory.js';
import type { Connection, Presence } from './engine.js';
import * as frames from './frames.js';
import { endpointOf, identify, type ConnectionFacts, type HandshakeRefusalCode } from './handshake.js';
import type { Owner } from './held-bytes.js';
import type { CoreCounters } from './limit-counters.js';
import { connectionId } from './ids.js';
import type { ClosedClient, LiveClient } from './live-picture.js';
import type { Heartbeats, Liveness } from './liveness.js';
import { OwnerLog } from './owner-log.js';
import type { ConnectionHandlers, Socket } from './transport.js';

export interface Client {
  conn: Connection;
  /** Its id across the bridge, as the admin API lists it and closes it by it (H8). */
  id: string;
  principal: Principal;
  address: string | undefined;
  connectedAt: number;
  /** `connectedAt` on the monotonic clock: how long it lasted, whatever the wall clock did. */
  startedAt: number;
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
  /** An agent's connection opened with ?cancel=1 (S1): it is told of its events' cancels. */
  cancellable: boolean;
}

/** What the rest of the core does when a connection speaks or goes. */
export interface ConnectionHooks {
  /** A frame of an open connection; a promise holds the connection's next frames until it settles. */
  frame(client: Client, data: string, isBinary: boolean): Promise<void> | void;
  /** An agent's connection opened on this node: it is back. */
  agentAttached(agentId: string): void;
  /** An agent's connection here ended and was its connection anywhere: it has left. */
  agentLeft(agentId: string): void;
  /** An app's connection ended. */
  appConnectionGone(conn: Connection): void;
}

export interface ConnectionsDeps {
  directory: Directory;
  presence: Presence;
  clock: Clock;
  log: Logger;
  bounds: ConnectionBounds;
  byteBounds: ByteBounds;
  heartbeats: Heartbeats;
  counters: CoreCounters;
  hooks: ConnectionHooks;
}

/** What a connection's log lines say of its client: never a token. */
const clientFields = (p: Principal) =>
  p.kind === 'app'
    ? { kind: p.kind, app_id: p.app.app_id, org_id: p.app.org_id }
    : { kind: p.kind, agent_id: p.agent.agent_id, org_id: p.agent.org_id };

const orgOf = (p: Principal): string => (p.kind === 'app' ? p.app.org_id : p.agent.org_id);

const liveClient = ({ id, principal: p, connectedAt, lastPingAt }: Client): LiveClient => ({
  connection_id: id,
  kind: p.kind,
  id: p.kind === 'app' ? p.app.app_id : p.agent.agent_id,
  connected_at: connectedAt,
  last_ping_at: lastPingAt,
});

const ownerOf = (p: Principal): Owner =>
  p.kind === 'app' ? { kind: 'app', id: p.app.app_id } : { kind: 'agent', id: p.agent.agent_id };

export class Connections {
  private readonly clients = new Map<Connection, Client>();
  // A client can make these happen as often as it likes: logged a burst at a time, each one counted.
  private readonly refusedLog: BurstLog<HandshakeRefusalCode>;
  /** Each connection opened and closed, at info, within a budget per app or agent. */
  private readonly connLog: OwnerLog;

  constructor(private readonly d: ConnectionsDeps) {
    this.connLog = new OwnerLog(d.log, d.clock, 'connections');
    this.refusedLog = new BurstLog<HandshakeRefusalCode>({
      clock: d.clock,
      windowMs: LOG_WINDOW_MS,
      report: (counts, refused) =>
        d.log.info({ refused, codes: Object.fromEntries(counts) }, `handshakes refused: ${refused}`),
    });
  }

  /** Whether `conn` is a live connection of this node. */
  has(conn: Connection): boolean {
    return this.clients.has(conn);
  }

  get(conn: Connection): Client | undefined {
    return this.clients.get(conn);
  }

  connect(socket: Socket, facts: ConnectionFacts): ConnectionHandlers {
    const kind = endpointOf(facts.path);
    if (!kind) throw new Error(`not a WebSocket endpoint: ${facts.path}`); // the transport answers 404 before upgrading
    const who = identify(this.d.directory, kind, facts, this.d.clock.now());
    if (!who.ok) return this.refuseHandshake(socket, kind, who.code, who.error);
    const opts = {
      resumable: kind === 'app' && facts.resumable === true,
      cancellable: kind === 'agent' && facts.cancellable === true,
    };
    return this.open(socket, who.principal, facts.address, opts.resumable, opts.cancellable);
  }

  open(
    socket: Socket,
    principal: Principal,
    address?: string,
    resumable = false,
    cancellable = false,
  ): ConnectionHandlers {
    const { bounds, presence, byteBounds, heartbeats, clock } = this.d;
    const over = bounds.check(principal, address);
    if (over) {
      this.d.counters.connectionsRefused[over.bound]++;
      return this.refuseHandshake(socket, principal.kind, 'TOO_MANY_CONNECTIONS', over.error);
    }
    const firstOfApp = principal.kind === 'app' && !bounds.hasApp(principal.app.app_id);
    bounds.add(principal, address);
    socket.accepted?.();
    if (firstOfApp) presence.appPresence(principal.app.app_id, true);
    // What the rest of the core writes to: the socket's sends within the bounds of W17 and L19.
    const tracked = byteBounds.track(socket, ownerOf(principal));
    const { conn } = tracked;
    const liveness = heartbeats.watch(socket, (text) => this.refuse(conn, 'HEARTBEAT_TIMEOUT', text));
    const client: Client = {
      conn,
      id: connectionId(),
      principal,
      address,
      connectedAt: clock.now(),
      startedAt: clock.monotonic(),
      lastPingAt: null,
      liveness,
      gone: false,
      paused: false,
      backlog: [],
      socket,
      resumable,
      cancellable,
    };
    this.clients.set(conn, client);
    this.connLog.info(
      ownerOf(principal),
      'opened',
      { conn: conn.id, connection_id: client.id, ...clientFields(principal), address },
      'connection open',
    );
    const ready = principal.kind === 'agent' ? this.attachAgent(client, principal.agent.agent_id) : undefined;
    return {
      ...(ready ? { ready } : {}),
      message: (data, isBinary) => this.receive(client, data, isBinary),
      closed: (code, reason) => {
        tracked.gone();
        this.drop(client, { code, reason: reason || 'closed by the client or the network' });
      },
      partial: tracked.partial,
      pong: () => client.liveness.pong(),
    };
  }

  /** Ends a client's connection with a connection error: one `error`, then the code's close code. */
  refuse(conn: Connection, code: ErrorCode, error: string): void {
    const client = this.clients.get(conn);
    const toAgent = client?.principal.kind === 'agent';
    conn.send(toAgent ? frames.agentError(code, error) : frames.appError(code, error));
    const closeCode = ERRORS[code].closeCode ?? CLOSE_CODES.INTERNAL_ERROR;
    conn.close(closeCode, code);
    if (client) this.drop(client, { code: closeCode, reason: code });
  }

  /** Refuses every connection `match` picks. */
  closeWhere(match: (client: Client) => boolean, code: ErrorCode, error: string): void {
    for (const client of [...this.clients.values()]) if (match(client)) this.refuse(client.conn, code, error);
  }

  /**
   * Closes every connection with 1001, its socket's last frames unheard. Each agent is let go first, so that the
   * other nodes know at once that it left (their events wait its grace, new ones are not sent here, O21), rather
   * than when this node's heartbeat is found missing, which a restart under the same NODE_ID may never show.
   */
  closeAll(): void {
    for (const client of this.clients.values()) {
      client.gone = true;
      client.liveness.stop();
      if (client.principal.kind === 'agent') this.d.presence.detachAgent(client.principal.agent.agent_id, client.conn);
      client.conn.close(CLOSE_CODES.GOING_AWAY, 'SHUTTING_DOWN');
    }
    this.clients.clear();
    this.refusedLog.stop();
    this.connLog.stop();
  }

  stats(): { apps: number; agents: number } {
    let apps = 0;
    for (const c of this.clients.values()) if (c.principal.kind === 'app') apps++;
    return { apps, agents: this.clients.size - apps };
  }

  /** The live connections on this node of an organization's apps and agents, oldest first (D8). */
  liveConnections(orgId: string): LiveClient[] {
    const live: LiveClient[] = [];
    for (const client of this.clients.values()) if (orgOf(client.principal) === orgId) live.push(liveClient(client));
    return live;
  }

  /**
   * Closes the connection an operator named (DISCONNECTED_BY_ADMIN, H8) and tells what it was; undefined when it is
   * not a live connection of this node. A scan, not an index: an operator's action, rare beside every connection.
   */
  disconnect(connectionId: string): ClosedClient | undefined {
    const client = [...this.clients.values()].find((c) => c.id === connectionId);
    if (!client) return undefined;
    const closed = { ...liveClient(client), org_id: orgOf(client.principal) };
    this.refuse(
      client.conn,
      'DISCONNECTED_BY_ADMIN',
      errorText('DISCONNECTED_BY_ADMIN', 'admin', { connection_id: connectionId }),
    );
    return closed;
  }

  /**
   * A handshake refused before the connection is a client: its error frame is of the endpoint it came to. Until
   * its socket is gone, what it sends of a message still counts in the node's bound (L20).
   */
  private refuseHandshake(
    socket: Socket,
    endpoint: ClientKind,
    code: HandshakeRefusalCode,
    error: string,
  ): ConnectionHandlers {
    this.d.counters.handshakesRefused[code]++;
    this.refusedLog.record(code);
    socket.send(endpoint === 'agent' ? frames.agentError(code, error) : frames.appError(code, error));
    socket.close(ERRORS[code].closeCode, code);
    const tracked = this.d.byteBounds.track(socket, undefined);
    return { message() {}, closed: tracked.gone, partial: tracked.partial };
  }

  /**
   * Makes the client the agent's connection. Its handshake is answered once its own node locates it for every node
   * (on several, once the shared record has its claim, O14): an app told of the agent, by the agent or by the
   * directory, then reaches it through any node. A claim the record did not take refuses the connection.
   */
  private attachAgent(client: Client, agentId: string): Promise<void> | undefined {
    const { conn } = client;
    const replaced = this.d.presence.attachAgent(agentId, conn);
    this.d.hooks.agentAttached(agentId);
    if (replaced) {
      this.d.log.info({ agent_id: agentId }, 'agent connection replaced by a newer one');
      this.refuse(replaced, 'CONNECTION_REPLACED', errorText('CONNECTION_REPLACED', 'replaced'));
    }
    const located = this.d.presence.locateAgent(agentId);
    if (typeof located === 'boolean') return undefined;
    return located.then((claimed) => {
      if (claimed || client.gone) return;
      this.d.log.warn({ agent_id: agentId }, "agent connection refused: the other nodes' record did not take it");
      this.refuse(conn, 'INTERNAL_ERROR', errorText('INTERNAL_ERROR', 'cluster_link'));
    });
  }

  /** The one way a client stops being one, whoever ended it (its socket, a refusal, a revocation): once. */
  private drop(client: Client, how: { code: number | undefined; reason: string }): void {
    if (client.gone) return;
    client.gone = true;
    client.backlog = [];
    const { conn, principal } = client;
    const fields = {
      conn: conn.id,
      connection_id: client.id,
      ...clientFields(principal),
      close_code: how.code ?? null,
      reason: how.reason.slice(0, 123), // a close reason's most; a client's may be anything
      duration_ms: Math.round(this.d.clock.monotonic() - client.startedAt),
    };
    this.connLog.info(ownerOf(principal), 'closed', fields, 'connection closed');
    this.clients.delete(conn);
    client.liveness.stop();
    this.d.bounds.remove(principal, client.address);
    if (principal.kind === 'app') {
      if (!this.d.bounds.hasApp(principal.app.app_id)) this.d.presence.appPresence(principal.app.app_id, false);
      return this.d.hooks.appConnectionGone(conn);
    }
    const agentId = principal.agent.agent_id;
    if (this.d.presence.detachAgent(agentId, conn)) this.d.hooks.agentLeft(agentId);
  }

  private receive(client: Client, data: string, isBinary: boolean): void {
    if (client.gone) return;
    client.liveness.message();
    if (client.paused) client.backlog.push({ data, isBinary });
    else this.handle(client, data, isBinary);
  }

  private handle(client: Client, data: string, isBinary: boolean): void {
    try {
      const waiting = this.d.hooks.frame(client, data, isBinary);
      if (waiting) this.pauseFor(client, waiting);
    } catch (err) {
      this.failed(client, err);
    }
  }

  /** A bug must cost at most this connection, never the process or another client's data. */
  private failed(client: Client, err: unknown): void {
    this.d.log.error({ conn: client.conn.id, err }, 'frame handling failed');
    this.refuse(client.conn, 'INTERNAL_ERROR', errorText('INTERNAL_ERROR', 'frame'));
  }

  private pauseFor(client: Client, waiting: Promise<void>): void {
    client.paused = true;
    client.socket.pause?.();
    waiting.then(
      () => {
        client.paused = false;
        while (!client.paused && !client.gone && client.backlog.length) {
          const next = client.backlog.shift()!;
          this.handle(client, next.data, next.isBinary);
        }
        if (!client.paused) client.socket.resume?.();
      },
      (err) => this.failed(client, err),
    );
  }
}
