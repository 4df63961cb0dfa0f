// Runs a role's client scenarios side by side, `jobs` at a time. Each has its own mock bridge (its own port) and
// its own client process, and spends its time watching that client on real time (a backoff, a heartbeat period),
// so running them at once costs the machine little and the run takes about as long as its longest scenario.
import type { Outcome } from '../outcome.js';
import { runClientScenario, type ClientRunOptions, type ClientScenario } from './run.js';

/**
 * Scenarios run at once by default. On a quiet 2-core machine, with our example clients, 4 and 8 took the same time
 * (real time: agent 168 s both, app 164 s and 170 s; --time-scale 10: 19-22 s), the run being as long as its longest
 * scenario; fewer at once start fewer clients together, which under load made a 1 s backoff timer 0.4-0.7 s late.
 */
export const DEFAULT_JOBS = 4;

/** Runs every scenario, at most `jobs` at once; `done` is told of each as it ends. Results in the given order. */
export async function runClientScenarios(
  scenarios: ClientScenario[],
  options: ClientRunOptions,
  jobs: number,
  done: (scenario: ClientScenario, outcome: Outcome) => void = () => {},
): Promise<Outcome[]> {
  const outcomes: Outcome[] = new Array(scenarios.length);
  // The slow ones first: the run then ends with the short ones filling the lanes, not with one long one alone.
  const order = scenarios.map((_, i) => i).sort((a, b) => Number(!!scenarios[b]!.slow) - Number(!!scenarios[a]!.slow));
  let next = 0;
  const lane = async () => {
    for (let n = next++; n < order.length; n = next++) {
      const i = order[n]!;
      const s = scenarios[i]!;
      outcomes[i] = await runClientScenario(s, options);
      done(s, outcomes[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, scenarios.length)) }, lane));
  return outcomes;
}
