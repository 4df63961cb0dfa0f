// One configured agent: its BridgeConnection (heartbeat, backoff, state), its sessions, and the events in flight.
// Each event is handed to the handler and always ends with exactly one `reply` or `error` on the wire (§7: agents
// never stay silent), whatever the handler does.
import {
  ERRORS,
  LIMITS,
  describeErrors,
  validateAgentErrorMessage,
  validateAgentReplyMessage,
  validateOpenEventToAgentMessage,
  type AgentErrorMessage,
  type AgentReplyMessage,
  type AgentReplyMetadata,
  type AgentTokenMessage,
  type ConnectorAgentHealth,
  type ErrorCode,
  type EventToAgentMessage,
} from '../../../generated/index.js';
import type { Clock, Timer } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import { BridgeConnection, type ConnectionOptions } from '../connection.js';
import type { ResolvedConnectorAgent, ResolvedReconnect } from './config.js';
import { splitByBytes, splitWords } from './fragments.js';
import type { AgentContext, AgentEvent, AgentFailureCode, AgentHandler } from './handler.js';
import type { Notify } from './notifications.js';
import { SessionStore } from './sessions.js';

/** Connection settings the configuration file does not carry (tests pass a short heartbeat or a fixed jitter). */
export type ConnectionTuning = Pick<ConnectionOptions, 'carrier' | 'heartbeatIntervalMs' | 'heartbeatTimeoutMs' | 'random' | 'createSocket'> & {
  /** 0..1, see ReconnectOptions.jitter (BridgeConnection's default when absent). */
  jitter?: number;
};

export interface AgentRunnerOptions {
  agent: ResolvedConnectorAgent;
  /** The agent endpoint, `{base_url}/ws/agent`. */
  url: string;
  reconnect: ResolvedReconnect;
  handler: AgentHandler;
  handlerTimeoutMs: number;
  wordsPerFragment: number;
  clock: Clock;
  logger: Logger;
  notify: Notify;
  connection?: ConnectionTuning;
}

/** Frames kept for events in flight while the connection is down (sent on reconnect, L8); older ones beyond it are dropped. */
const OUTBOX_MAX_FRAMES = 10_000;

type AgentFrame = AgentTokenMessage | AgentReplyMessage | AgentErrorMessage;

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err)) || 'handler failed';

/**
 * What the app reads when the handler throws (C6). An exception's text can carry anything (a stack detail, a key, a
 * customer's data), so it goes to the connector's log only; a text meant for the app goes through ctx.fail().
 */
const HANDLER_FAILED = 'The agent failed while handling the event.';

/** An error text cut to at most one token fragment's size, so a huge exception message cannot make a huge frame. */
const capped = (text: string): string => splitByBytes(text, LIMITS.tokenFragmentMaxBytes)[0] ?? '';

const isConnectionCode = (code: string): boolean => (ERRORS as Record<string, { scope: string } | undefined>)[code]?.scope === 'connection';

export class AgentRunner {
  readonly agentId: string;
  readonly sessions: SessionStore;
  readonly connection: BridgeConnection;
  private readonly runs = new Map<string, EventRun>();
  private outbox: AgentFrame[] = [];
  /** Open and authenticated: the bridge answered our first ping (a refused handshake is upgraded too, W1). */
  private connected = false;
  private authenticating = false;
  private closing = false;
  private firstConnection: { resolve(): void; reject(err: Error): void } | undefined;
  private refusedThisConnection = false;
  private lastPongAt: number | undefined;
  private lastError: string | undefined;

