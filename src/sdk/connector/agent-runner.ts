// One configured agent: its BridgeConnection (acceptance, heartbeat, backoff, state), its sessions, and the events
// in flight, each run by an EventRun until its one `reply` or `error`; on a stop, its drain (C8).
import {
  LIMITS,
  validateOpenServiceToAgentMessage,
  type ConnectorAgentHealth,
  type ErrorCode,
  type ErrorToAgentMessage,
  type EventToAgentMessage,
  type ServiceToAgentMessage,
} from '../../../generated/index.js';
import type { ConnectionOptions } from '../connection-options.js';
import type { CloseInfo, Inbound, InvalidFrame } from '../connection-events.js';
import { BridgeConnection, BridgeConnectionError } from '../connection.js';
import { deferred, type Deferred } from '../deferred.js';
import type { ResolvedConnectorAgent, ResolvedReconnect } from './config.js';
import { EventRun, type AgentFrame, type RunSettings } from './event-run.js';
import { capped } from './fragments.js';
import type { AgentEvent, AgentHandler } from './handler.js';
import { SessionStore } from './sessions.js';

/** Connection settings the configuration file does not carry (tests pass a short heartbeat or a fixed jitter). */
export type ConnectionTuning = Pick<
  ConnectionOptions,
  'carrier' | 'heartbeatIntervalMs' | 'heartbeatTimeoutMs' | 'random' | 'createSocket'
> & {
  /** 0..1, see ReconnectOptions.jitter (BridgeConnection's default when absent). */
  jitter?: number;
};

export interface AgentRunnerOptions extends RunSettings {
  agent: ResolvedConnectorAgent;
  /** The agent endpoint, `{base_url}/ws/agent`. */
  url: string;
  reconnect: ResolvedReconnect;
  handler: AgentHandler;
  handlerTimeoutMs: number;
  connection?: ConnectionTuning;
}

/** The agent endpoint asking to be told of cancels (S1), whatever the configured URL's own query said of it. */
function cancelQuery(url: string): string {
  const u = new URL(url);
  u.searchParams.set('cancel', '1');
  return u.toString();
}

/** Frames kept for events in flight while the connection is down (sent on reconnect, L8); older ones beyond it are dropped. */
const OUTBOX_MAX_FRAMES = 10_000;

/** What the app reads for an event that arrives while the connector stops: its handler never ran, so sending it again is safe. */
const NOT_STARTED_TEXT =
  'The agent connector is stopping and did not start this event; it may be sent again once the agent is back.';
/** What the app reads for an event still in flight when the stop's drain ended. */
const CUT_SHORT_TEXT = 'The agent connector is shutting down.';

export class AgentRunner {
  readonly agentId: string;
  readonly sessions: SessionStore;
  readonly connection: BridgeConnection<ServiceToAgentMessage, AgentFrame>;
  private readonly runs = new Map<string, EventRun>();
  private outbox: AgentFrame[] = [];
  /** False once a stop has begun: new events are answered at once, their handler not started. */
  private accepting = true;
  /** Settled when the last event in flight ends, while a drain waits for it. */
  private idle: Deferred<void> | undefined;
  private lastPongAt: number | undefined;
  private lastError: string | undefined;

  constructor(private readonly o: AgentRunnerOptions) {
    this.agentId = o.agent.agent_id;
    this.sessions = new SessionStore({ ttlDays: o.agent.ttl_days, context: o.agent.context, clock: o.clock });
    const { jitter, ...tuning } = o.connection ?? {};
    this.connection = new BridgeConnection<ServiceToAgentMessage, AgentFrame>(
      {
        ...tuning,
        url: cancelQuery(o.url),
        token: o.agent.token,
        clock: o.clock,
        reconnect: { ...o.reconnect, ...(jitter !== undefined ? { jitter } : {}) },
      },
      { validate: validateOpenServiceToAgentMessage, maxRetries: LIMITS.connectorReconnectMaxAttempts },
    );
    this.connection.on('pong', (at) => (this.lastPongAt = at));
    this.connection.on('ready', () => this.onReady());
    this.connection.on('down', (info) => this.onDown(info));
    this.connection.on('reconnecting', (info) => this.o.notify('reconnecting', { agentId: this.agentId, ...info }));
    this.connection.on('closed', (info) => this.onClosed(info));
    this.connection.on('invalid', (frame) => this.guarded(() => this.onInvalid(frame)));
    this.connection.on('message', (message) => this.guarded(() => this.onMessage(message)));
  }

