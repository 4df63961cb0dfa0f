// What the bridge holds in bytes for each WebSocket connection, bounded per connection, per app, per agent and per
// node: the frames queued for the client and not yet taken by the network (W17, L19), and the bytes of a message
// the client has begun and not finished (L20). Over a bound, a connection already closing that holds part of that
// sum is destroyed (the one holding the most of them), else the connection holding the most is closed with the
// spec'd error; each counted and logged a burst at a time.
import { type ErrorCode } from '../../generated/index.js';
import type { Clock, Timer } from '../shared/clock.js';
import { errorText } from '../shared/error-text.js';
import type { Logger } from '../shared/logger.js';
import { BurstLog, LOG_WINDOW_MS } from './burst-log.js';
import {
  HeldBytes,
  type Holding,
  type Overrun,
  type Owner,
  type SharedBound,
  type SharedBounds,
} from './held-bytes.js';
import type { Connection } from './engine.js';
import type { Socket } from './transport.js';

export interface ByteBoundsOptions {
  clock: Clock;
  log: Logger;
  /** Bytes queued for one connection (W17). */
  sendBufferMaxBytes: number;
  /** Bytes queued for all the connections of an app, of an agent, of the node (L19). */
  send: SharedBounds;
  /** Bytes of messages received in part, the same three sums (L20). */
  partial: SharedBounds;
  /** How long a message may take to arrive whole from its first byte (L20). */
  partialTimeoutMs: number;
  /** Ends a client's connection with a connection error (the core's own refusal: error frame, close, drop). */
  refuse(conn: Connection, code: ErrorCode, error: string): void;
}

/** What the bounds have done since start, for metrics. */
export interface ByteBoundCounters {
  /** Connections closed with SLOW_CONSUMER, by the sum that was over (W17's own: `connection`). */
  slowConsumers: Record<'connection' | SharedBound, number>;
  /** Connections closed with INCOMPLETE_MESSAGE, by the sum that was over or for a message too slow (`timeout`). */
  incompleteMessages: Record<SharedBound | 'timeout', number>;
  /** Connections closed already (told why) and destroyed when they still held the most, or a message too slow. */
  destroyed: Record<SharedBound | 'timeout', number>;
}

/** One WebSocket connection, as the bounds see it. */
export interface Tracked {
  /** The socket's sends, bounded: what the rest of the core writes to. */
  readonly conn: Connection;
  /** The adapter's report: bytes received of a message not yet whole, and whether one began since the last. */
  partial(bytes: number, restarted: boolean): void;
  /** The socket is gone: what it held is no longer held. */
  gone(): void;
}

interface Entry {
  socket: Socket;
  conn: Connection;
  owner: Owner | undefined;
  /** Told to close (by a bound, or by anything else the core closes it for): its sends go out unchecked. */
  closing: boolean;
  /** Destroyed by a bound: it holds nothing any more. */
  destroyed: boolean;
  sent: Holding<Entry>;
  received: Holding<Entry>;
  /** When the message being received began, on the bridge's clock; undefined between messages. */
  partialSince: number | undefined;
  partialTimer: Timer | undefined;
}

/**
 * Over a bound, a connection told to close already goes first, destroyed: it is lost anyway, and what it holds is
 * freed without closing one still in service.
 */
const closingFirst = (h: Holding<Entry>) => h.of.closing && !h.of.destroyed;

const RECEIVED_OPTIONS = { first: closingFirst };

type SendBound = keyof ByteBoundCounters['slowConsumers'];
type PartialBound = keyof ByteBoundCounters['incompleteMessages'];

export class ByteBounds {
  private readonly sent: HeldBytes<Entry>;
  private readonly received: HeldBytes<Entry>;
  private readonly counted: ByteBoundCounters = {
    slowConsumers: { connection: 0, app: 0, agent: 0, total: 0 },
    incompleteMessages: { app: 0, agent: 0, total: 0, timeout: 0 },
    destroyed: { app: 0, agent: 0, total: 0, timeout: 0 },
  };
  /** Over a sum of queued bytes, every connection counted in it is read again before one is let go. */
  private readonly sentOptions = { refresh: (h: Holding<Entry>) => this.queued(h.of), first: closingFirst };
  private readonly slowLog: BurstLog<SendBound>;
  private readonly incompleteLog: BurstLog<PartialBound>;
  private readonly destroyedLog: BurstLog<PartialBound>;

