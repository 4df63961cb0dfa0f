// How one scenario ended, in both roles: what `judge()` (results.ts) turns into requirement verdicts. The rule it
// serves: the root cause is blamed once. A scenario records every failure it saw (a frame that breaks a frame rule
// does not stop it), the requirements whose checks it actually ran and saw hold (only those can pass), and, when it
// stopped early, why: a failure (its remaining requirements are then *blocked* by the failed one), a setup that went
// wrong (errored: nobody blamed) or a client that broke the harness contract (client role).
import type { ReportScenario, ReportScenarioFailure, ReportScenarioWarning } from '../generated/index.js';

/** One failure: the requirements it breaks (a step's judged checks, a frame rule, a barrier's own rule). */
export type Failure = ReportScenarioFailure;

/** Allowed, but not what the requirement recommends (a slow answer, a lenient reading): never a failure. */
export type Warning = ReportScenarioWarning;

/** How a scenario ended: a scenario of the JSON report (spec/conformance.yaml ReportScenario) less its identity. */
export type Outcome = Omit<ReportScenario, 'id' | 'file' | 'title' | 'requirements'>;
