// One resilient WebSocket to the bridge, shared by the app client and the agent connector: authenticates in the
// handshake, pings every heartbeat interval and declares the connection dead when no pong follows in time,
// reconnects with exponential backoff and jitter, and tells its owner about every state change. All time goes
// through an injectable clock, so tests run the heartbeat and the backoff without sleeping.
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { LIMITS } from '../../generated/index.js';
import { systemClock, type Clock, type Timer } from '../shared/clock.js';

export type Carrier = 'header' | 'query';

export interface ReconnectOptions {
  enabled: boolean;
  /** Attempts after a drop before giving up. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** 0..1: each delay is reduced by up to this fraction at random, so many clients do not reconnect in step. */
  jitter: number;
}

export interface ConnectionOptions {
  /** `{base_url}/ws/app` or `{base_url}/ws/agent`. */
  url: string;
  /** The app (`rlk_…`) or agent (`rla_…`) token. Keep it in the environment, never in code. */
  token: string;
  /** How the token travels in the handshake: the Authorization header (default, stays out of access logs) or `?token=`. */
  carrier?: Carrier;
  /** Defaults: enabled, the owner's attempts, LIMITS.reconnectBaseDelayMs doubling to LIMITS.reconnectMaxDelayMs, 20 % jitter. */
  reconnect?: Partial<ReconnectOptions>;
  /** Default LIMITS.heartbeatIntervalMs. */
  heartbeatIntervalMs?: number;
  /** Default LIMITS.heartbeatTimeoutMs; without a pong in this time the connection is dropped and reopened. */
  heartbeatTimeoutMs?: number;
  /** Time source for the heartbeat and the backoff (tests pass an AdjustableClock). */
  clock?: Clock;
  /** Random numbers in [0, 1) for the jitter (tests pass a fixed one). */
  random?: () => number;
  /** Opens the socket (tests may substitute one). */
  createSocket?: (url: string, headers: Record<string, string>) => WebSocket;
}

export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface ConnectionEvents {
  state: [state: ConnectionState];
  open: [];
  /** A frame from the bridge, parsed. */
  message: [message: Record<string, unknown>];
  /** The connection went down (it may come back). */
  down: [info: { code: number; reason: string }];
  reconnecting: [info: { attempt: number; delayMs: number }];
  /** Given up: closed by the owner, refused for good (UNAUTHORIZED, TOKEN_REVOKED, FORBIDDEN), or out of retries. */
  closed: [info: { code: number; reason: string }];
  pong: [at: number];
}

/** Close reasons after which reconnecting with the same token cannot help. */
const FINAL_REASONS = new Set(['UNAUTHORIZED', 'TOKEN_REVOKED', 'FORBIDDEN', 'CONNECTION_REPLACED']);

/** The delay before reconnect attempt `attempt` (1-based): base doubling up to the cap, minus up to `jitter`. */
export function backoffDelay(attempt: number, o: Pick<ReconnectOptions, 'baseDelayMs' | 'maxDelayMs' | 'jitter'>, random: () => number): number {
  const full = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(full * (1 - o.jitter * random()));
}

export class BridgeConnection extends EventEmitter<ConnectionEvents> {
  private ws: WebSocket | undefined;
  private readonly clock: Clock;
  private readonly reconnect: ReconnectOptions;
  private readonly random: () => number;
  private heartbeat: Timer | undefined;
  private pongDeadline: Timer | undefined;
  private retryTimer: Timer | undefined;
  private attempt = 0;
  /** Whether the bridge answered a ping on this connection: only then does the backoff start over. */
  private confirmed = false;
  /** Holds the process open while a reconnect is pending (the clock's timers do not). */
  private keepAlive: NodeJS.Timeout | undefined;
  private stopped = false;
  state: ConnectionState = 'closed';

  constructor(
    private readonly options: ConnectionOptions,
    defaultMaxRetries: number,
  ) {
    super();
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.reconnect = {
      enabled: true,
      maxRetries: defaultMaxRetries,
      baseDelayMs: LIMITS.reconnectBaseDelayMs,
      maxDelayMs: LIMITS.reconnectMaxDelayMs,
      jitter: 0.2,
      ...options.reconnect,
    };
  }

  /**
   * Connects; resolves on the first open. A bridge that cannot be reached yet is retried with the backoff, so this
   * rejects only when it gives up: refused for good (UNAUTHORIZED, TOKEN_REVOKED, FORBIDDEN) or out of retries.
   */
  start(): Promise<void> {
    this.stopped = false;
    return new Promise((resolve, reject) => {
      const onOpen = () => {
        this.off('closed', onClosed);
        resolve();
      };
      const onClosed = (info: { code: number; reason: string }) => {
        this.off('open', onOpen);
        reject(new BridgeConnectionError(info.reason || `connection failed (${info.code})`, info.code));
      };
      this.once('open', onOpen);
      this.once('closed', onClosed);
      this.open();
    });
  }

