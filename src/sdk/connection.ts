// One resilient WebSocket to the bridge, the one state machine of both the app client and the agent connector:
// authenticates in the handshake, calls it ready only when the first ping is answered (a refused token is upgraded
// too, W1), keeps the bridge's explanation of a close, checks every frame against the endpoint's generated open
// schema, pings every heartbeat interval and declares the connection dead when no pong follows in time, and
// reconnects with exponential backoff and jitter (for ever when maxRetries is -1). All time goes through an
// injectable clock, so tests run the heartbeat and the backoff without sleeping.
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { ERROR_CODES, ERRORS, LIMITS, describeErrors, type PingMessage } from '../../generated/index.js';
import { systemClock, type Clock, type Timer } from '../shared/clock.js';
import {
  connectionErrorIn,
  invalidFrame,
  type CloseInfo,
  type ConnectionError,
  type ConnectionEvents,
  type ConnectionState,
  type Inbound,
} from './connection-events.js';
import {
  backoffDelay,
  mayRetry,
  type BridgeSocket,
  type ConnectionOptions,
  type Endpoint,
  type ReconnectOptions,
} from './connection-options.js';

/** Close reasons after which reconnecting cannot help (connection errors with `retry: false` in the catalogue): the same token or endpoint would be
 * refused again, or another connection took this one's place. */
const FINAL_REASONS: ReadonlySet<string> = new Set(
  ERROR_CODES.filter((code) => ERRORS[code].scope === 'connection' && !ERRORS[code].retry),
);

/** `In`: what the bridge sends on the endpoint (its generated union); `Out`: what the client sends there. */
export class BridgeConnection<In extends { type: string }, Out> extends EventEmitter<ConnectionEvents<In>> {
  private ws: BridgeSocket | undefined;
  private readonly clock: Clock;
  private readonly reconnect: ReconnectOptions;
  private readonly random: () => number;
  private heartbeat: Timer | undefined;
  private pongDeadline: Timer | undefined;
  private retryTimer: Timer | undefined;
  private attempt = 0;
  private accepted = false;
  private closingError: ConnectionError | undefined;
  /** Holds the process open while a reconnect is pending (the clock's timers do not). */
  private keepAlive: NodeJS.Timeout | undefined;
  private stopped = false;
  state: ConnectionState = 'closed';

  constructor(
    private readonly options: ConnectionOptions,
    private readonly endpoint: Endpoint,
  ) {
    super();
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.reconnect = {
      enabled: true,
      maxRetries: endpoint.maxRetries,
      baseDelayMs: LIMITS.reconnectBaseDelayMs,
      maxDelayMs: LIMITS.reconnectMaxDelayMs,
      jitter: 0.2,
      ...options.reconnect,
    };
  }

  /**
   * Connects; resolves once the bridge has accepted the token (`ready`). A bridge that cannot be reached yet is
   * retried with the backoff, so this rejects (BridgeConnectionError) only when it gives up: refused for good
   * (a connection error with `retry: false`: UNAUTHORIZED, TOKEN_REVOKED, FORBIDDEN, CONNECTION_REPLACED) or out of retries.
   */
  start(): Promise<void> {
    this.stopped = false;
    return new Promise((resolve, reject) => {
      const onReady = () => {
        this.off('closed', onClosed);
        resolve();
      };
      const onClosed = (info: CloseInfo) => {
        this.off('ready', onReady);
        reject(new BridgeConnectionError(info));
      };
      this.once('ready', onReady);
      this.once('closed', onClosed);
      this.open();
    });
  }

  /** The bridge accepted this socket (its first pong came); false again once its close has been reported (`down`). */
  get ready(): boolean {
    return this.accepted;
  }

  /** The connection error the bridge sent on the current or last socket, if any: why it was refused or closed. */
  get connectionError(): ConnectionError | undefined {
    return this.closingError;
  }

  /** Sends now if the socket is open; false when it is not (nothing is queued here). */
  send(message: Out | PingMessage): boolean {
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
    const ws = (this.options.createSocket ?? ((u, h) => new WebSocket(u, { headers: h, perMessageDeflate: false })))(
      url.toString(),
      headers,
    );
    this.ws = ws;
    this.closingError = undefined;
    ws.on('open', () => {
      // The upgrade completes even for a refused token (W1), so an open socket neither makes the connection ready nor
      // resets the backoff; the pong to this first ping does (the bridge never answers a refused connection's
      // frames). A bridge that accepts and drops at once is retried ever more slowly, not every second.
      this.accepted = false;
      this.setState('open');
      this.startHeartbeat();
      this.emit('open');
      this.send({ type: 'ping' });
    });
    ws.on('message', (data) => {
      let frame: unknown;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (!this.endpoint.validate(frame)) {
        this.emit('invalid', invalidFrame(frame, describeErrors(this.endpoint.validate.errors)));
        return;
      }
      const message = frame as In;
      if (message.type === 'pong') return this.onPong();
      this.closingError = connectionErrorIn(message) ?? this.closingError;
      this.emit('message', message as Inbound<In>);
    });
    ws.on('error', () => {}); // a 'close' always follows and carries what matters
    ws.on('close', (code, reasonBuffer) => {
      if (this.ws !== ws) return;
      this.stopHeartbeat();
      const refusal = this.closingError && FINAL_REASONS.has(this.closingError.code) ? this.closingError.code : '';
      const info = { code, reason: reasonBuffer.toString() || refusal };
      this.emit('down', info);
      this.accepted = false;
      this.afterClose(info);
    });
  }

  private onPong(): void {
    this.pongDeadline?.cancel();
    this.pongDeadline = undefined;
    this.emit('pong', this.clock.now());
    if (this.accepted) return;
    this.accepted = true;
    this.attempt = 0;
    this.emit('ready');
  }

  private afterClose(info: CloseInfo): void {
    if (
      this.stopped ||
      FINAL_REASONS.has(info.reason) ||
      !this.reconnect.enabled ||
      !mayRetry(this.attempt, this.reconnect.maxRetries)
    ) {
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

  private finish(info: CloseInfo): void {
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

/** Why `start()` gave up: the last close (its owner adds what it knows, such as the connection error). */
export class BridgeConnectionError extends Error {
  readonly closeCode: number;
  readonly reason: string;

  constructor(info: CloseInfo) {
    super(info.reason || `connection closed (${info.code})`);
    this.closeCode = info.code;
    this.reason = info.reason;
  }
}
