// Whether a connection is alive, on the bridge's clock: a connection on which no message arrives for idleCloseMs
// is closed (L7), and one silent for wsPingAfterMs is sent a WebSocket ping, which every client answers by itself;
// no pong and no message within wsPongTimeoutMs of the ping leaving the bridge, and it is taken for dead (L22).
// One timer per connection, moved on lazily: a frame only notes the time, the timer looks when it fires.
import { LIMITS } from '../../generated/index.js';
import type { Clock, Timer } from '../shared/clock.js';
import { errorText } from '../shared/error-text.js';
import type { Logger } from '../shared/logger.js';
import { BurstLog, LOG_WINDOW_MS } from './burst-log.js';
import type { Socket } from './transport.js';

export interface LivenessOptions {
  clock: Clock;
  log: Logger;
  /** No message for this long closes the connection (L7). */
  idleCloseMs: number;
  /** Nothing (no message, no pong) for this long sends a ping; 0 never does (L22). */
  pingAfterMs: number;
  /** A ping unanswered this long after it left the bridge ends the connection (L22). */
  pongTimeoutMs: number;
}

/** Why a connection was taken for dead: the `reason` label of bridge_heartbeat_timeouts_total. */
export type DeadReason = 'silent' | 'no_pong';

/** What a dead connection gets: HEARTBEAT_TIMEOUT with this text. */
export type OnDead = (text: string) => void;

/** The liveness of every connection of a bridge: their watches, and what they found. */
export class Heartbeats {
  private readonly counted: Record<DeadReason, number> = { silent: 0, no_pong: 0 };
  private readonly burst: BurstLog<DeadReason>;

  constructor(private readonly options: LivenessOptions) {
    this.burst = new BurstLog({
      clock: options.clock,
      windowMs: LOG_WINDOW_MS,
      report: (reasons, closed) =>
        options.log.info(
          { closed, reasons: Object.fromEntries(reasons) },
          `connections closed with HEARTBEAT_TIMEOUT: ${closed}`,
        ),
    });
  }

  /** Starts watching a connection that has just opened. */
  watch(socket: Socket, onDead: OnDead): Liveness {
    return new Liveness(this.options, socket, (reason, text) => {
      this.counted[reason]++;
      this.burst.record(reason);
      onDead(text);
    });
  }

  counters(): Record<DeadReason, number> {
    return { ...this.counted };
  }

  stop(): void {
    this.burst.stop();
  }
}

export class Liveness {
  private lastMessage: number;
  private lastHeard: number;
  /** The ping out, when it was asked for and when it left the bridge; undefined when none is out. */
  private pingAskedAt: number | undefined;
  private pingLeftAt: number | undefined;
  private timer: Timer;
  private dueAt: number;
  private stopped = false;

  constructor(
    private readonly options: LivenessOptions,
    private readonly socket: Socket,
    private readonly dead: (reason: DeadReason, text: string) => void,
  ) {
    this.lastMessage = this.lastHeard = options.clock.monotonic();
    this.dueAt = this.next();
    this.timer = options.clock.setTimer(this.dueAt - this.lastMessage, () => this.check());
  }

  /** A message arrived: the connection is alive and not silent. */
  message(): void {
    this.lastMessage = this.lastHeard = this.options.clock.monotonic();
    this.pingAskedAt = this.pingLeftAt = undefined;
  }

  /** A pong arrived: alive, though a client that only answers pings is still closed by L7. */
  pong(): void {
    this.lastHeard = this.options.clock.monotonic();
    this.pingAskedAt = this.pingLeftAt = undefined;
  }

  stop(): void {
    this.stopped = true;
    this.timer.cancel();
  }

  private get pings(): boolean {
    return this.options.pingAfterMs > 0 && this.socket.ping !== undefined;
  }

  /** When the timer must next look. */
  private next(): number {
    const { idleCloseMs, pingAfterMs, pongTimeoutMs } = this.options;
    let due = this.lastMessage + idleCloseMs;
    if (this.pingLeftAt !== undefined) due = Math.min(due, this.pingLeftAt + pongTimeoutMs);
    else if (this.pingAskedAt === undefined && this.pings) due = Math.min(due, this.lastHeard + pingAfterMs);
    return due;
  }

  private arm(at: number): void {
    this.timer.cancel();
    this.dueAt = at;
    this.timer = this.options.clock.setTimer(at - this.options.clock.monotonic(), () => this.check());
  }

  private check(): void {
    if (this.stopped) return;
    const { clock, idleCloseMs, pingAfterMs, pongTimeoutMs } = this.options;
    const now = clock.monotonic();
    const silentFor = now - this.lastMessage;
    if (silentFor >= idleCloseMs) {
      this.stop();
      const text = errorText('HEARTBEAT_TIMEOUT', 'silent', {
        seconds: Math.round(silentFor / 1000),
        interval: LIMITS.heartbeatIntervalMs / 1000,
      });
      return this.dead('silent', text);
    }
    if (this.pingLeftAt !== undefined && now - this.pingLeftAt >= pongTimeoutMs) {
      // A pong that has arrived and not been read yet is heard first (a clock moved in a test outruns the reads).
      const askedAt = this.pingAskedAt!;
      const judge = () => {
        if (this.stopped) return;
        if (this.pingAskedAt !== askedAt) return this.arm(this.next()); // heard meanwhile
        this.stop();
        this.dead(
          'no_pong',
          errorText('HEARTBEAT_TIMEOUT', 'no_pong', { seconds: Math.round((clock.monotonic() - askedAt) / 1000) }),
        );
      };
      return this.socket.afterReads ? this.socket.afterReads(judge) : judge();
    }
    if (this.pingAskedAt === undefined && this.pings && now - this.lastHeard >= pingAfterMs) {
      const askedAt = (this.pingAskedAt = now);
      // The deadline runs from the ping's leaving: one queued behind a backlog cannot be answered sooner.
      this.socket.ping!(() => this.left(askedAt));
    }
    this.arm(this.next());
  }

  private left(askedAt: number): void {
    if (this.stopped || this.pingAskedAt !== askedAt || this.pingLeftAt !== undefined) return;
    this.pingLeftAt = this.options.clock.monotonic();
    const due = this.pingLeftAt + this.options.pongTimeoutMs;
    if (due < this.dueAt) this.arm(due);
  }
}