  /** Connects; resolves once the bridge has accepted the token, rejects when refused for good or out of retries. */
  start(): Promise<void> {
    return this.connection.start().catch((err: BridgeConnectionError) => {
      throw new Error(this.lastError ?? err.message); // the bridge's reason when it gave one
    });
  }

  /**
   * Takes no more events (each new one is answered at once with AGENT_ERROR, its handler not started); resolves once
   * every event in flight has ended. The connection stays open meanwhile, so their frames still reach the bridge.
   */
  drain(): Promise<void> {
    this.accepting = false;
    if (this.runs.size === 0) return Promise.resolve();
    this.idle ??= deferred<void>();
    return this.idle.promise;
  }

  /**
   * Ends every event still in flight with `error` (the app is told), then closes the connection for good. Returns
   * the ids of the events so ended.
   */
  async close(): Promise<string[]> {
    this.accepting = false;
    const cutShort = [...this.runs.keys()];
    for (const run of [...this.runs.values()]) run.end('AGENT_ERROR', CUT_SHORT_TEXT);
    if (this.connection.state === 'closed') return cutShort;
    const closed = new Promise<void>((resolve) => this.connection.once('closed', () => resolve()));
    this.connection.close();
    await closed;
    return cutShort;
  }

  health(): ConnectorAgentHealth {
    const health: ConnectorAgentHealth = { connected: this.isConnected };
    if (this.lastPongAt !== undefined) health.lastPing = new Date(this.lastPongAt).toISOString();
    if (!this.isConnected && this.lastError !== undefined) health.lastError = this.lastError;
    return health;
  }

  /** Open and accepted by the bridge. */
  get isConnected(): boolean {
    return this.connection.ready;
  }

  /** Events handed to the handler and not yet ended. */
  get inFlight(): number {
    return this.runs.size;
  }

  // ---- connection ----------------------------------------------------------------------------------------

  private onReady(): void {
    this.o.notify('connected', { agentId: this.agentId });
    this.flush();
  }

  private onDown(info: CloseInfo): void {
    const refusal = this.connection.connectionError;
    this.lastError = refusal
      ? `${refusal.code}: ${refusal.error}`
      : `connection closed (${info.code}${info.reason ? ` ${info.reason}` : ''})`;
    if (this.connection.ready) this.o.notify('disconnected', { agentId: this.agentId, ...info });
  }

  private onClosed(info: CloseInfo): void {
    if (this.outbox.length)
      this.o.logger.warn(
        { agent_id: this.agentId, frames: this.outbox.length },
        'connection closed for good: frames not sent',
      );
    this.outbox = [];
    for (const run of [...this.runs.values()]) {
      run.abandon('AGENT_OFFLINE', 'The connection to the bridge closed for good; the event cannot be answered.');
    }
    this.o.notify('closed', { agentId: this.agentId, ...info });
  }

  /** Sends now, or keeps the frame until the connection is back (in order). */
  send(frame: AgentFrame): void {
    if (this.isConnected && this.outbox.length === 0 && this.connection.send(frame)) return;
    if (this.connection.state === 'closed') {
      this.o.logger.warn(
        { agent_id: this.agentId, event_id: frame.event_id, type: frame.type },
        'connection closed: frame not sent',
      );
      return;
    }
    if (this.outbox.length >= OUTBOX_MAX_FRAMES) {
      this.o.logger.warn(
        { agent_id: this.agentId, event_id: frame.event_id, type: frame.type },
        'outbox full while disconnected: frame dropped',
      );
      return;
    }
    this.outbox.push(frame);
    this.flush();
  }

  private flush(): void {
    while (this.isConnected && this.outbox.length && this.connection.send(this.outbox[0]!)) this.outbox.shift();
  }

  // ---- frames from the bridge ----------------------------------------------------------------------------

