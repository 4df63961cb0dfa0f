// What the console says: a line per scenario as it ends, then what did not pass — each failure once, with every
// scenario and step it failed at; requirements blocked by a failure grouped under it, not repeated as findings —
// the baseline's stale entries, the counts and the verdict (the same as the exit code's and every report's).
import type { RequirementResult, RunResult, ScenarioResult } from '../results.js';

const MARKS: Record<ScenarioResult['status'], string> = {
  passed: 'ok  ',
  failed: 'FAIL',
  errored: 'ERR ',
  skipped: 'skip',
};

/** The line printed as each scenario ends, then what it observed (informational, not judged), a line each. */
export function progress(s: ScenarioResult): string {
  const mark = s.waived ? 'waiv' : s.harness ? 'HARN' : MARKS[s.status];
  const why = s.harness ?? s.reason;
  const at = s.failedStep ? `step ${s.failedStep}: ` : '';
  const fails = s.failedRequirements?.length ? ` (fails ${s.failedRequirements.join(', ')})` : '';
  const warns = s.warnings?.length ? ` (warning: ${s.warnings.map((w) => w.requirement).join(', ')})` : '';
  const line = `${mark} ${s.id} [${s.requirements.join(', ')}] ${s.durationMs} ms${fails}${warns}${why ? ` — ${at}${why}` : ''}`;
  return [line, ...(s.informational ?? []).map((o) => `       info: ${o.what}: ${o.value}`)].join('\n');
}

const title = (r: RequirementResult) => `${r.id} (${r.level}, ${r.source}) ${r.text}`;

/** Every line after the scenarios: findings, blocked groups, the baseline, the counts and the verdict. */
export function summary(result: RunResult, baselineFile: string | undefined): string[] {
  const lines: string[] = [];
  for (const r of result.requirements) {
    if (r.verdict === 'failed' || (r.verdict === 'warning' && r.failures?.length)) {
      lines.push(`requirement ${r.verdict === 'failed' ? 'FAILED' : 'WARNING'}: ${title(r)}`);
      for (const f of r.failures ?? [])
        lines.push(
          `    ${f.scenario}${f.step ? ` step ${f.step}` : ''}: ${f.reason}${f.baseline ? ' (baseline)' : ''}`,
        );
    } else if (r.verdict === 'warning') {
      lines.push(`requirement WARNING: ${title(r)}`);
      for (const w of r.warnings ?? []) lines.push(`    ${w.scenario}: ${w.reason}`);
    } else if (!['passed', 'blocked'].includes(r.verdict)) {
      lines.push(`requirement ${r.verdict.toUpperCase()}: ${title(r)}${r.why ? `\n    ${r.why}` : ''}`);
    }
  }
  const groups = new Map<string, string[]>();
  for (const r of result.requirements.filter((q) => q.verdict === 'blocked')) {
    const key = (r.blockedBy ?? []).join(', ');
    groups.set(key, [...(groups.get(key) ?? []), r.id]);
  }
  for (const [by, ids] of groups)
    lines.push(`blocked by ${by === 'harness' ? 'the harness contract' : by} (not judged): ${ids.join(', ')}`);
  for (const e of result.baseline ?? [])
    if (e.use !== 'used') lines.push(`baseline ${e.use.toUpperCase()}: ${e.text} in ${baselineFile}: ${e.why}`);
  for (const org of result.leftBehind ?? [])
    lines.push(`left behind in the target: organization ${org} (clean-up failed)`);
  const c = result.counts;
  lines.push(
    `profile ${result.profile}: ${result.requirements.length} requirements, ${c.tested} tested (${c.passed} passed, ${c.warning} warning, ${c.failed} failed), ${c.blocked} blocked, ${c.errored} errored, ${c.skipped} skipped, ${c.waived} waived, ${c.untested} untested; MUST failed: ${result.failedByLevel.MUST}`,
    `verdict: ${result.overall.headline}`,
  );
  return lines;
}
