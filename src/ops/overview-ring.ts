// The overview's history (D8): every overviewSampleMs on the bridge's clock, one sample of this node's gauges and
// of what happened since the previous sample, kept in a ring of overviewWindowMs. In memory only: the bridge holds
// these numbers already, and an hour of them is 138-177 KB as JSON (measured, idle to busy). Fed by the core's observer; no I/O.
import {
  LIMITS,
  type ErrorCode,
  type OverviewNode,
  type OverviewNow,
  type OverviewSample,
} from '../../generated/index.js';
import type { Bridge } from '../core/bridge.js';
import type { BridgeObserver } from '../core/observer.js';
import type { Clock, Timer } from '../shared/clock.js';

/** Latencies kept per interval: exact percentiles up to this many replies, a uniform sample of them beyond (D8). */
export const LATENCIES_PER_SAMPLE = 1024;

/** What the ring reads from the bridge when it takes a sample (and when the overview asks for `now`). */
export interface OverviewGauges {
  now(): OverviewNow;
  /** Token fragments forwarded since start (a running total). */
  fragmentsForwarded(): number;
}

/** The gauges, read from the bridge when asked (the same numbers /metrics reads). */
export function bridgeGauges(bridge: () => Bridge): OverviewGauges {
  return {
    now() {
      const { apps, agents, eventsInFlight } = bridge().stats();
      return {
        app_connections: apps,
        agent_connections: agents,
        apps_online: bridge().appsOnline(),
        agents_online: agents,
        events_in_flight: eventsInFlight,
      };
    },
    fragmentsForwarded: () => bridge().tokensForwarded(),
  };
}

export interface OverviewRingOptions {
  clock: Clock;
  gauges: OverviewGauges;
  sampleMs?: number;
  windowMs?: number;
  /** [0, 1), for the reservoir sample (tests pass a fixed sequence). */
  random?: () => number;
}

/** An interval without replies: nothing to sort. */
const NO_LATENCIES = new Float64Array(0);

/** The `p` quantile (0 < p <= 1) of sorted values, by nearest rank. */
function quantile(sorted: Float64Array, p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

export class OverviewRing {
  readonly sampleMs: number;
  readonly windowMs: number;
  private readonly capacity: number;
  private readonly samples: OverviewSample[] = [];
  private readonly clock: Clock;
  private readonly gauges: OverviewGauges;
  private readonly random: () => number;
  private timer: Timer | undefined;
  /** The `at` of the next sample: a multiple of sampleMs, so that the samples of every node line up. */
  private nextAt = 0;
  // What happened since the last sample.
  private accepted = 0;
  private rejected = 0;
  private replied = 0;
  private errors: Partial<Record<ErrorCode, number>> = {};
  private fragmentsAtLast = 0;
  private readonly latencies = new Float64Array(LATENCIES_PER_SAMPLE);
  /** Replies seen this interval; the first LATENCIES_PER_SAMPLE fill `latencies`, later ones replace at random. */
  private latencyCount = 0;

  constructor(options: OverviewRingOptions) {
    this.clock = options.clock;
    this.gauges = options.gauges;
    this.sampleMs = options.sampleMs ?? LIMITS.overviewSampleMs;
    this.windowMs = options.windowMs ?? LIMITS.overviewWindowMs;
    this.capacity = Math.floor(this.windowMs / this.sampleMs);
    this.random = options.random ?? Math.random;
  }

  /** Counts the core's events; cheap on the per-event path (a few increments, one array write). */
  readonly observer: BridgeObserver = {
    eventAccepted: () => {
      this.accepted++;
    },
    eventDelivered: () => {},
    eventFirstFragment: () => {},
    eventRejected: (_event, code) => {
      this.rejected++;
      this.countError(code);
    },
    eventEnded: (event) => {
      if (event.code) this.countError(event.code);
      if (event.outcome === 'replied') {
        this.replied++;
        this.keepLatency(event.latency_ms);
      }
    },
    sessionOpened: () => {},
    sessionEvicted: () => {},
  };

  /** Starts sampling at the next multiple of sampleMs. What happened before counts in the first sample. */
  start(): Timer {
    this.fragmentsAtLast = this.gauges.fragmentsForwarded();
    const now = this.clock.now();
    this.nextAt = now - (now % this.sampleMs) + this.sampleMs;
    this.schedule();
    return { cancel: () => this.stop() };
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** This node as the overview shows it: its gauges now, and its samples taken after `after`. */
  node(nodeId: string, after?: number): OverviewNode {
    return { node_id: nodeId, now: this.gauges.now(), samples: this.samplesAfter(after) };
  }

  /** The samples taken after `after` (epoch ms; all when undefined), oldest first. */
  samplesAfter(after?: number): OverviewSample[] {
    const first = Math.max(0, this.samples.length - this.capacity);
    if (after === undefined) return this.samples.slice(first);
    let i = this.samples.length;
    while (i > first && this.samples[i - 1]!.at > after) i--;
    return this.samples.slice(i);
  }

  /** Takes the sample of the interval ending at `at` and starts the next interval. */
  sample(at: number): OverviewSample {
    const now = this.gauges.now();
    const fragments = this.gauges.fragmentsForwarded();
    const kept = Math.min(this.latencyCount, LATENCIES_PER_SAMPLE);
    const sorted = kept ? this.latencies.slice(0, kept).sort() : NO_LATENCIES; // most intervals of an idle node have none
    const taken: OverviewSample = {
      at,
      app_connections: now.app_connections,
      agent_connections: now.agent_connections,
      events_in_flight: now.events_in_flight,
      accepted: this.accepted,
      rejected: this.rejected,
      fragments: fragments - this.fragmentsAtLast,
      replied: this.replied,
      errors: this.errors,
      latency_p50_ms: sorted.length ? quantile(sorted, 0.5) : null,
      latency_p99_ms: sorted.length ? quantile(sorted, 0.99) : null,
    };
    this.samples.push(taken);
    // Trimmed a ring's worth at a time: a shift per sample copies the whole ring, which a test clock advanced by
    // 45 days (777,600 samples) turned into seconds of a blocked event loop.
    if (this.samples.length >= 2 * this.capacity) this.samples.splice(0, this.samples.length - this.capacity);
    this.accepted = this.rejected = this.replied = this.latencyCount = 0;
    this.errors = {};
    this.fragmentsAtLast = fragments;
    return taken;
  }

  private schedule(): void {
    // Never longer than one interval: after the wall clock stepped back an hour, sampling goes on every sampleMs
    // (each sample stamped one interval after the last) rather than stopping for the hour.
    const delay = Math.min(this.sampleMs, Math.max(0, this.nextAt - this.clock.now()));
    this.timer = this.clock.setTimer(delay, () => {
      this.sample(this.nextAt);
      // A timer that fired late (a busy event loop) does not shift the grid: the next sample is the next multiple.
      const now = this.clock.now();
      this.nextAt = Math.max(this.nextAt + this.sampleMs, now - (now % this.sampleMs) + this.sampleMs);
      this.schedule();
    });
  }

  private countError(code: ErrorCode): void {
    this.errors[code] = (this.errors[code] ?? 0) + 1;
  }

  /** Reservoir sampling (Vitter's algorithm R): every reply of the interval is kept with the same chance. */
  private keepLatency(ms: number): void {
    const seen = this.latencyCount++;
    if (seen < LATENCIES_PER_SAMPLE) {
      this.latencies[seen] = ms;
      return;
    }
    const slot = Math.floor(this.random() * (seen + 1));
    if (slot < LATENCIES_PER_SAMPLE) this.latencies[slot] = ms;
  }
}
