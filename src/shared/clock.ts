// All time in the bridge and in its SDK goes through a Clock, so heartbeats, timeouts, graces and backoffs can be
// tested (and moved by the conformance suite's test clock) without sleeping. Shared by both sides, so it imports
// nothing of either.
//
// Two readings: `now()` is the wall clock, for instants people read or that are stored (created_at, expires_at,
// received_at); `monotonic()` never steps, for every duration measured (rate-limit refills, latency_ms, windows).
// An operator or NTP can step the wall clock by hours or more; a duration taken from it would then be negative or
// huge (a rate limit locked an app out for the length of the step, latency_ms read 7,208,154 across a +2 h step).

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch: the wall clock, which can step (only for instants, never for durations). */
  now(): number;
  /** Milliseconds from an arbitrary origin, never stepping with the wall clock: for every duration. */
  monotonic(): number;
  /** Runs `fn` once, `delayMs` from now (a duration: unaffected by steps of the wall clock). */
  setTimer(delayMs: number, fn: () => void): Timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer(delayMs, fn) {
    const handle = setTimeout(fn, delayMs);
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};

/**
 * The system clock run `k` times faster: a timer of `delayMs` fires after `delayMs / k` real milliseconds, and both
 * readings advance `k` ms per real millisecond from the moment it was made. It serves the conformance suite's
 * `--time-scale K` (BRIDGE_TIME_SCALE): a client built on it pings every 30/K s and backs off from 1/K s, so the
 * heartbeat and backoff rules are judged in seconds instead of minutes. Not for production: every duration the
 * client measures (timeouts, session TTLs) shrinks with it. `k` must be a finite number ≥ 1; 1 is the system clock.
 */
export function scaledClock(k: number): Clock {
  if (!Number.isFinite(k) || k < 1) throw new RangeError(`a time scale must be a finite number >= 1, got ${k}`);
  if (k === 1) return systemClock;
  const wallOrigin = Date.now();
  const monotonicOrigin = performance.now();
  return {
    now: () => Math.floor(wallOrigin + (Date.now() - wallOrigin) * k),
    monotonic: () => monotonicOrigin + (performance.now() - monotonicOrigin) * k,
    setTimer: (delayMs, fn) => systemClock.setTimer(delayMs / k, fn),
  };
}

interface Pending {
  /** On the monotonic reading. */
  due: number;
  seq: number;
  fn: () => void;
  real?: NodeJS.Timeout;
}

/**
 * A clock that can be moved forward. `frozen` (unit tests): time stands still between `advance` calls.
 * Otherwise (BRIDGE_TEST_CLOCK=1): real time passes and real timers fire as usual, and `advance` adds an offset
 * on top, firing every timer that falls due, in due order, including timers that those timers set. `advance`
 * moves both readings; `stepWall` moves the wall clock alone, as an operator or NTP would.
 */
export class AdjustableClock implements Clock {
  private offset = 0;
  private wallStep = 0;
  private seq = 0;
  private readonly pending = new Set<Pending>();
  /** Advances in progress (a timer may advance the clock too), and the timers set meanwhile, not armed yet. */
  private advancing = 0;
  private readonly unarmed: Pending[] = [];
  private readonly frozenAt: number | undefined;
  private readonly frozenMonotonic: number | undefined;

  constructor(options: { frozen: boolean; start?: number }) {
    this.frozenAt = options.frozen ? (options.start ?? Date.now()) : undefined;
    this.frozenMonotonic = options.frozen ? 0 : undefined;
  }

  /** Whole milliseconds, as Date.now(): within an advance the offset follows the fractional monotonic reading. */
  now(): number {
    return Math.floor((this.frozenAt ?? Date.now()) + this.offset + this.wallStep);
  }

  monotonic(): number {
    return (this.frozenMonotonic ?? performance.now()) + this.offset;
  }

  /** How far `advance` has moved this clock in all (what real time alone would not have). */
  get advanced(): number {
    return this.offset;
  }

  setTimer(delayMs: number, fn: () => void): Timer {
    const timer: Pending = { due: this.monotonic() + Math.max(0, delayMs), seq: this.seq++, fn };
    this.pending.add(timer);
    // Within an advance most timers fire before it ends (a 5 s sampler, 777,600 times over 45 days): a real
    // timer is armed for those still pending once it has.
    if (this.frozenAt === undefined) {
      if (this.advancing) this.unarmed.push(timer);
      else this.arm(timer);
    }
    return { cancel: () => this.drop(timer) };
  }

  /**
   * Moves time forward by `ms`, stepping through every timer that falls due on the way: each runs with `now()`
   * and `monotonic()` at its own due time, as if the time had really passed.
   */
  advance(ms: number): number {
    if (!(ms >= 0)) throw new RangeError(`advance needs a non-negative number of milliseconds, got ${ms}`);
    const target = this.monotonic() + ms;
    const offset = this.offset + ms; // exactly `ms` more in all, whatever real time passes meanwhile
    this.advancing++;
    try {
      for (let next = this.nextDue(target); next; next = this.nextDue(target)) {
        this.moveTo(next.due);
        this.fire(next);
      }
    } finally {
      this.advancing--;
    }
    this.offset = Math.max(this.offset, offset);
    if (!this.advancing) for (const timer of this.unarmed.splice(0)) if (this.pending.has(timer)) this.arm(timer);
    return this.now();
  }

  /** Steps the wall clock alone, forward or back (no time passes: no timer fires, `monotonic()` stays). */
  stepWall(ms: number): number {
    if (!Number.isFinite(ms)) throw new RangeError(`stepWall needs a finite number of milliseconds, got ${ms}`);
    this.wallStep += ms;
    return this.now();
  }

  private arm(timer: Pending): void {
    timer.real = setTimeout(() => this.fire(timer), Math.max(0, timer.due - this.monotonic()));
    timer.real.unref();
  }

  private moveTo(time: number): void {
    this.offset += Math.max(0, time - this.monotonic());
  }

  private nextDue(until: number): Pending | undefined {
    let first: Pending | undefined;
    for (const t of this.pending) {
      if (t.due <= until && (!first || t.due < first.due || (t.due === first.due && t.seq < first.seq))) first = t;
    }
    return first;
  }

  private fire(timer: Pending): void {
    if (!this.pending.has(timer)) return;
    this.drop(timer);
    timer.fn();
  }

  private drop(timer: Pending): void {
    this.pending.delete(timer);
    if (timer.real) clearTimeout(timer.real);
  }
}