  constructor(private readonly o: AgentRunnerOptions) {
    this.agentId = o.agent.agent_id;
    this.sessions = new SessionStore({ ttlDays: o.agent.ttl_days, context: o.agent.context, clock: o.clock });
    const { jitter, ...tuning } = o.connection ?? {};
    this.connection = new BridgeConnection(
      {
        ...tuning,
        url: o.url,
        token: o.agent.token,
        clock: o.clock,
        reconnect: { ...o.reconnect, ...(jitter !== undefined ? { jitter } : {}) },
      },
      LIMITS.connectorReconnectMaxAttempts,
    );
    this.connection.on('open', () => this.onOpen());
    this.connection.on('down', (info) => this.onDown(info));
    this.connection.on('reconnecting', (info) => this.o.notify('reconnecting', { agentId: this.agentId, ...info }));
    this.connection.on('closed', (info) => this.onClosed(info));
    this.connection.on('pong', (at) => this.onPong(at));
    this.connection.on('message', (message) => {
      try {
        this.onMessage(message);
      } catch (err) {
        // Never let one frame take the process down.
        this.o.logger.error({ agent_id: this.agentId, err }, 'connector failed to handle a frame from the bridge');
      }
    });
  }

  /** Connects; resolves once the bridge has accepted the token, rejects when refused for good or out of retries. */
  start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.firstConnection = { resolve, reject };
      this.connection.start().catch(() => {}); // the 'closed' handler rejects, with the bridge's reason
    });
  }

  /** Ends every event in flight with `error` (the app is told), then closes the connection for good. */
  async close(): Promise<void> {
    this.closing = true;
    for (const run of [...this.runs.values()]) run.end('AGENT_ERROR', 'The agent connector is shutting down.');
    if (this.connection.state === 'closed') return;
    const closed = new Promise<void>((resolve) => this.connection.once('closed', () => resolve()));
    this.connection.close();
    await closed;
  }

  health(): ConnectorAgentHealth {
    const health: ConnectorAgentHealth = { connected: this.connected };
    if (this.lastPongAt !== undefined) health.lastPing = new Date(this.lastPongAt).toISOString();
    if (!this.connected && this.lastError !== undefined) health.lastError = this.lastError;
    return health;
  }

  get isConnected(): boolean {
    return this.connected;
  }

  /** Events handed to the handler and not yet ended. */
  get inFlight(): number {
    return this.runs.size;
  }

  // ---- connection ----------------------------------------------------------------------------------------

  private onOpen(): void {
    // The upgrade alone proves nothing: a refused token is upgraded too, then gets `error` and a close (W1). The
    // bridge answers frames in order and never those of a refused connection, so the first pong is the acceptance.
    this.refusedThisConnection = false;
    this.authenticating = true;
    this.connection.send({ type: 'ping' });
  }

  private onPong(at: number): void {
    this.lastPongAt = at;
    if (!this.authenticating) return;
    this.authenticating = false;
    this.connected = true;
    this.o.notify('connected', { agentId: this.agentId });
    this.flush();
    this.firstConnection?.resolve();
    this.firstConnection = undefined;
  }

  private onDown(info: { code: number; reason: string }): void {
    const wasConnected = this.connected;
    this.connected = false;
    this.authenticating = false;
    if (!this.refusedThisConnection) this.lastError = `connection closed (${info.code}${info.reason ? ` ${info.reason}` : ''})`;
    this.refusedThisConnection = false;
    if (wasConnected) this.o.notify('disconnected', { agentId: this.agentId, ...info });
  }

  private onClosed(info: { code: number; reason: string }): void {
    this.connected = false;
    this.authenticating = false;
    this.firstConnection?.reject(new Error(this.lastError ?? (info.reason || `connection closed (${info.code})`)));
    this.firstConnection = undefined;
    if (this.outbox.length) this.o.logger.warn({ agent_id: this.agentId, frames: this.outbox.length }, 'connection closed for good: frames not sent');
    this.outbox = [];
    for (const run of [...this.runs.values()]) {
      run.abandon('AGENT_OFFLINE', 'The connection to the bridge closed for good; the event cannot be answered.');
    }
    this.o.notify('closed', { agentId: this.agentId, ...info });
  }

  /** Sends now, or keeps the frame until the connection is back (in order). */
  send(frame: AgentFrame): void {
    if (this.connected && this.outbox.length === 0 && this.connection.send(frame)) return;
    if (this.connection.state === 'closed') {
      this.o.logger.warn({ agent_id: this.agentId, event_id: frame.event_id, type: frame.type }, 'connection closed: frame not sent');
      return;
    }
    if (this.outbox.length >= OUTBOX_MAX_FRAMES) {
      this.o.logger.warn({ agent_id: this.agentId, event_id: frame.event_id, type: frame.type }, 'outbox full while disconnected: frame dropped');
      return;
    }
    this.outbox.push(frame);
    this.flush();
  }

  private flush(): void {
    while (this.connected && this.outbox.length && this.connection.send(this.outbox[0])) this.outbox.shift();
  }

  // ---- frames from the bridge ----------------------------------------------------------------------------

  private onMessage(message: Record<string, unknown>): void {
    if (message.type === 'event') return this.onEvent(message);
    if (message.type === 'error') return this.onBridgeError(message);
    this.o.logger.warn({ agent_id: this.agentId, type: message.type }, 'unexpected frame from the bridge ignored');
  }

  private onBridgeError(message: Record<string, unknown>): void {
    const code = typeof message.code === 'string' ? message.code : 'UNKNOWN';
    const text = typeof message.error === 'string' ? message.error : '';
    const eventId = typeof message.event_id === 'string' ? message.event_id : undefined;
    this.o.logger.warn({ agent_id: this.agentId, event_id: eventId, code }, `the bridge reported ${code}: ${text}`);
    if (eventId === undefined && isConnectionCode(code)) {
      this.lastError = `${code}: ${text}`;
      this.refusedThisConnection = true;
    }
    this.o.notify('event-error', { agentId: this.agentId, ...(eventId !== undefined ? { eventId } : {}), code, message: text });
    // The bridge no longer knows the event (it timed out or ended there): stop it here, without more frames.
    if (eventId !== undefined && code === ('INVALID_EVENT_ID' satisfies ErrorCode)) this.runs.get(eventId)?.abandon();
  }

  private onEvent(message: Record<string, unknown>): void {
    // The open schema: a field of a later protocol version is ignored, not a reason to refuse the event (C2).
    if (!validateOpenEventToAgentMessage(message as unknown)) {
      const problem = `The agent connector could not read the event: ${describeErrors(validateOpenEventToAgentMessage.errors)}`;
      const eventId = typeof message.event_id === 'string' ? message.event_id : undefined;
      if (eventId !== undefined) this.send({ type: 'error', event_id: eventId, code: 'AGENT_ERROR', error: capped(problem) });
      this.o.notify('event-error', { agentId: this.agentId, ...(eventId !== undefined ? { eventId } : {}), code: 'AGENT_ERROR', message: problem });
      return;
    }
    const m = message as unknown as EventToAgentMessage;
    if (this.runs.has(m.event_id)) {
      this.o.logger.warn({ agent_id: this.agentId, event_id: m.event_id }, 'event already in flight: duplicate ignored');
      return;
    }
    this.o.notify('event-received', { agentId: this.agentId, eventId: m.event_id, sessionKey: m.session_key });
    const run = new EventRun(this, m.event_id, this.o);
    if (this.closing) return run.end('AGENT_ERROR', 'The agent connector is shutting down.');
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
  }
}

