// From scenario outcomes to requirement verdicts and one overall verdict that the console, JSON, JUnit and HTML
// all state the same way.
//   failed   - a scenario failed at a step that checks it (or a frame broke it);
//   passed   - not failed, and a scenario that checks it passed;
//   waived   - left out by the user's own choice: a setting given as null, or listed in the baseline file
//              (--expected-failures) and failed;
//   skipped  - every scenario checking it was skipped (no test clock, an unsupported provisioning action, …);
//   errored  - its scenarios could not reach it (provisioning or a setup step went wrong, another check failed first);
//   untested - no selected scenario checks it.
// "conforms" (exit 0) only when every MUST of the profile passed or was waived; a MUST that failed: exit 1; a MUST
// neither passed, waived nor failed (nothing tested, skipped, errored): exit 3, "incomplete".
import type { Outcome } from './run.js';
import type { Level, Profile, Requirement } from './scenario.js';
import type { SuiteVersion } from './suite-version.js';

export type Verdict = 'passed' | 'failed' | 'waived' | 'skipped' | 'errored' | 'untested';

export const VERDICTS: readonly Verdict[] = ['passed', 'failed', 'waived', 'skipped', 'errored', 'untested'];

export interface RequirementResult extends Requirement {
  verdict: Verdict;
  /** Why it is waived, skipped or errored; for a failure, the failing scenario's reason. */
  why?: string;
  /** In the baseline file (--expected-failures): a listed one that passes is flagged, so the list can shrink. */
  baseline?: boolean;
  scenarios: string[];
}

export interface ScenarioResult extends Outcome {
  id: string;
  file: string;
  title: string;
  requirements: string[];
}

export interface Overall {
  conforms: boolean;
  /** 0 conforms, 1 a MUST failed, 3 incomplete. (2: the run could not start.) */
  exitCode: 0 | 1 | 3;
  headline: string;
}

export interface RunResult {
  /** Which suite judged, and by which requirement set (suite-version.ts): a verdict is only comparable under both. */
  suite: SuiteVersion;
  role: 'server' | 'client';
  profile: Profile;
  /** The URL checked (with several nodes: all of them, separated by ", "), or the client command. */
  target: string;
  /** With several nodes of one bridge: their URLs, in the order given (each scenario's `connections` name them). */
  nodes?: string[];
  /** How registrations were made (server role). */
  provisioning?: string;
  /** The target settings used, and the file they came from. */
  settings?: Record<string, unknown>;
  settingsFile?: string;
  baselineFile?: string;
  startedAt: string;
  durationMs: number;
  hasClock: boolean;
  /** Organizations the run created and could not remove (none when clean-up worked). */
  leftBehind?: string[];
  scenarios: ScenarioResult[];
  requirements: RequirementResult[];
  /** Requirements by verdict; `tested` = passed + failed. */
  counts: Record<Verdict | 'tested', number>;
  /** Scenarios by status. */
  scenarioCounts: Record<Outcome['status'], number>;
  /** Failed requirements by level (baseline entries excluded). */
  failedByLevel: Record<Level, number>;
  overall: Overall;
}

function verdictOf(req: Requirement, mine: ScenarioResult[]): { verdict: Verdict; why?: string } {
  const failing = mine.find((s) => s.status === 'failed' && (s.failedRequirements ?? []).includes(req.id));
  if (failing) return { verdict: 'failed', why: `${failing.id}: ${failing.reason}` };
  if (mine.some((s) => s.status === 'passed')) return { verdict: 'passed' };
  if (mine.length === 0) return { verdict: 'untested', why: 'no selected scenario checks it' };
  const waived = mine.find((s) => s.status === 'skipped' && s.waived);
  if (waived && mine.every((s) => s.status === 'skipped' && s.waived)) return { verdict: 'waived', why: waived.reason };
  const skipped = mine.find((s) => s.status === 'skipped');
  if (skipped && mine.every((s) => s.status === 'skipped')) return { verdict: 'skipped', why: skipped.reason };
  const stopped = mine.find((s) => s.status === 'errored') ?? mine.find((s) => s.status === 'failed');
  return {
    verdict: 'errored',
    why:
      stopped?.status === 'failed'
        ? `${stopped.id} stopped at another check first`
        : `${stopped?.id}: ${stopped?.reason}`,
  };
}

export function judge(
  requirements: Requirement[],
  scenarios: ScenarioResult[],
  baseline: Set<string>,
): Pick<RunResult, 'requirements' | 'counts' | 'scenarioCounts' | 'failedByLevel' | 'overall'> {
  const results: RequirementResult[] = [];
  const failedByLevel: Record<Level, number> = { MUST: 0, SHOULD: 0, MAY: 0 };
  for (const req of requirements) {
    const mine = scenarios.filter((s) => s.requirements.includes(req.id));
    let { verdict, why } = verdictOf(req, mine);
    const listed = baseline.has(req.id);
    if (listed && verdict === 'failed') {
      verdict = 'waived';
      why = `listed as a known failure in the baseline file (${why})`;
    }
    if (verdict === 'failed') failedByLevel[req.level]++;
    results.push({
      ...req,
      verdict,
      ...(why ? { why } : {}),
      ...(listed ? { baseline: true } : {}),
      scenarios: mine.map((s) => s.id),
    });
  }
  const counts = Object.fromEntries(VERDICTS.map((v) => [v, results.filter((r) => r.verdict === v).length])) as Record<
    Verdict | 'tested',
    number
  >;
  counts.tested = counts.passed + counts.failed;
  const statuses: Outcome['status'][] = ['passed', 'failed', 'errored', 'skipped'];
  const scenarioCounts = Object.fromEntries(
    statuses.map((st) => [st, scenarios.filter((s) => s.status === st).length]),
  ) as Record<Outcome['status'], number>;
  return { requirements: results, counts, scenarioCounts, failedByLevel, overall: overall(results, failedByLevel) };
}

function overall(results: RequirementResult[], failedByLevel: Record<Level, number>): Overall {
  const musts = results.filter((r) => r.level === 'MUST');
  if (failedByLevel.MUST > 0)
    return {
      conforms: false,
      exitCode: 1,
      headline: `does not conform: ${failedByLevel.MUST} MUST requirement(s) failed`,
    };
  const open = musts.filter((r) => r.verdict !== 'passed' && r.verdict !== 'waived');
  if (results.every((r) => r.verdict !== 'passed' && r.verdict !== 'failed'))
    return { conforms: false, exitCode: 3, headline: 'incomplete: no requirement was tested' };
  if (open.length)
    return {
      conforms: false,
      exitCode: 3,
      headline: `incomplete: ${open.length} MUST requirement(s) not tested (${open.map((r) => `${r.id} ${r.verdict}`).join(', ')})`,
    };
  const waived = musts.filter((r) => r.verdict === 'waived').length;
  return {
    conforms: true,
    exitCode: 0,
    headline: `conforms: every MUST requirement passed${waived ? ` (${waived} waived by the user's settings or baseline)` : ''}`,
  };
}