  /** Never lets one frame take the process down. */
  private guarded(handle: () => void): void {
    try {
      handle();
    } catch (err) {
      this.o.logger.error({ agent_id: this.agentId, err }, 'connector failed to handle a frame from the bridge');
    }
  }

  private onMessage(message: Inbound<ServiceToAgentMessage>): void {
    switch (message.type) {
      case 'event':
        return this.onEvent(message);
      case 'error':
        return this.onBridgeError(message);
      case 'cancel':
        return this.onCancel(message.event_id);
    }
  }

  /**
   * The app cancelled the event (S4): its run ends here without a frame, its handler's signal fires with a
   * `CancelledEventError`, and whatever the handler still sends for it is ignored, never sent.
   */
  private onCancel(eventId: string): void {
    const run = this.runs.get(eventId);
    if (!run) return;
    this.o.logger.info({ agent_id: this.agentId, event_id: eventId }, 'event cancelled by the app');
    run.cancel();
  }

  /**
   * A frame off the schema: an event that cannot be read still gets its one `error` (agents never stay silent);
   * anything else, such as a message type of a later protocol version, is logged and ignored.
   */
  private onInvalid({ type, eventId, problem }: InvalidFrame): void {
    if (type !== 'event') {
      this.o.logger.warn({ agent_id: this.agentId, type }, `invalid frame from the bridge ignored: ${problem}`);
      return;
    }
    const text = `The agent connector could not read the event: ${problem}`;
    if (eventId !== undefined)
      this.send({ type: 'error', event_id: eventId, code: 'AGENT_ERROR', error: capped(text) });
    this.o.notify('event-error', {
      agentId: this.agentId,
      ...(eventId !== undefined ? { eventId } : {}),
      code: 'AGENT_ERROR',
      message: text,
    });
  }

  private onBridgeError(message: ErrorToAgentMessage): void {
    // Frames are validated against the open schema, where the protocol shows an agent's error only as a type and a
    // code: another bridge may send event_id null or no text, so neither is taken on trust.
    const { code } = message;
    const eventId = typeof message.event_id === 'string' ? message.event_id : undefined;
    const text = typeof message.error === 'string' ? message.error : `(no text; code ${code})`;
    this.o.logger.warn({ agent_id: this.agentId, event_id: eventId, code }, `the bridge reported ${code}: ${text}`);
    this.o.notify('event-error', {
      agentId: this.agentId,
      ...(eventId !== undefined ? { eventId } : {}),
      code,
      message: text,
    });
    // The bridge no longer knows the event (it timed out or ended there): stop it here, without more frames.
    if (eventId !== undefined && code === ('INVALID_EVENT_ID' satisfies ErrorCode)) this.runs.get(eventId)?.abandon();
  }

  private onEvent(m: EventToAgentMessage): void {
    if (this.runs.has(m.event_id)) {
      this.o.logger.warn(
        { agent_id: this.agentId, event_id: m.event_id },
        'event already in flight: duplicate ignored',
      );
      return;
    }
    this.o.notify('event-received', { agentId: this.agentId, eventId: m.event_id, sessionKey: m.session_key });
    const run = new EventRun(this, m.event_id, this.o);
    if (!this.accepting) return run.end('AGENT_ERROR', NOT_STARTED_TEXT);
    this.runs.set(m.event_id, run);
    const { session, created } = this.sessions.acquire(m.session_key);
    const event: AgentEvent = {
      agentId: this.agentId,
      eventId: m.event_id,
      appId: m.app_id,
      threadId: m.thread_id,
      sessionKey: m.session_key,
      payload: m.payload,
      session,
      newSession: created,
    };
    run.startTimer(this.o.handlerTimeoutMs);
    let result: unknown;
    try {
      result = this.o.handler(event, run.ctx);
    } catch (err) {
      run.handlerThrew(err);
      return;
    }
    Promise.resolve(result).then(
      () => run.handlerReturned(),
      (err: unknown) => run.handlerThrew(err),
    );
  }

  /** Called by a run when it ends. */
  forget(eventId: string): void {
    this.runs.delete(eventId);
    if (this.runs.size > 0 || !this.idle) return;
    this.idle.resolve();
    this.idle = undefined;
  }
}