/** One event in flight: the context handed to the handler, and the guarantee of exactly one ending. */
class EventRun {
  private finished = false;
  private tokens = 0;
  private timer: Timer | undefined;
  private readonly controller = new AbortController();
  readonly ctx: AgentContext;

  constructor(
    private readonly runner: AgentRunner,
    private readonly eventId: string,
    private readonly o: AgentRunnerOptions,
  ) {
    const run = this;
    this.ctx = {
      agentId: runner.agentId,
      eventId,
      signal: this.controller.signal,
      get finished() {
        return run.finished;
      },
      get tokenCount() {
        return run.tokens;
      },
      token: (text) => (this.ignored('token') ? 0 : this.sendTokens(text)),
      stream: (text, wordsPerFragment = o.wordsPerFragment) => {
        if (this.ignored('stream')) return 0;
        let sent = 0;
        for (const fragment of splitWords(String(text), wordsPerFragment)) sent += this.sendTokens(fragment);
        return sent;
      },
      reply: (content = '', metadata) => {
        if (!this.ignored('reply')) this.reply(content, metadata);
      },
      fail: (code, message) => {
        if (!this.ignored('fail')) this.end(code, message);
      },
    };
  }

  startTimer(ms: number): void {
    this.timer = this.o.clock.setTimer(ms, () => {
      this.timer = undefined;
      this.end('AGENT_TIMEOUT', `The agent did not answer within ${ms} ms.`);
    });
  }

