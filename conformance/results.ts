// From scenario outcomes to requirement verdicts and one overall verdict that the console, JSON, JUnit and HTML
// all state the same way. The root cause is blamed once: a requirement fails only where a check of it failed, and a
// scenario stopped by that failure leaves its other requirements *blocked* by it, never failed, never passed.
//   passed   - some scenario ran every check of it and they held; none failed;
//   warning  - graded, not failed: a SHOULD or MAY that failed, or a MUST that held with a finding allowed but
//              lenient (a slow answer);
//   failed   - a MUST a check of which failed (a frame rule included), outside the baseline;
//   blocked  - not reached: the scenarios checking it stopped at another requirement's failure (named), or the client
//              under test broke the harness contract;
//   errored  - not reached: its scenarios' set-up went wrong (provisioning refused, a set-up step's surprise);
//   skipped  - every scenario checking it was skipped (no test clock, an unsupported provisioning action, …);
//   waived   - left out by the user: a setting given as null, or its failures all listed in the baseline file;
//   untested - no selected scenario ran a check of it.
// "conforms" (exit 0) only when every MUST of the profile passed (or warned) or was waived and the baseline is not
// stale; a MUST failed or a stale baseline entry: exit 1; a MUST neither passed nor failed: exit 3, "incomplete".
import { covers, type BaselineEntry, type BaselineVerdict } from './baseline.js';
import type {
  ConformanceReport,
  ReportOverall,
  ReportRequirement,
  ReportRequirementFailure,
  ReportScenario,
  ReportVerdict,
} from '../generated/index.js';
import type { Failure, Outcome } from './outcome.js';
import type { Level, Requirement } from './scenario.js';

export type Verdict = ReportVerdict;

const EVERY_VERDICT: Record<Verdict, true> = {
  passed: true,
  warning: true,
  failed: true,
  blocked: true,
  errored: true,
  skipped: true,
  waived: true,
  untested: true,
};
export const VERDICTS = Object.keys(EVERY_VERDICT) as readonly Verdict[];

/** One failure of a requirement, in one scenario (`baseline`: listed in the baseline file, so it does not count). */
export type RequirementFailure = ReportRequirementFailure;

/** A requirement's verdict and why (spec/conformance.yaml ReportRequirement). */
export type RequirementResult = ReportRequirement;

/** How a scenario ended, with its identity (spec/conformance.yaml ReportScenario). */
export type ScenarioResult = ReportScenario;

export type Overall = ReportOverall;

/** The JSON report (`--report-json`; spec/conformance.yaml ConformanceReport): every report states the same. */
export type RunResult = ConformanceReport;

type Judged = Pick<RunResult, 'requirements' | 'counts' | 'scenarioCounts' | 'failedByLevel' | 'overall' | 'baseline'>;

const HARNESS = 'harness';

function failuresOf(id: string, scenarios: ScenarioResult[], baseline: BaselineEntry[]): RequirementFailure[] {
  return scenarios.flatMap((s) =>
    failuresIn(s)
      .filter((f) => f.requirements.includes(id))
      .map((f) => ({
        scenario: s.id,
        ...(f.step ? { step: f.step } : {}),
        reason: f.reason,
        ...(baseline.some((e) => covers(e, id, s.id, f.step)) ? { baseline: true } : {}),
      })),
  );
}

/** Its failures; an outcome that lists only `failedRequirements` (made by older code): one failure of those. */
const failuresIn = (s: ScenarioResult): Failure[] =>
  s.failures ??
  (s.failedRequirements?.length
    ? [
        {
          requirements: s.failedRequirements,
          reason: s.reason ?? 'failed',
          ...(s.failedStep ? { step: s.failedStep } : {}),
        },
      ]
    : []);

/** What a scenario checked to the end; an outcome that does not say (made by older code): all of a passed one's. */
const checkedIn = (s: ScenarioResult): string[] => s.checked ?? (s.status === 'passed' ? s.requirements : []);

const where = (f: { scenario: string; step?: number }) => `${f.scenario}${f.step ? ` step ${f.step}` : ''}`;

