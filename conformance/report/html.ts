// A self-contained HTML page a person can read: the verdict, every requirement, every scenario, and the frames
// exchanged in each failing one.
import type { RunResult } from '../results.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}td:first-child{white-space:nowrap}
.passed{color:#0a6b2b}.failed{color:#b00020;font-weight:600}.skipped,.untested,.inconclusive{color:#6b5d00}.expected-failure{color:#6b3fa0}.unexpectedly-passing{color:#b00020}
pre{background:#f5f5f5;padding:.75rem;overflow:auto;font-size:13px}summary{cursor:pointer}code{font-size:13px}`;

export function html(r: RunResult): string {
  const verdict = r.failedByLevel.MUST === 0 ? 'conforms: no MUST requirement failed' : `does not conform: ${r.failedByLevel.MUST} MUST requirement(s) failed`;
  const reqRows = r.requirements
    .map((q) => `<tr><td><code>${q.id}</code></td><td>${q.level}</td><td class="${q.verdict}">${q.verdict}</td><td>${esc(q.text)}<br><small>${esc(q.section)}</small></td><td>${q.scenarios.map((s) => `<a href="#${s}">${s}</a>`).join(' ')}</td></tr>`)
    .join('\n');
  const scenarios = r.scenarios
    .map((s) => {
      const transcript = s.status === 'failed' ? `<details open><summary>frames exchanged</summary><pre>${esc(s.transcript.map((l) => `${String(l.at_ms).padStart(6)} ms  ${l.actor.padEnd(8)} ${l.direction.padEnd(8)} ${l.text}`).join('\n'))}</pre></details>` : '';
      const why = s.reason ? `<p>${s.status === 'failed' ? `Step ${s.failedStep}: ` : ''}${esc(s.reason)}</p>` : '';
      return `<section id="${s.id}"><h3><span class="${s.status}">${s.status}</span> ${esc(s.title)} <small><code>${s.file}</code></small></h3><p>Requirements: ${s.requirements.map((q) => `<code>${q}</code>`).join(' ')} · ${s.durationMs} ms</p>${why}${transcript}</section>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bridge conformance: ${esc(r.target)}</title><style>${STYLE}</style></head>
<body>
<h1>Bridge conformance report</h1>
<p><strong class="${r.failedByLevel.MUST === 0 ? 'passed' : 'failed'}">${esc(verdict)}</strong></p>
<p>Target <code>${esc(r.target)}</code> · started ${r.startedAt} · ${(r.durationMs / 1000).toFixed(1)} s · test clock ${r.hasClock ? 'on' : 'off'} ·
${r.counts.passed} passed, ${r.counts.failed} failed, ${r.counts.skipped} skipped scenarios</p>
<h2>Requirements</h2>
<table><thead><tr><th>ID</th><th>Level</th><th>Verdict</th><th>Requirement</th><th>Scenarios</th></tr></thead><tbody>
${reqRows}
</tbody></table>
<h2>Scenarios</h2>
${scenarios}
</body></html>
`;
}