  send(message: unknown): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  /** Closes for good (no reconnect). */
  close(): void {
    this.stopped = true;
    this.retryTimer?.cancel();
    this.releaseKeepAlive();
    this.stopHeartbeat();
    if (this.ws && this.ws.readyState !== WebSocket.CLOSED) this.ws.close(1000, 'client closing');
    else this.finish({ code: 1000, reason: 'client closing' });
  }

  private setState(state: ConnectionState): void {
    this.state = state;
    this.emit('state', state);
  }

  private open(): void {
    this.setState(this.attempt === 0 ? 'connecting' : 'reconnecting');
    const url = new URL(this.options.url);
    const headers: Record<string, string> = {};
    if (this.options.carrier === 'query') url.searchParams.set('token', this.options.token);
    else headers.authorization = `Bearer ${this.options.token}`;
    const ws = (this.options.createSocket ?? ((u, h) => new WebSocket(u, { headers: h, perMessageDeflate: false })))(url.toString(), headers);
    this.ws = ws;
    let refusal: string | undefined;
    ws.on('open', () => {
      // The upgrade completes even for a refused token (W1), so an open socket does not reset the backoff; the
      // first pong does. A bridge that accepts and drops at once is retried ever more slowly, not every second.
      this.confirmed = false;
      this.setState('open');
      this.startHeartbeat();
      this.emit('open');
    });
    ws.on('message', (data) => {
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (message.type === 'pong') {
        if (!this.confirmed) {
          this.confirmed = true;
          this.attempt = 0;
        }
        this.pongDeadline?.cancel();
        this.pongDeadline = undefined;
        this.emit('pong', this.clock.now());
        return;
      }
      // A connection error arrives as one error frame before the close: remember its code.
      if (message.type === 'error' && message.event_id === undefined && typeof message.code === 'string' && FINAL_REASONS.has(message.code)) refusal = message.code;
      this.emit('message', message);
    });
    ws.on('error', () => {}); // a 'close' always follows and carries what matters
    ws.on('close', (code, reasonBuffer) => {
      if (this.ws !== ws) return;
      this.stopHeartbeat();
      const reason = reasonBuffer.toString() || refusal || '';
      this.emit('down', { code, reason });
      this.afterClose({ code, reason });
    });
  }

  private afterClose(info: { code: number; reason: string }): void {
    if (this.stopped || FINAL_REASONS.has(info.reason) || !this.reconnect.enabled || this.attempt >= this.reconnect.maxRetries) {
      return this.finish(info);
    }
    this.attempt++;
    const delayMs = backoffDelay(this.attempt, this.reconnect, this.random);
    this.setState('reconnecting');
    this.emit('reconnecting', { attempt: this.attempt, delayMs });
    this.keepAlive ??= setInterval(() => {}, 1 << 30);
    this.retryTimer = this.clock.setTimer(delayMs, () => {
      this.releaseKeepAlive();
      this.open();
    });
  }

  private releaseKeepAlive(): void {
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }

  private finish(info: { code: number; reason: string }): void {
    this.releaseKeepAlive();
    if (this.state === 'closed') return; // already finished (or never started)
    this.setState('closed');
    this.emit('closed', info);
  }

  private startHeartbeat(): void {
    const every = this.options.heartbeatIntervalMs ?? LIMITS.heartbeatIntervalMs;
    const timeout = this.options.heartbeatTimeoutMs ?? LIMITS.heartbeatTimeoutMs;
    const beat = () => {
      this.heartbeat = this.clock.setTimer(every, beat);
      if (!this.send({ type: 'ping' })) return;
      this.pongDeadline ??= this.clock.setTimer(timeout, () => {
        // No pong in time: the connection is dead even if TCP has not noticed; drop it and reconnect.
        this.pongDeadline = undefined;
        this.ws?.terminate();
      });
    };
    this.heartbeat = this.clock.setTimer(every, beat);
  }

  private stopHeartbeat(): void {
    this.heartbeat?.cancel();
    this.pongDeadline?.cancel();
    this.heartbeat = undefined;
    this.pongDeadline = undefined;
  }
}

export class BridgeConnectionError extends Error {
  constructor(
    message: string,
    readonly closeCode: number,
  ) {
    super(message);
  }
}