  private ignored(call: string): boolean {
    if (!this.finished) return false;
    this.o.logger.warn({ agent_id: this.runner.agentId, event_id: this.eventId, call }, `ctx.${call}() after the event ended: ignored`);
    return true;
  }

  private sendTokens(text: string): number {
    const pieces = splitByBytes(String(text));
    for (const token of pieces) {
      this.runner.send({ type: 'token', event_id: this.eventId, token });
      this.tokens++;
    }
    return pieces.length;
  }

  private reply(content: string, metadata: AgentReplyMetadata | undefined): void {
    const frame = { type: 'reply', event_id: this.eventId, content, done: true, ...(metadata !== undefined ? { metadata } : {}) };
    if (!validateAgentReplyMessage(frame)) {
      return this.end('AGENT_ERROR', `The agent produced an invalid reply: ${describeErrors(validateAgentReplyMessage.errors)}`);
    }
    // A reply reaches the app in one frame, so its text has a limit (L16): over it the bridge would answer
    // REPLY_TOO_LARGE (or, over the frame limit, close the connection), so the event ends here with the reason.
    const textBytes = Buffer.byteLength(JSON.stringify(content)) - 2;
    if (textBytes > LIMITS.replyContentMaxBytes) {
      return this.end('AGENT_ERROR', `The agent's reply is ${textBytes} bytes; one reply carries at most ${LIMITS.replyContentMaxBytes}.`);
    }
    if (Buffer.byteLength(JSON.stringify(frame)) > LIMITS.frameMaxBytes) {
      return this.end('AGENT_ERROR', `The agent's reply frame is over ${LIMITS.frameMaxBytes} bytes (its metadata is too large) and could not be sent.`);
    }
    this.runner.send(frame);
    this.finish();
    this.o.notify('event-replied', { agentId: this.runner.agentId, eventId: this.eventId, tokenCount: this.tokens });
  }

  /** Ends the event with `error` (unless it has ended already). */
  end(code: AgentFailureCode, message: string): void {
    if (this.finished) return;
    const frame: AgentErrorMessage = { type: 'error', event_id: this.eventId, code: String(code), error: capped(String(message)) };
    if (!validateAgentErrorMessage(frame)) {
      this.o.logger.warn({ agent_id: this.runner.agentId, event_id: this.eventId, code }, `invalid error code, sent as AGENT_ERROR: ${describeErrors(validateAgentErrorMessage.errors)}`);
      (frame as AgentErrorMessage).code = 'AGENT_ERROR';
    }
    this.runner.send(frame);
    this.finish();
    this.o.notify('event-error', { agentId: this.runner.agentId, eventId: this.eventId, code: frame.code, message: frame.error });
  }

  /** Ends the event here without sending anything (the bridge has ended it, or cannot be reached). */
  abandon(code?: string, message?: string): void {
    if (this.finished) return;
    this.finish();
    if (code !== undefined) this.o.notify('event-error', { agentId: this.runner.agentId, eventId: this.eventId, code, message: message ?? '' });
  }

  handlerReturned(): void {
    if (this.finished) return;
    if (this.tokens > 0) this.reply('', undefined);
    else this.end('AGENT_ERROR', 'The agent handler returned without a reply.');
  }

  handlerThrew(err: unknown): void {
    if (this.finished) {
      this.o.logger.warn({ agent_id: this.runner.agentId, event_id: this.eventId, err }, 'handler failed after the event ended');
      return;
    }
    this.o.logger.error({ agent_id: this.runner.agentId, event_id: this.eventId, err }, `handler failed: ${errorText(err)}`);
    this.end('AGENT_ERROR', HANDLER_FAILED);
  }

  private finish(): void {
    this.finished = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.runner.forget(this.eventId);
    this.controller.abort();
  }
}
