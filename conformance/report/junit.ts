// JUnit XML: one test case per requirement (classname conformance.<profile>.<ID>), so CI systems track each rule.
// A failed requirement is a failure with the failing scenario's reason and frames; errored is an error; skipped,
// waived (a setting of null, the baseline file) and untested are skipped with the reason. Level and source are
// properties of each case. The suite's version and the requirement set's (suite-version.ts) are properties of the
// test suite, where CI keeps them beside the results.
import type { RunResult } from '../results.js';

// Control characters are not allowed in XML 1.0 at all, escaped or not: they are dropped.
// eslint-disable-next-line no-control-regex
const NOT_IN_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g;
const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(NOT_IN_XML, '');

export function junit(r: RunResult): string {
  const c = r.counts;
  const skipped = c.skipped + c.waived + c.untested;
  const head = `tests="${r.requirements.length}" failures="${c.failed}" errors="${c.errored}" skipped="${skipped}" time="${(r.durationMs / 1000).toFixed(3)}"`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="bridge-conformance ${r.profile} profile: ${esc(r.overall.headline)}" ${head}>`,
    `  <testsuite name="${esc(r.target)}" ${head} timestamp="${r.startedAt}">`,
    `    <properties><property name="suite.version" value="${esc(r.suite.version)}"/><property name="requirements.version" value="${esc(r.suite.requirements)}"/></properties>`,
  ];
  for (const q of r.requirements) {
    const scenario = r.scenarios.find((s) => s.status === 'failed' && s.failedRequirements?.includes(q.id));
    const time = (
      r.scenarios.filter((s) => q.scenarios.includes(s.id)).reduce((t, s) => t + s.durationMs, 0) / 1000
    ).toFixed(3);
    lines.push(
      `    <testcase classname="conformance.${r.profile}.${q.id}" name="${esc(`${q.id} (${q.level}) ${q.text}`)}" time="${time}">`,
    );
    lines.push(
      `      <properties><property name="level" value="${q.level}"/><property name="source" value="${q.source}"/><property name="cite" value="${esc(q.cite)}"/><property name="scenarios" value="${esc(q.scenarios.join(' '))}"/></properties>`,
    );
    if (q.verdict === 'failed') {
      const frames = scenario
        ? `\n\n${scenario.transcript.map((l) => `${l.at_ms}ms ${l.actor} ${l.direction} ${l.text}`).join('\n')}`
        : '';
      lines.push(
        `      <failure message="${esc(`${q.level} ${q.id}: ${q.why ?? 'failed'}`)}">${esc(`${q.why ?? ''}${frames}`)}</failure>`,
      );
    } else if (q.verdict === 'errored') {
      lines.push(`      <error message="${esc(`not judged: ${q.why ?? ''}`)}"/>`);
    } else if (q.verdict !== 'passed') {
      lines.push(`      <skipped message="${esc(`${q.verdict}: ${q.why ?? ''}`)}"/>`);
    }
    lines.push('    </testcase>');
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}