  constructor(private readonly options: ByteBoundsOptions) {
    this.sent = new HeldBytes(options.send);
    this.received = new HeldBytes(options.partial);
    const { clock, log } = options;
    this.slowLog = new BurstLog({
      clock,
      windowMs: LOG_WINDOW_MS,
      report: (bounds, closed) =>
        log.warn({ closed, bounds: Object.fromEntries(bounds) }, `slow consumers closed: ${closed}`),
    });
    this.incompleteLog = new BurstLog({
      clock,
      windowMs: LOG_WINDOW_MS,
      report: (bounds, closed) =>
        log.warn(
          { closed, bounds: Object.fromEntries(bounds) },
          `connections closed for incomplete messages: ${closed}`,
        ),
    });
    this.destroyedLog = new BurstLog({
      clock,
      windowMs: LOG_WINDOW_MS,
      report: (bounds, destroyed) =>
        log.warn(
          { destroyed, bounds: Object.fromEntries(bounds) },
          `closing connections destroyed, still holding the most: ${destroyed}`,
        ),
    });
  }

  /**
   * A socket whose handshake completed: `owner` once its token is known and the connection accepted; none for a
   * handshake refused (it is closing already, and counts in the node's sum of partial messages until it is gone).
   */
  track(socket: Socket, owner: Owner | undefined): Tracked {
    const entry = {
      socket,
      owner,
      closing: !owner,
      destroyed: false,
      partialSince: undefined,
      partialTimer: undefined,
    } as unknown as Entry;
    entry.sent = this.sent.open(entry, owner);
    entry.received = this.received.open(entry, owner);
    entry.conn = {
      id: socket.id,
      send: (frame) => this.send(entry, frame),
      close: (code, reason) => {
        entry.closing = true;
        socket.close(code, reason);
      },
    };
    return {
      conn: entry.conn,
      partial: (bytes, restarted) => this.partial(entry, bytes, restarted),
      gone: () => this.gone(entry),
    };
  }

  counters(): ByteBoundCounters {
    return structuredClone(this.counted);
  }

  /** Bytes queued for every connection now, each read from its socket (for a gauge, when scraped). */
  sendBufferBytes(): number {
    return this.sent.refreshAll((h) => this.queued(h.of));
  }

  /** Bytes received of messages not yet whole, on every connection now. */
  partialMessageBytes(): number {
    return this.received.total;
  }

  stop(): void {
    this.slowLog.stop();
    this.incompleteLog.stop();
    this.destroyedLog.stop();
  }

  // ---- sending (W17, L19) ------------------------------------------------------------------------------

  /** The frame is not queued when it is its own connection that a bound closes. */
  private send(entry: Entry, frame: string): void {
    const { socket } = entry;
    if (entry.closing) return socket.send(frame); // the error before its close; the transport drops what follows
    const queued = socket.bufferedBytes() + frame.length;
    const { sendBufferMaxBytes } = this.options;
    if (queued > sendBufferMaxBytes) {
      return this.closeSlow(entry, 'connection', errorText('SLOW_CONSUMER', 'unread', { bytes: sendBufferMaxBytes }));
    }
    // Queues only shrink between two writes: the sums are upper bounds, read again only when one looks over.
    this.sent.set(entry.sent, queued);
    const over = this.sent.overrun(entry.sent, this.sentOptions);
    if (over) {
      this.overSent(over);
      if (over.holder === entry.sent) return;
    }
    socket.send(frame);
  }

  private queued(entry: Entry): number {
    return entry.destroyed ? 0 : entry.socket.bufferedBytes();
  }

  private overSent(over: Overrun<Entry>): void {
    const victim = over.holder.of;
    if (victim.closing) return this.destroy(victim, over.bound);
    const held = over.holder.bytes;
    const { bound, limit } = over;
    const owner = victim.owner!;
    const text =
      bound === 'total'
        ? errorText('SLOW_CONSUMER', 'total', { limit, bytes: held })
        : bound === 'app'
          ? errorText('SLOW_CONSUMER', 'app', { limit, app_id: owner.id, bytes: held })
          : errorText('SLOW_CONSUMER', 'agent', { limit, agent_id: owner.id, bytes: held });
    this.closeSlow(victim, bound, text);
  }