/** What kept a scenario from checking `id`: the failed requirements it stopped at, or the harness contract. */
function blockers(s: ScenarioResult, id: string): string[] {
  if (s.harness) return [HARNESS];
  return (s.stop?.by ?? []).filter((b) => b !== id);
}

function notReached(
  req: Requirement,
  mine: ScenarioResult[],
): Pick<RequirementResult, 'verdict' | 'why' | 'blockedBy'> {
  if (mine.length === 0) return { verdict: 'untested', why: 'no selected scenario checks it' };
  if (mine.every((s) => s.status === 'skipped')) {
    const waived = mine.every((s) => s.waived);
    return { verdict: waived ? 'waived' : 'skipped', why: mine.find((s) => !waived || s.waived)!.reason! };
  }
  const blocked = mine.filter((s) => blockers(s, req.id).length);
  if (blocked.length) {
    const by = [...new Set(blocked.flatMap((s) => blockers(s, req.id)))];
    const named = by.map((b) => (b === HARNESS ? 'the harness contract (the client did not stay to the end)' : b));
    return {
      verdict: 'blocked',
      blockedBy: by,
      why: `blocked by ${named.join(', ')}: not reached in ${blocked.map((s) => s.id).join(', ')}`,
    };
  }
  const errored = mine.find((s) => s.status === 'errored' || s.stop);
  if (errored) return { verdict: 'errored', why: `${errored.id}: ${errored.stop?.reason ?? errored.reason}` };
  return {
    verdict: 'untested',
    why: `no check of it ran in ${mine.map((s) => s.id).join(', ')} (outside the profile, or not reached)`,
  };
}

function verdictOf(req: Requirement, scenarios: ScenarioResult[], baseline: BaselineEntry[]): RequirementResult {
  const failures = failuresOf(req.id, scenarios, baseline);
  const mine = scenarios.filter((s) => s.requirements.includes(req.id));
  const names = [...new Set([...mine.map((s) => s.id), ...failures.map((f) => f.scenario)])];
  const warnings = scenarios.flatMap((s) =>
    (s.warnings ?? []).filter((w) => w.requirement === req.id).map((w) => ({ scenario: s.id, reason: w.reason })),
  );
  const base: RequirementResult = {
    ...req,
    verdict: 'untested',
    scenarios: names,
    ...(failures.length ? { failures } : {}),
    ...(warnings.length ? { warnings } : {}),
    ...(baseline.some((e) => e.requirement === req.id) ? { baseline: true } : {}),
  };
  const open = failures.filter((f) => !f.baseline);
  if (open.length) {
    const first = `${where(open[0]!)}: ${open[0]!.reason}${open.length > 1 ? ` (and ${open.length - 1} more)` : ''}`;
    return req.level === 'MUST'
      ? { ...base, verdict: 'failed', why: first }
      : { ...base, verdict: 'warning', why: `${req.level} not met: ${first}` };
  }
  if (failures.length)
    return { ...base, verdict: 'waived', why: `its failures are listed in the baseline file (${where(failures[0]!)})` };
  if (mine.some((s) => checkedIn(s).includes(req.id))) {
    if (warnings.length)
      return { ...base, verdict: 'warning', why: `${warnings[0]!.scenario}: ${warnings[0]!.reason}` };
    return { ...base, verdict: 'passed' };
  }
  return { ...base, ...notReached(req, mine) };
}

/** What became of each baseline entry: used by a failure, stale (what it names now holds) or unused. */
function baselineVerdicts(
  entries: BaselineEntry[],
  results: RequirementResult[],
  scenarios: ScenarioResult[],
): BaselineVerdict[] {
  return entries.map((e) => {
    const r = results.find((q) => q.id === e.requirement);
    if (!r) return { ...e, use: 'unused', why: 'the run did not judge this requirement (another profile, --grep)' };
    if (r.failures?.some((f) => covers(e, r.id, f.scenario, f.step))) return { ...e, use: 'used', why: 'it failed' };
    if (e.scenario && !scenarios.some((s) => s.id === e.scenario))
      return { ...e, use: 'unused', why: `scenario ${e.scenario} did not run` };
    const held = scenarios.some((s) => (!e.scenario || s.id === e.scenario) && checkedIn(s).includes(r.id));
    return held
      ? { ...e, use: 'stale', why: `${r.id} holds now${e.scenario ? ` in ${e.scenario}` : ''}: remove the entry` }
      : { ...e, use: 'unused', why: `${r.id} was not reached (${r.verdict})` };
  });
}

