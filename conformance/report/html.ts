// A self-contained HTML page a person can read from the top: the verdict (the same as the console's and the exit
// code's) and, on one screen, every finding — failures first, then warnings, what was blocked and by what, what
// could not be judged. Below, the requirements in that order with the passing ones folded away, then the scenarios
// that did not pass with what failed (their frames folded, wrapped when opened), the passing ones folded. Under the title,
// which suite judged and by which requirement set (suite-version.ts).
import type { RequirementResult, RunResult, ScenarioResult, Verdict } from '../results.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}td:first-child{white-space:nowrap}
.passed{color:#0a6b2b}.failed{color:#b00020;font-weight:600}.warning{color:#8a5300;font-weight:600}.skipped,.untested,.errored,.blocked{color:#6b5d00}.waived{color:#6b3fa0}
.findings li{margin:.2rem 0}.chips span{display:inline-block;margin:0 .75rem .25rem 0}
a.s{text-decoration:none;margin-right:.4rem;white-space:nowrap}
pre{background:#f5f5f5;padding:.75rem;font-size:13px;white-space:pre-wrap;overflow-wrap:anywhere}summary{cursor:pointer}code{font-size:13px}`;

/** Findings first: the order of the requirement table and of the summary. */
const ORDER: Verdict[] = ['failed', 'warning', 'blocked', 'errored', 'skipped', 'untested', 'waived', 'passed'];

const MARK: Record<ScenarioResult['status'], string> = { passed: '✓', failed: '✗', errored: '!', skipped: '–' };

function scenarioLink(s: ScenarioResult | undefined, id: string): string {
  const status = !s ? 'untested' : s.waived ? 'waived' : s.status;
  const mark = s ? MARK[s.status] : '';
  return `<a class="s ${status}" href="#${id}" title="${status}">${mark} ${id}</a>`;
}

function row(q: RequirementResult, r: RunResult): string {
  const byId = (id: string) => r.scenarios.find((s) => s.id === id);
  const failing = new Set((q.failures ?? []).map((f) => f.scenario));
  const ordered = [...q.scenarios].sort((a, b) => Number(failing.has(b)) - Number(failing.has(a)));
  const where = (q.failures ?? [])
    .map((f) => `<br><small>✗ ${esc(f.scenario)}${f.step ? ` step ${f.step}` : ''}: ${esc(f.reason)}</small>`)
    .join('');
  return `<tr><td><code>${q.id}</code></td><td>${q.level}</td><td>${q.source}</td><td class="${q.verdict}">${q.verdict}${q.baseline ? ' (baseline)' : ''}</td><td>${esc(q.text)}<br><small>${esc(q.cite)}${q.why && !q.failures ? ` · ${esc(q.why)}` : ''}</small>${where}</td><td>${ordered.map((id) => scenarioLink(byId(id), id)).join(' ')}</td></tr>`;
}

const table = (rows: string) =>
  `<table><thead><tr><th>ID</th><th>Level</th><th>Source</th><th>Verdict</th><th>Requirement</th><th>Scenarios</th></tr></thead><tbody>
${rows}
</tbody></table>`;

/** The one-screen list of what did not pass, blocked requirements grouped under what blocked them. */
function findings(r: RunResult): string {
  const items: string[] = [];
  for (const q of r.requirements.filter((x) => x.verdict === 'failed' || x.verdict === 'warning'))
    items.push(
      `<li><span class="${q.verdict}">${q.verdict}</span> <code>${q.id}</code> (${q.level}) ${esc(q.text)} — ${esc(q.why ?? '')}</li>`,
    );
  const groups = new Map<string, string[]>();
  for (const q of r.requirements.filter((x) => x.verdict === 'blocked')) {
    const key = (q.blockedBy ?? []).join(', ');
    groups.set(key, [...(groups.get(key) ?? []), q.id]);
  }
  for (const [by, ids] of groups)
    items.push(
      `<li><span class="blocked">blocked</span> by ${by === 'harness' ? 'the harness contract' : `<code>${esc(by)}</code>`}: ${ids.map((id) => `<code>${id}</code>`).join(' ')}</li>`,
    );
  for (const q of r.requirements.filter((x) => ['errored', 'skipped', 'untested'].includes(x.verdict)))
    items.push(`<li><span class="${q.verdict}">${q.verdict}</span> <code>${q.id}</code> — ${esc(q.why ?? '')}</li>`);
  for (const e of (r.baseline ?? []).filter((x) => x.use === 'stale'))
    items.push(`<li><span class="failed">stale baseline entry</span> <code>${esc(e.text)}</code> — ${esc(e.why)}</li>`);
  return items.length ? `<ul class="findings">${items.join('\n')}</ul>` : '<p class="passed">No findings.</p>';
}

function scenarioSection(s: ScenarioResult): string {
  // Folded: the failure and its step are said above them, and thirty open transcripts make a page nobody scrolls.
  const frames = `<details><summary>frames exchanged (${s.transcript.length} lines)</summary><pre>${esc(s.transcript.map((l) => `${String(l.at_ms).padStart(6)} ms  ${l.actor.padEnd(8)} ${l.direction.padEnd(8)} ${l.text}`).join('\n'))}</pre></details>`;
  const failures = (s.failures ?? [])
    .map((f) => `<li>${f.step ? `Step ${f.step}: ` : ''}${esc(f.reason)} — fails ${f.requirements.join(', ')}</li>`)
    .join('');
  const why = [
    ...(failures ? [`<ul>${failures}</ul>`] : []),
    ...(s.harness ? [`<p class="errored">Harness contract: ${esc(s.harness)}</p>`] : []),
    ...(s.stop && !s.failures?.length
      ? [`<p>${s.failedStep ? `Step ${s.failedStep}: ` : ''}${esc(s.stop.reason)}</p>`]
      : []),
    ...(s.status === 'skipped' && s.reason ? [`<p>${esc(s.reason)}</p>`] : []),
    ...(s.warnings ?? []).map((w) => `<p class="warning">Warning (${w.requirement}): ${esc(w.reason)}</p>`),
  ].join('');
  const status = s.waived ? 'waived' : s.status;
  return `<section id="${s.id}"><h3><span class="${status}">${status}</span> ${esc(s.title)} <small><code>${s.file}</code></small></h3><p>Requirements: ${s.requirements.map((q) => `<code>${q}</code>`).join(' ')} · ${s.durationMs} ms</p>${why}${s.status === 'skipped' ? '' : frames}</section>`;
}

/** What the resource cases saw the bridge do: observed where the protocol states no bound, never judged. */
function informational(r: RunResult): string {
  const observed = r.scenarios.filter((s) => s.informational?.length);
  if (!observed.length) return '';
  const rows = observed
    .map(
      (s) =>
        `<tr><td><a href="#${s.id}">${esc(s.id)}</a> <span class="${s.status}">${s.status}</span></td><td>${s.informational!.map((o) => `${esc(o.what)}: <strong>${esc(String(o.value))}</strong>`).join('<br>')}</td></tr>`,
    )
    .join('\n');
  return `<h2>What the bridge did (informational)</h2>
<p>Observed where the protocol states no bound; not judged. A case fails only where the bridge stopped answering or left the canary unserved (ROB-001, ROB-002).</p>
<table><thead><tr><th>Case</th><th>Observed</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function html(r: RunResult): string {
  const c = r.counts;
  const sorted = [...r.requirements].sort((a, b) => ORDER.indexOf(a.verdict) - ORDER.indexOf(b.verdict));
  const open = sorted.filter((q) => q.verdict !== 'passed');
  const passed = sorted.filter((q) => q.verdict === 'passed');
  const notPassed = r.scenarios.filter((s) => s.status !== 'passed');
  const passing = r.scenarios.filter((s) => s.status === 'passed');
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
  const chips = ORDER.filter((v) => c[v] > 0)
    .map((v) => `<span class="${v}">${c[v]} ${v}</span>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bridge conformance: ${esc(r.target)}</title><style>${STYLE}</style></head>
<body>
<h1>Bridge conformance report</h1>
<p>Judged by <code>bridge-conformance ${esc(r.suite.version)}</code> against the requirements <code>${esc(r.suite.requirements)}</code></p>
<p><strong class="${r.overall.conforms ? 'passed' : 'failed'}">${esc(r.overall.headline)}</strong> (exit code ${r.overall.exitCode})</p>
<p>${facts.join(' · ')}</p>
<p class="chips">${r.requirements.length} requirements: ${chips} · scenarios: ${r.scenarioCounts.passed} passed, ${r.scenarioCounts.failed} failed, ${r.scenarioCounts.errored} errored, ${r.scenarioCounts.skipped} skipped</p>
${r.leftBehind?.length ? `<p class="failed">Left behind in the target (clean-up failed): ${r.leftBehind.map(esc).join(', ')}</p>` : ''}
<h2>Findings</h2>
${findings(r)}
<h2>Requirements</h2>
${open.length ? table(open.map((q) => row(q, r)).join('\n')) : ''}
${passed.length ? `<details><summary>${passed.length} passed</summary>${table(passed.map((q) => row(q, r)).join('\n'))}</details>` : ''}
${informational(r)}
<h2>Scenarios</h2>
${notPassed.map(scenarioSection).join('\n')}
${passing.length ? `<details><summary>${passing.length} passed scenarios</summary>${passing.map(scenarioSection).join('\n')}</details>` : ''}
</body></html>
`;
}
