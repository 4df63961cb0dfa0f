// Log lines for things a client can make happen as often as it likes (refused handshakes, evicted sessions,
// failed accepts): one line per occurrence would let a single client fill the disk. So the first of a burst is
// logged at once, the next ones at most once per window with their counts by kind, and a window without any
// ends the burst. Each occurrence is still counted by the caller's metric.
import type { Clock, Timer } from '../shared/clock.js';

/** The window of the bridge's burst logs: at most one line per kind of thing per 10 s. */
export const LOG_WINDOW_MS = 10_000;

export type Counts<K extends string> = Map<K, number>;

export const countTotal = (counts: Counts<string>) => [...counts.values()].reduce((a, b) => a + b, 0);

export interface Burst<K extends string> {
  /** When the burst began, on the wall clock (it is shown). */
  since: number;
  /** The last occurrence, on the monotonic clock (windows are durations: a step of the wall clock moves none). */
  last: number;
  counts: Counts<K>;
}

export interface BurstLogOptions<K extends string> {
  clock: Clock;
  windowMs: number;
  /** Writes one line for the occurrences since the previous line (never empty). */
  report(counts: Counts<K>, total: number): void;
  /** Written once a window has passed without an occurrence; none when omitted. */
  quiet?(): void;
}

export class BurstLog<K extends string> {
  private unlogged: Counts<K> = new Map();
  private timer: Timer | undefined;
  private burst: Burst<K> | undefined;

  constructor(private readonly options: BurstLogOptions<K>) {}

  /** `count` occurrences at once (rows of one commit): one occurrence of the burst, counted `count` times. */
  record(kind: K, count = 1): void {
    const now = this.options.clock.monotonic();
    if (!this.burst || now - this.burst.last >= this.options.windowMs)
      this.burst = { since: this.options.clock.now(), last: now, counts: new Map() };
    this.burst.last = now;
    this.burst.counts.set(kind, (this.burst.counts.get(kind) ?? 0) + count);
    this.unlogged.set(kind, (this.unlogged.get(kind) ?? 0) + count);
    if (!this.timer) this.logWindow(); // the first of a burst at once
  }

  /** The burst under way (an occurrence within the last window), or undefined. */
  recent(): Burst<K> | undefined {
    const { burst } = this;
    return burst && this.options.clock.monotonic() - burst.last < this.options.windowMs ? burst : undefined;
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Writes the line for what is not logged yet now, rather than at the end of the window (a shutdown); stops. */
  flush(): void {
    this.stop();
    const total = countTotal(this.unlogged);
    if (total) this.options.report(this.unlogged, total);
    this.unlogged = new Map();
  }

  private logWindow(): void {
    const total = countTotal(this.unlogged);
    if (total === 0) {
      this.timer = undefined;
      this.options.quiet?.();
      return;
    }
    this.options.report(this.unlogged, total);
    this.unlogged = new Map();
    this.timer = this.options.clock.setTimer(this.options.windowMs, () => this.logWindow());
  }
}
