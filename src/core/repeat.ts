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

/**
 * Runs `run` on request, one run at a time: the requests made while it runs become one more run after it, never a
 * queue of them (a sweep that outlasts its interval, or the test clock firing days of them at once).
 */
export function oneAtATime(run: () => Promise<unknown>): { request(): void; stop(): void } {
  let running = false;
  let again = false;
  let stopped = false;
  const start = (): void => {
    running = true;
    again = false;
    // `run` logs its own failures; a rejection it lets through must not stop the runs after it.
    void run()
      .catch(() => undefined)
      .then(() => {
        running = false;
        if (again && !stopped) start();
      });
  };
  return {
    request() {
      if (stopped) return;
      if (running) again = true;
      else start();
    },
    stop() {
      stopped = true;
    },
  };
}
