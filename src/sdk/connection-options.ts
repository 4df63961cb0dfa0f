// What a connection to the bridge is told (endpoint, token, heartbeat, reconnect policy, the protocol of its
// endpoint) and the backoff that policy gives, apart from the state machine so that they can be read alone.
import type { Validator } from '../../generated/index.js';
import type { Clock } from '../shared/clock.js';

export type Carrier = 'header' | 'query';

export interface ReconnectOptions {
  enabled: boolean;
  /** Attempts after a drop before giving up; 0 never reconnects, -1 (any negative number) reconnects for ever. */
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
  /** Opens the socket (tests may substitute one). Default: a `ws` WebSocket, per-message deflate off. */
  createSocket?: (url: string, headers: Record<string, string>) => BridgeSocket;
}

/**
 * What the connection uses of a socket: the slice of a `ws` WebSocket it calls, so that the client's types need no
 * package of ws's (a `ws` WebSocket is one).
 */
export interface BridgeSocket {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: 'open', listener: () => void): this;
  on(event: 'message', listener: (data: { toString(): string }) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'close', listener: (code: number, reason: { toString(): string }) => void): this;
}

/** The delay before reconnect attempt `attempt` (1-based): base doubling up to the cap, minus up to `jitter`. */
export function backoffDelay(
  attempt: number,
  o: Pick<ReconnectOptions, 'baseDelayMs' | 'maxDelayMs' | 'jitter'>,
  random: () => number,
): number {
  // A connection that never gives up counts attempts without end: doubling stops once the cap is reached, so the
  // arithmetic stays finite however many there have been.
  const doublings = Math.min(attempt - 1, Math.ceil(Math.log2(Math.max(1, o.maxDelayMs / o.baseDelayMs))));
  const full = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** doublings);
  return Math.round(full * (1 - o.jitter * random()));
}

/** Whether a connection that has made `attempt` reconnect attempts may make another. */
export function mayRetry(attempt: number, maxRetries: number): boolean {
  return maxRetries < 0 || attempt < maxRetries;
}

/** One endpoint's side of the protocol: what the bridge may send on it, and how often to retry it. */
export interface Endpoint {
  /**
   * The generated open validator of the endpoint's union (the connection's `In`): fields of a later protocol version
   * are not errors (C2); anything else it refuses is reported as `invalid`.
   */
  validate: Validator<unknown>;
  /** Reconnect attempts when the options do not say. */
  maxRetries: number;
}
