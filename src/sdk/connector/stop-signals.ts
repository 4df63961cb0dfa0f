// How bridge-connector answers SIGTERM and SIGINT (C8): the first signal stops with the drain, a later one ends the
// drain at once. A signal within SAME_STOP_MS of the first counts as the same one: Ctrl-C in a terminal reaches every
// process of the foreground group, and a parent such as npm forwards it once more, so one keypress often arrives
// twice and must not cut the drain it just began.
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import type { StopResult } from './connector.js';

export const SAME_STOP_MS = 1_000;

/** What a signal stops: a Connector. */
export interface Stoppable {
  stop(): Promise<StopResult>;
  close(): Promise<StopResult>;
}

export interface StopSignalOptions {
  clock: Clock;
  logger: Logger;
  /** Called once, on the first signal, with the stop under way. */
  stopping(result: Promise<StopResult>): void;
}

/** The listener for SIGTERM and SIGINT. */
export function stopOnSignals(target: Stoppable, o: StopSignalOptions): (signal: NodeJS.Signals) => void {
  let firstAt: number | undefined;
  let cut = false;
  return (signal) => {
    const now = o.clock.monotonic(); // a duration: a step of the wall clock must not make one stop two
    if (firstAt === undefined) {
      firstAt = now;
      o.logger.info({ signal }, 'stopping (a second signal ends the events in flight at once)');
      o.stopping(target.stop());
      return;
    }
    if (cut || now - firstAt < SAME_STOP_MS) return;
    cut = true;
    o.logger.warn({ signal }, 'second signal: ending the events in flight now');
    void target.close();
  };
}
