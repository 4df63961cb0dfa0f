// All time in the bridge and in its SDK goes through a Clock, so heartbeats, timeouts, graces and backoffs can be
// tested (and moved by the conformance suite's test clock) without sleeping. Shared by both sides, so it imports
// nothing of either.

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once, `delayMs` from now. */
  setTimer(delayMs: number, fn: () => void): Timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(delayMs, fn) {
    const handle = setTimeout(fn, delayMs);
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};

interface Pending {
  due: number;
  seq: number;
  fn: () => void;
  real?: NodeJS.Timeout;
}

/**
 * A clock that can be moved forward. `frozen` (unit tests): time stands still between `advance` calls.
 * Otherwise (BRIDGE_TEST_CLOCK=1): real time passes and real timers fire as usual, and `advance` adds an offset
 * on top, firing every timer that falls due, in due order, including timers that those timers set.
 */
export class AdjustableClock implements Clock {
  private offset = 0;
  private seq = 0;
  private readonly pending = new Set<Pending>();
  private readonly frozenAt: number | undefined;

  constructor(options: { frozen: boolean; start?: number }) {
    this.frozenAt = options.frozen ? (options.start ?? Date.now()) : undefined;
  }

  now(): number {
    return (this.frozenAt ?? Date.now()) + this.offset;
  }

  setTimer(delayMs: number, fn: () => void): Timer {
    const timer: Pending = { due: this.now() + Math.max(0, delayMs), seq: this.seq++, fn };
    this.pending.add(timer);
    if (this.frozenAt === undefined) {
      timer.real = setTimeout(() => this.fire(timer), Math.max(0, delayMs));
      timer.real.unref();
    }
    return { cancel: () => this.drop(timer) };
  }

  /**
   * Moves time forward by `ms`, stepping through every timer that falls due on the way: each runs with `now()`
   * at its own due time, as if the time had really passed.
   */
  advance(ms: number): number {
    if (!(ms >= 0)) throw new RangeError(`advance needs a non-negative number of milliseconds, got ${ms}`);
    const target = this.now() + ms;
    for (let next = this.nextDue(target); next; next = this.nextDue(target)) {
      this.moveTo(next.due);
      this.fire(next);
    }
    this.moveTo(target);
    return this.now();
  }

  private moveTo(time: number): void {
    this.offset += Math.max(0, time - this.now());
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