  private closeSlow(entry: Entry, bound: SendBound, text: string): void {
    entry.closing = true; // before the refusal: its error frame goes out unchecked
    this.counted.slowConsumers[bound]++;
    this.slowLog.record(bound);
    this.options.refuse(entry.conn, 'SLOW_CONSUMER', text);
  }

  // ---- receiving (L20) ---------------------------------------------------------------------------------

  private partial(entry: Entry, bytes: number, restarted: boolean): void {
    if (entry.destroyed) return;
    this.received.set(entry.received, bytes);
    if (bytes === 0) entry.partialSince = undefined;
    else if (restarted || entry.partialSince === undefined) {
      entry.partialSince = this.options.clock.now();
      entry.partialTimer ??= this.watchPartial(entry, this.options.partialTimeoutMs);
    }
    const over = this.received.overrun(entry.received, RECEIVED_OPTIONS);
    if (!over) return;
    const victim = over.holder.of;
    if (victim.closing) return this.destroy(victim, over.bound);
    const { bound, bytes: sum, limit } = over;
    const owner = victim.owner!;
    const text =
      bound === 'total'
        ? errorText('INCOMPLETE_MESSAGE', 'total', { bytes: sum, limit })
        : bound === 'app'
          ? errorText('INCOMPLETE_MESSAGE', 'app', { app_id: owner.id, bytes: sum, limit })
          : errorText('INCOMPLETE_MESSAGE', 'agent', { agent_id: owner.id, bytes: sum, limit });
    this.closeIncomplete(victim, bound, text);
  }

  /** One timer per connection while a message is under way, moved on when the message it watched was finished. */
  private watchPartial(entry: Entry, delay: number): Timer {
    const { clock, partialTimeoutMs } = this.options;
    return clock.setTimer(delay, () => {
      entry.partialTimer = undefined;
      if (entry.partialSince === undefined || entry.destroyed) return;
      const takenMs = clock.now() - entry.partialSince;
      if (takenMs < partialTimeoutMs) {
        entry.partialTimer = this.watchPartial(entry, partialTimeoutMs - takenMs);
        return;
      }
      // The rest of the message may have arrived and not been read yet (a clock moved in a test outruns the reads).
      const since = entry.partialSince;
      const judge = () => {
        if (entry.destroyed || entry.partialSince !== since) return;
        if (entry.closing) return this.destroy(entry, 'timeout');
        const text = errorText('INCOMPLETE_MESSAGE', 'timeout', {
          seconds: Math.round((clock.now() - since) / 1000),
          limit: Math.round(partialTimeoutMs / 1000),
        });
        this.closeIncomplete(entry, 'timeout', text);
      };
      if (entry.socket.afterReads) entry.socket.afterReads(judge);
      else judge();
    });
  }

  private closeIncomplete(entry: Entry, bound: PartialBound, text: string): void {
    entry.closing = true;
    this.counted.incompleteMessages[bound]++;
    this.incompleteLog.record(bound);
    this.options.refuse(entry.conn, 'INCOMPLETE_MESSAGE', text);
  }

  // ---- ends --------------------------------------------------------------------------------------------

  /** A connection told already and still holding the most: its socket goes now, and what it held with it. */
  private destroy(entry: Entry, bound: PartialBound): void {
    if (!entry.socket.terminate || entry.destroyed) return;
    entry.destroyed = true;
    this.counted.destroyed[bound]++;
    this.destroyedLog.record(bound);
    entry.partialTimer?.cancel();
    entry.partialTimer = undefined;
    this.sent.set(entry.sent, 0);
    this.received.set(entry.received, 0);
    entry.socket.terminate();
  }

  private gone(entry: Entry): void {
    entry.partialTimer?.cancel();
    entry.partialTimer = undefined;
    entry.destroyed = true;
    this.sent.close(entry.sent);
    this.received.close(entry.received);
  }
}
