// A self-contained HTML page a person can read: the verdict (the same as the console's and the exit code's), every
// requirement with its source, every scenario, and the frames exchanged in each one that failed or errored. Under
// the title, which suite judged and by which requirement set (suite-version.ts).
import type { RunResult } from '../results.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}td:first-child{white-space:nowrap}
.passed{color:#0a6b2b}.failed{color:#b00020;font-weight:600}.skipped,.untested,.errored{color:#6b5d00}.waived{color:#6b3fa0}
pre{background:#f5f5f5;padding:.75rem;overflow:auto;font-size:13px}summary{cursor:pointer}code{font-size:13px}`;

export function html(r: RunResult): string {
  const c = r.counts;
  const reqRows = r.requirements
    .map(
      (q) =>
        `<tr><td><code>${q.id}</code></td><td>${q.level}</td><td>${q.source}</td><td class="${q.verdict}">${q.verdict}${q.baseline ? ' (baseline)' : ''}</td><td>${esc(q.text)}<br><small>${esc(q.cite)}${q.why ? ` · ${esc(q.why)}` : ''}</small></td><td>${q.scenarios.map((s) => `<a href="#${s}">${s}</a>`).join(' ')}</td></tr>`,
    )
    .join('\n');
  const scenarios = r.scenarios
    .map((s) => {
      const frames =
        s.status === 'failed' || s.status === 'errored'
          ? `<details open><summary>frames exchanged</summary><pre>${esc(s.transcript.map((l) => `${String(l.at_ms).padStart(6)} ms  ${l.actor.padEnd(8)} ${l.direction.padEnd(8)} ${l.text}`).join('\n'))}</pre></details>`
          : '';
      const why = s.reason
        ? `<p>${s.failedStep ? `Step ${s.failedStep}: ` : ''}${esc(s.reason)}${s.failedRequirements ? ` — fails ${s.failedRequirements.join(', ')}` : ''}</p>`
        : '';
      const status = s.waived ? 'waived' : s.status;
      return `<section id="${s.id}"><h3><span class="${status}">${status}</span> ${esc(s.title)} <small><code>${s.file}</code></small></h3><p>Requirements: ${s.requirements.map((q) => `<code>${q}</code>`).join(' ')} · ${s.durationMs} ms</p>${why}${frames}</section>`;
    })
    .join('\n');
  const facts = [
    `Target <code>${esc(r.target)}</code>`,
    `${r.profile} profile`,
    ...(r.provisioning ? [`provisioning: ${esc(r.provisioning)}`] : []),
    ...(r.settingsFile ? [`settings <code>${esc(r.settingsFile)}</code>`] : []),
    ...(r.baselineFile ? [`baseline <code>${esc(r.baselineFile)}</code>`] : []),
    `started ${r.startedAt}`,
    `${(r.durationMs / 1000).toFixed(1)} s`,
    `test clock ${r.hasClock ? 'on' : 'off'}`,
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bridge conformance: ${esc(r.target)}</title><style>${STYLE}</style></head>
<body>
<h1>Bridge conformance report</h1>
<p>Judged by <code>bridge-conformance ${esc(r.suite.version)}</code> against the requirements <code>${esc(r.suite.requirements)}</code></p>
<p><strong class="${r.overall.conforms ? 'passed' : 'failed'}">${esc(r.overall.headline)}</strong> (exit code ${r.overall.exitCode})</p>
<p>${facts.join(' · ')}</p>
<p>Requirements: ${r.requirements.length} — ${c.tested} tested (${c.passed} passed, ${c.failed} failed), ${c.skipped} skipped, ${c.errored} errored, ${c.waived} waived, ${c.untested} untested. Scenarios: ${r.scenarioCounts.passed} passed, ${r.scenarioCounts.failed} failed, ${r.scenarioCounts.errored} errored, ${r.scenarioCounts.skipped} skipped.</p>
${r.leftBehind?.length ? `<p class="failed">Left behind in the target (clean-up failed): ${r.leftBehind.map(esc).join(', ')}</p>` : ''}
<h2>Requirements</h2>
<table><thead><tr><th>ID</th><th>Level</th><th>Source</th><th>Verdict</th><th>Requirement</th><th>Scenarios</th></tr></thead><tbody>
${reqRows}
</tbody></table>
<h2>Scenarios</h2>
${scenarios}
</body></html>
`;
}
