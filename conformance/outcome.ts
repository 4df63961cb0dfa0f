// How one scenario ended, in both roles: what `judge()` (results.ts) turns into requirement verdicts. The rule it
// serves: the root cause is blamed once. A scenario records every failure it saw (a frame that breaks a frame rule
// does not stop it), the requirements whose checks it actually ran and saw hold (only those can pass), and, when it
// stopped early, why: a failure (its remaining requirements are then *blocked* by the failed one), a setup that went
// wrong (errored: nobody blamed) or a client that broke the harness contract (client role).
import type { TranscriptLine } from './actor.js';
import type { PlacedConnection } from './nodes.js';

export type ScenarioStatus = 'passed' | 'failed' | 'errored' | 'skipped';

export interface Failure {
  /** The requirements this failure breaks (a step's judged checks, a frame rule, or a barrier's own requirement). */
  requirements: string[];
  reason: string;
  /** The step (from 1) at which it was seen. */
  step?: number;
}

/** Allowed, but not what the requirement recommends (a slow answer, a lenient reading): never a failure. */
export interface Warning {
  requirement: string;
  reason: string;
}

export interface Outcome {
  status: ScenarioStatus;
  /** Why it did not pass: the first failure's reason, the setup's surprise, the skip's cause. */
  reason?: string;
  /** With `skipped`: the user chose it (a setting given as null), so its requirements are waived, not missing. */
  waived?: boolean;
  /** The step at which the scenario stopped (failed or errored). */
  failedStep?: number;
  /** Every requirement some failure of this scenario breaks (the union of `failures`). */
  failedRequirements?: string[];
  /** Every failure seen, in order; the last one stopped the scenario unless it ran to its end. */
  failures?: Failure[];
  /** Requirements whose checks here all ran and held. Only these can be passed by this scenario. */
  checked?: string[];
  /** Why it stopped before its end: `by` the failed requirement(s) that kept it from its remaining checks (they are
   *  then *blocked*); without `by`, a setup that did not go as the scenario needs (they are *errored*). */
  stop?: { step?: number; reason: string; by?: string[] };
  /** Set when the client under test broke the harness contract (it exited, or ignored the time scale): nothing
   *  left in the scenario could be judged, and that is the harness's finding, not a requirement's. */
  harness?: string;
  warnings?: Warning[];
  /** With several nodes: each connection the scenario opened, in order, and the node it used. */
  connections?: PlacedConnection[];
  durationMs: number;
  transcript: TranscriptLine[];
}
