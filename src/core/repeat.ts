// A repeating timer on the bridge's clock (sweeps, retention), so the test clock can fire it.
import type { Clock, Timer } from '../shared/clock.js';

export function every(clock: Clock, intervalMs: number, run: () => void): Timer {
  let timer: Timer;
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    timer = clock.setTimer(intervalMs, tick);
    run();
  };
  timer = clock.setTimer(intervalMs, tick);
  return {
    cancel() {
      stopped = true;
      timer.cancel();
    },
  };
}