export function judge(
  requirements: Requirement[],
  scenarios: ScenarioResult[],
  baseline: Iterable<string> | BaselineEntry[] = [],
): Judged {
  const entries = [...baseline].map((e) => (typeof e === 'string' ? { text: e, requirement: e } : e));
  const results = requirements.map((req) => verdictOf(req, scenarios, entries));
  const failedByLevel: Record<Level, number> = { MUST: 0, SHOULD: 0, MAY: 0 };
  for (const r of results) if (r.failures?.some((f) => !f.baseline)) failedByLevel[r.level]++;
  const counts = Object.fromEntries(VERDICTS.map((v) => [v, results.filter((r) => r.verdict === v).length])) as Record<
    Verdict | 'tested',
    number
  >;
  counts.tested = counts.passed + counts.warning + counts.failed;
  const statuses: Outcome['status'][] = ['passed', 'failed', 'errored', 'skipped'];
  const scenarioCounts = Object.fromEntries(
    statuses.map((st) => [st, scenarios.filter((s) => s.status === st).length]),
  ) as Record<Outcome['status'], number>;
  const used = baselineVerdicts(entries, results, scenarios);
  return {
    requirements: results,
    counts,
    scenarioCounts,
    failedByLevel,
    overall: overall(results, failedByLevel, used, scenarios),
    ...(entries.length ? { baseline: used } : {}),
  };
}

function overall(
  results: RequirementResult[],
  failedByLevel: Record<Level, number>,
  baseline: BaselineVerdict[],
  scenarios: ScenarioResult[],
): Overall {
  const musts = results.filter((r) => r.level === 'MUST');
  const stale = baseline.filter((e) => e.use === 'stale');
  const staleNote = stale.length
    ? `; the baseline is stale: ${stale.map((e) => e.text).join(', ')} now pass${stale.length === 1 ? 'es' : ''}`
    : '';
  if (failedByLevel.MUST > 0)
    return {
      conforms: false,
      exitCode: 1,
      headline: `does not conform: ${failedByLevel.MUST} MUST requirement(s) failed${staleNote}`,
    };
  if (stale.length)
    return {
      conforms: false,
      exitCode: 1,
      headline: `baseline out of date: ${stale.map((e) => e.text).join(', ')} ${stale.length === 1 ? 'passes' : 'pass'} now; remove ${stale.length === 1 ? 'it' : 'them'} from the baseline file`,
    };
  const broke = scenarios.filter((s) => s.harness);
  if (broke.length)
    return {
      conforms: false,
      exitCode: 3,
      headline: `incomplete: the client broke the harness contract in ${broke.length} scenario(s) (${broke[0]!.id}: ${broke[0]!.harness})`,
    };
  if (results.every((r) => !['passed', 'warning', 'failed'].includes(r.verdict)))
    return { conforms: false, exitCode: 3, headline: 'incomplete: no requirement was tested' };
  const open = musts.filter((r) => !['passed', 'warning', 'waived'].includes(r.verdict));
  if (open.length)
    return {
      conforms: false,
      exitCode: 3,
      headline: `incomplete: ${open.length} MUST requirement(s) not tested (${open.map((r) => `${r.id} ${r.verdict}`).join(', ')})`,
    };
  const waived = musts.filter((r) => r.verdict === 'waived').length;
  const warnings = results.filter((r) => r.verdict === 'warning').length;
  const notes = [
    ...(warnings ? [`${warnings} warning(s): a SHOULD not met, or allowed but lenient`] : []),
    ...(waived ? [`${waived} waived by the user's settings or baseline`] : []),
  ];
  return {
    conforms: true,
    exitCode: 0,
    headline: `conforms: every MUST requirement passed${notes.length ? ` (${notes.join('; ')})` : ''}`,
  };
}
