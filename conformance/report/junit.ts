// JUnit XML: one test case per requirement (classname conformance.<profile>.<ID>), so CI systems track each rule,
// graded so that a CI that gates on JUnit agrees with the exit code:
//   failed (a MUST)       - <failure>, naming every scenario and step it failed at, with their frames;
//   warning (a SHOULD not met, or allowed but lenient) - a passing case whose <system-out> starts "WARNING": a CI
//                           marks no failure for it, as the exit code (0 when everything else conforms);
//   errored               - <error> with the frames of the scenario whose set-up went wrong;
//   blocked               - <skipped> naming the failure that blocked it (that failure is red on its own case); blocked
//                           by the harness contract (nothing failed): <error>, since the run proves nothing;
//   skipped, waived, untested - <skipped> with the reason.
// What robustness mode's resource cases observed (informational, never judged) is the test suite's <system-out>.
// Level, source, cite, grade and scenarios are properties of each case; the suite's version and the requirement
// set's (suite-version.ts) are properties of the test suite, where CI keeps them beside the results.
import type { RequirementResult, RunResult, ScenarioResult } from '../results.js';

// Control characters are not allowed in XML 1.0 at all, escaped or not: they are dropped.
// eslint-disable-next-line no-control-regex
const NOT_IN_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g;
const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(NOT_IN_XML, '');

const frames = (s: ScenarioResult | undefined) =>
  s ? s.transcript.map((l) => `${l.at_ms}ms ${l.actor} ${l.direction} ${l.text}`).join('\n') : '';

/** The body of a case that did not simply pass, or nothing. */
function body(q: RequirementResult, r: RunResult): string[] {
  const scenario = (id: string) => r.scenarios.find((s) => s.id === id);
  switch (q.verdict) {
    case 'failed': {
      const open = (q.failures ?? []).filter((f) => !f.baseline);
      const text = open
        .map((f) => `${f.scenario}${f.step ? ` step ${f.step}` : ''}: ${f.reason}\n\n${frames(scenario(f.scenario))}`)
        .join('\n\n----\n\n');
      return [`      <failure message="${esc(`${q.level} ${q.id}: ${q.why ?? 'failed'}`)}">${esc(text)}</failure>`];
    }
    case 'warning': {
      const said = [
        ...(q.failures ?? []).filter((f) => !f.baseline).map((f) => `${f.scenario}: ${f.reason}`),
        ...(q.warnings ?? []).map((w) => `${w.scenario}: ${w.reason}`),
      ];
      return [`      <system-out>${esc(`WARNING (${q.level} ${q.id}): ${said.join('\n')}`)}</system-out>`];
    }
    case 'errored': {
      const stopped = r.scenarios.find((s) => q.scenarios.includes(s.id) && (s.status === 'errored' || s.stop));
      return [
        `      <error message="${esc(`not judged: ${q.why ?? ''}`)}">${esc(`${q.why ?? ''}\n\n${frames(stopped)}`)}</error>`,
      ];
    }
    case 'blocked':
      if (q.blockedBy?.includes('harness')) {
        const broke = r.scenarios.find((s) => q.scenarios.includes(s.id) && s.harness);
        return [
          `      <error message="${esc(`not judged: ${q.why ?? ''}`)}">${esc(`${broke?.harness ?? ''}\n\n${frames(broke)}`)}</error>`,
        ];
      }
      return [`      <skipped message="${esc(`blocked: ${q.why ?? ''}`)}"/>`];
    case 'passed':
      return [];
    default:
      return [`      <skipped message="${esc(`${q.verdict}: ${q.why ?? ''}`)}"/>`];
  }
}

const isError = (q: RequirementResult) =>
  q.verdict === 'errored' || (q.verdict === 'blocked' && !!q.blockedBy?.includes('harness'));

export function junit(r: RunResult): string {
  const c = r.counts;
  const errors = r.requirements.filter(isError).length;
  const skipped = r.requirements.filter((q) => !isError(q) && !['passed', 'warning', 'failed'].includes(q.verdict));
  const head = `tests="${r.requirements.length}" failures="${c.failed}" errors="${errors}" skipped="${skipped.length}" time="${(r.durationMs / 1000).toFixed(3)}"`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="bridge-conformance ${r.profile} profile: ${esc(r.overall.headline)}" ${head}>`,
    `  <testsuite name="${esc(r.target)}" ${head} timestamp="${r.startedAt}">`,
    `    <properties><property name="suite.version" value="${esc(r.suite.version)}"/><property name="requirements.version" value="${esc(r.suite.requirements)}"/><property name="verdict" value="${esc(r.overall.headline)}"/><property name="exit.code" value="${r.overall.exitCode}"/></properties>`,
  ];
  for (const q of r.requirements) {
    const time = (
      r.scenarios.filter((s) => q.scenarios.includes(s.id)).reduce((t, s) => t + s.durationMs, 0) / 1000
    ).toFixed(3);
    lines.push(
      `    <testcase classname="conformance.${r.profile}.${q.id}" name="${esc(`${q.id} (${q.level}) ${q.text}`)}" time="${time}">`,
      `      <properties><property name="level" value="${q.level}"/><property name="source" value="${q.source}"/><property name="cite" value="${esc(q.cite)}"/><property name="grade" value="${q.verdict}"/><property name="scenarios" value="${esc(q.scenarios.join(' '))}"/></properties>`,
      ...body(q, r),
      '    </testcase>',
    );
  }
  const observed = r.scenarios.filter((s) => s.informational?.length);
  if (observed.length)
    lines.push(
      `    <system-out>${esc(
        [
          'INFORMATIONAL (what the bridge did where the protocol states no bound; not judged):',
          ...observed.map((s) => `${s.id}: ${s.informational!.map((o) => `${o.what}: ${o.value}`).join('; ')}`),
        ].join('\n'),
      )}</system-out>`,
    );
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}
