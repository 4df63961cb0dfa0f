// Whether an hourly sweep may trust the wall clock (F2). Retention and expiry are instants on the wall clock
// (created_at + TTL, received_at + retention days), so a sweep on a clock stepped 400 days forward would delete the
// whole audit trail, the event log and every session at once, and there is no undoing it. The monotonic clock
// cannot step: between two sweeps the wall clock should move as far as it does. A difference of up to a day is an
// ordinary correction (NTP, a suspended laptop overnight) and is taken as the new normal; beyond, the sweep deletes
// nothing. The clock is compared with where it was at the last sweep that ran (or at start), not with the last
// refused one, so a step stays refused for as long as it stands: until the clock is put back within a day of
// what passed, or the bridge restarts (which takes the clock as it finds it).
import type { Clock } from '../shared/clock.js';

/** How far the wall clock may move beyond (or behind) the monotonic one between two sweeps: a day. */
export const SWEEP_CLOCK_STEP_MAX_MS = 24 * 3_600_000;

export type SweepVerdict = { trusted: true } | { trusted: false; stepMs: number };

export class SweepClock {
  /** The wall clock minus the monotonic one at the last sweep that ran (or at start). */
  private offset: number;

  constructor(
    private readonly clock: Clock,
    private readonly maxStepMs: number = SWEEP_CLOCK_STEP_MAX_MS,
  ) {
    this.offset = clock.now() - clock.monotonic();
  }

  /**
   * Whether a sweep may go ahead now: the wall clock has moved within `maxStepMs` of the time that passed since
   * the last sweep that ran. Otherwise how far it moved beyond that (`stepMs`, negative: behind).
   */
  check(): SweepVerdict {
    const offset = this.clock.now() - this.clock.monotonic();
    const stepMs = offset - this.offset;
    if (Math.abs(stepMs) > this.maxStepMs) return { trusted: false, stepMs };
    this.offset = offset;
    return { trusted: true };
  }
}

/** "400 days ahead of", "2 hours behind": how a step reads in the log line. */
export function describeStep(stepMs: number): string {
  const abs = Math.abs(stepMs);
  const amount =
    abs >= SWEEP_CLOCK_STEP_MAX_MS
      ? `${(abs / SWEEP_CLOCK_STEP_MAX_MS).toFixed(1)} days`
      : `${(abs / 3_600_000).toFixed(1)} hours`;
  return `${amount} ${stepMs > 0 ? 'ahead of' : 'behind'}`;
}
