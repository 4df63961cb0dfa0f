// The bridge's clock: the system's, or with BRIDGE_TEST_CLOCK one the admin API moves, on every node at once.
import type { Config } from '../config.js';
import type { ControlHandlers } from '../cluster/control-handlers.js';
import { AdjustableClock, systemClock, type Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import type { Peers } from './peers.js';

export interface BridgeClock {
  clock: Clock;
  /** Present only in test-clock mode: the clock the admin API moves. */
  testClock: AdjustableClock | undefined;
}

/** `given`: a test's clock (a frozen AdjustableClock), moved by the admin API only with BRIDGE_TEST_CLOCK. */
export function chooseClock(config: Config, given: Clock | undefined, log: Logger): BridgeClock {
  const clock = given ?? (config.testClock ? new AdjustableClock({ frozen: false }) : systemClock);
  if (config.testClock)
    log.warn({}, 'BRIDGE_TEST_CLOCK is on: POST /admin/v1/test/clock moves time. Never use this in production.');
  return { clock, testClock: config.testClock && clock instanceof AdjustableClock ? clock : undefined };
}

/** Another node's test clock moved: this one follows, never backwards. */
export function clockHandlers({ clock, testClock }: BridgeClock): Pick<ControlHandlers, 'clock'> {
  return {
    clock(change) {
      testClock?.advance(Math.max(0, change.to - clock.now()));
    },
  };
}

/** After the test clock moved to `now`: resolves once every node's clock has, so the answer holds on all of them. */
export function clockMoved(peers: Peers): (now: number) => Promise<void> {
  return async (now) => void (await peers.ask({ op: 'clock', to: now }));
}
