// From scenario outcomes to requirement verdicts: a requirement fails when a scenario failed at a step that checks
// it, passes when a scenario that names it passed, is skipped when all such scenarios were skipped, inconclusive
// when they all failed on other requirements first, and untested when no scenario names it.
// Known gaps listed in an expected-failures file are reported as such, and a listed one that passes is flagged.
import type { Outcome } from './run.js';
import type { Level, Requirement, Scenario } from './scenario.js';

export type Verdict = 'passed' | 'failed' | 'skipped' | 'untested' | 'inconclusive' | 'expected-failure' | 'unexpectedly-passing';

export interface RequirementResult extends Requirement {
  verdict: Verdict;
  scenarios: string[];
}

export interface ScenarioResult extends Outcome {
  id: string;
  file: string;
  title: string;
  requirements: string[];
}

export interface RunResult {
  target: string;
  startedAt: string;
  durationMs: number;
  hasClock: boolean;
  scenarios: ScenarioResult[];
  requirements: RequirementResult[];
  counts: { passed: number; failed: number; skipped: number };
  /** Failed requirements by level, expected failures excluded. */
  failedByLevel: Record<Level, number>;
}

export function judge(
  requirements: Map<string, Requirement>,
  scenarios: ScenarioResult[],
  expectedFailures: Set<string>,
): Pick<RunResult, 'requirements' | 'counts' | 'failedByLevel'> {
  const results: RequirementResult[] = [];
  const failedByLevel: Record<Level, number> = { MUST: 0, SHOULD: 0, MAY: 0 };
  for (const req of requirements.values()) {
    const mine = scenarios.filter((s) => s.requirements.includes(req.id));
    // A failed scenario fails the requirements of its failing step (all of its own when the step names none);
    // its other requirements count for nothing either way: they were checked before the failure, or never reached.
    const failedHere = (s: ScenarioResult) => s.status === 'failed' && (s.failedRequirements ?? s.requirements).includes(req.id);
    let verdict: Verdict =
      mine.length === 0 ? 'untested' : mine.some(failedHere) ? 'failed' : mine.some((s) => s.status === 'passed') ? 'passed' : mine.some((s) => s.status === 'skipped') ? 'skipped' : 'inconclusive';
    if (expectedFailures.has(req.id)) verdict = verdict === 'failed' ? 'expected-failure' : verdict === 'passed' ? 'unexpectedly-passing' : verdict;
    if (verdict === 'failed') failedByLevel[req.level]++;
    results.push({ ...req, verdict, scenarios: mine.map((s) => s.id) });
  }
  const count = (status: Outcome['status']) => scenarios.filter((s) => s.status === status).length;
  return { requirements: results, counts: { passed: count('passed'), failed: count('failed'), skipped: count('skipped') }, failedByLevel };
}
