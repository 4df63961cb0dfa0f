// JUnit XML: one test case per scenario, named with its requirements, so CI systems show and track them.
import type { RunResult } from '../results.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, '');

export function junit(r: RunResult): string {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="bridge-conformance" tests="${r.scenarios.length}" failures="${r.counts.failed}" skipped="${r.counts.skipped}" time="${(r.durationMs / 1000).toFixed(3)}">`,
    `  <testsuite name="${esc(r.target)}" tests="${r.scenarios.length}" failures="${r.counts.failed}" skipped="${r.counts.skipped}" time="${(r.durationMs / 1000).toFixed(3)}" timestamp="${r.startedAt}">`,
  ];
  for (const s of r.scenarios) {
    lines.push(`    <testcase classname="conformance.${esc(s.id)}" name="${esc(`${s.title} [${s.requirements.join(', ')}]`)}" time="${(s.durationMs / 1000).toFixed(3)}">`);
    if (s.status === 'failed') {
      lines.push(`      <failure message="${esc(s.reason ?? 'failed')}">${esc(`step ${s.failedStep}: ${s.reason}\n\n${s.transcript.map((l) => `${l.at_ms}ms ${l.actor} ${l.direction} ${l.text}`).join('\n')}`)}</failure>`);
    } else if (s.status === 'skipped') {
      lines.push(`      <skipped message="${esc(s.reason ?? 'skipped')}"/>`);
    }
    lines.push('    </testcase>');
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}
