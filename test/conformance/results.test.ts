// How scenario outcomes become requirement verdicts and one overall verdict, which the console, JSON, JUnit and HTML
// all state (results.ts, report/): the root cause blamed once, graded outcomes, baselines that only shrink. The JUnit
// file is read back with a JUnit reader (junit2json), counting failures and errors as CI systems do.
import { expect } from 'chai';
import { parse as parseJunit } from 'junit2json';
import { parseBaseline } from '../../conformance/baseline.js';
import { html } from '../../conformance/report/html.js';
import { junit } from '../../conformance/report/junit.js';
import { judge, type RunResult, type ScenarioResult } from '../../conformance/results.js';
import type { Requirement } from '../../conformance/scenario.js';
import { describeErrors, validateConformanceReport } from '../../generated/index.js';

const req = (id: string, level: Requirement['level'] = 'MUST'): Requirement => ({
  id,
  level,
  source: 'protocol',
  cite: 'spec/protocol.md#x',
  text: `the rule ${id}`,
});

const scenario = (
  id: string,
  status: ScenarioResult['status'],
  requirements: string[],
  extra: Partial<ScenarioResult> = {},
): ScenarioResult => ({
  id,
  file: `${id}.yaml`,
  title: id,
  requirements,
  status,
  durationMs: 1,
  transcript: [{ at_ms: 0, actor: 'app1', direction: 'sent', text: `{"type":"ping","in":"${id}"}` }],
  ...(status === 'passed' ? { checked: requirements } : {}),
  ...extra,
});

/** A scenario that failed `by` at `step` and stopped there, having checked `checked` before. */
const stoppedAt = (id: string, requirements: string[], by: string, checked: string[] = [], step = 3) =>
  scenario(id, 'failed', requirements, {
    failures: [{ requirements: [by], reason: `${by} broke`, step }],
    failedRequirements: [by],
    checked,
    stop: { step, reason: `${by} broke`, by: [by] },
  });

const verdicts = (r: ReturnType<typeof judge>) => Object.fromEntries(r.requirements.map((q) => [q.id, q.verdict]));

function report(requirements: Requirement[], scenarios: ScenarioResult[], baseline: string[] = []): RunResult {
  return {
    suite: { version: '0.0.0', requirements: 'sha256:0000000000000000' },
    role: 'server',
    profile: 'protocol',
    target: 'ws://x/v1',
    startedAt: '2026-11-27T00:00:00.000Z',
    durationMs: 10,
    hasClock: true,
    scenarios,
    ...judge(requirements, scenarios, parseBaseline(baseline)),
  };
}

/** What a CI system makes of the JUnit file: the cases it marks failed (a failure or an error), and skipped. */
async function junitReading(r: RunResult) {
  const read = (await parseJunit(junit(r))) as {
    testsuite?: { testcase?: { name?: string; failure?: unknown[]; error?: unknown[]; skipped?: unknown[] }[] }[];
  };
  const cases = read.testsuite!.flatMap((s) => s.testcase ?? []);
  const id = (c: { name?: string }) => c.name!.split(' ')[0];
  return {
    failed: cases.filter((c) => c.failure?.length || c.error?.length).map(id),
    skipped: cases.filter((c) => c.skipped?.length).map(id),
    total: cases.length,
  };
}

describe('conformance verdicts', function () {
  it('blames the root cause once: the scenario stopped by a barrier leaves its own requirements blocked', function () {
    // An agent side that never answers ping: HB-002 fails where a pong was waited for; what the scenarios check
    // after that is blocked by it, not failed (AUTH-003's check came after the pong) and not passed.
    const r = judge(
      [req('HB-002'), req('AUTH-003'), req('AGT-006'), req('ERR-001')],
      [
        stoppedAt('auth-carriers', ['AUTH-003', 'HB-002'], 'HB-002'),
        // AGT-006 held at steps 7-11, but its checks from step 12 on never ran: the runner does not count it checked.
        stoppedAt('agt-bad-fields', ['AGT-006'], 'HB-002', [], 12),
        scenario('err-invalid-json', 'passed', ['ERR-001']),
      ],
    );
    expect(verdicts(r)).to.deep.equal({
      'HB-002': 'failed',
      'AUTH-003': 'blocked',
      'AGT-006': 'blocked',
      'ERR-001': 'passed',
    });
    const hb = r.requirements.find((q) => q.id === 'HB-002')!;
    expect(
      hb.failures!.map((f) => f.scenario),
      'every failing scenario named',
    ).to.deep.equal(['auth-carriers', 'agt-bad-fields']);
    expect(hb.scenarios).to.include('agt-bad-fields');
    const agt = r.requirements.find((q) => q.id === 'AGT-006')!;
    expect(agt.blockedBy).to.deep.equal(['HB-002']);
    expect(agt.why).to.match(/^blocked by HB-002/);
    expect(r.failedByLevel.MUST, 'one failure, not three').to.equal(1);
    expect(r.overall.exitCode).to.equal(1);
  });

  it('never passes a requirement whose checks were not all reached, even in a scenario that passed others', function () {
    // The masked violation: AGT-006's later checks never ran in the scenario that stopped; a passing scenario that
    // names it but whose check of it did not run (outside the profile) does not pass it either.
    const r = judge(
      [req('AGT-006'), req('MSG-001'), req('AGT-004')],
      [
        stoppedAt('agt-bad-fields', ['AGT-006', 'MSG-001'], 'MSG-001'),
        scenario('agt-invalid-json', 'passed', ['AGT-004', 'AGT-006'], { checked: ['AGT-004'] }),
      ],
    );
    expect(verdicts(r)).to.deep.equal({ 'AGT-006': 'blocked', 'MSG-001': 'failed', 'AGT-004': 'passed' });
  });

  it('an errored set-up blames nobody: errored, incomplete, exit 3', function () {
    const r = judge(
      [req('A-001'), req('A-002')],
      [
        scenario('s1', 'errored', ['A-001'], {
          reason: 'provisioning failed: 500',
          stop: { reason: 'provisioning failed: 500' },
        }),
        scenario('s2', 'passed', ['A-002']),
      ],
    );
    expect(verdicts(r)).to.deep.equal({ 'A-001': 'errored', 'A-002': 'passed' });
    expect(r.requirements[0]!.why).to.match(/provisioning failed/);
    expect(r.overall.exitCode).to.equal(3);
    expect(r.overall.headline).to.match(/^incomplete: 1 MUST requirement\(s\) not tested \(A-001 errored\)/);
  });

  it('grades a failed SHOULD and an allowed-but-lenient MUST as warnings: the run conforms', function () {
    const r = judge(
      [req('A-001'), req('A-002', 'SHOULD'), req('A-003')],
      [
        scenario('s1', 'passed', ['A-001', 'A-003'], {
          warnings: [{ requirement: 'A-003', reason: 'answered after 25.6 s, beyond the 10 s window' }],
        }),
        scenario('s2', 'failed', ['A-002'], {
          failures: [{ requirements: ['A-002'], reason: 'the header did not win', step: 4 }],
          failedRequirements: ['A-002'],
          checked: [],
        }),
      ],
    );
    expect(verdicts(r)).to.deep.equal({ 'A-001': 'passed', 'A-002': 'warning', 'A-003': 'warning' });
    expect(r.failedByLevel).to.deep.equal({ MUST: 0, SHOULD: 1, MAY: 0 });
    expect(r.overall).to.include({ conforms: true, exitCode: 0 });
    expect(r.overall.headline).to.match(/2 warning\(s\)/);
  });

  it('a client that broke the harness contract blocks what it was to show, and the run is incomplete', function () {
    const r = judge(
      [req('CLI-005'), req('CLI-003')],
      [
        scenario('app-heartbeat', 'errored', ['CLI-005'], {
          harness: 'the client exited (code 0) before the scenario ended',
          checked: [],
        }),
        scenario('app-sends-valid-event', 'passed', ['CLI-003']),
      ],
    );
    expect(verdicts(r)).to.deep.equal({ 'CLI-005': 'blocked', 'CLI-003': 'passed' });
    expect(r.overall.exitCode).to.equal(3);
    expect(r.overall.headline).to.match(/harness contract/);
  });

  it('a run that tested nothing does not conform', function () {
    const r = judge([req('A-001')], [scenario('s1', 'skipped', ['A-001'], { reason: 'no provisioning' })]);
    expect(r.overall).to.deep.equal({
      conforms: false,
      exitCode: 3,
      headline: 'incomplete: no requirement was tested',
    });
  });

  describe('baselines', function () {
    const failing = (id: string, by: string, step: number) =>
      scenario(id, 'failed', [by], {
        failures: [{ requirements: [by], reason: 'broken', step }],
        failedRequirements: [by],
        checked: [],
      });

    it('waives failures per requirement, per scenario and per step; a failure elsewhere still fails', function () {
      const scenarios = [failing('s1', 'A-001', 4), failing('s2', 'A-001', 7), failing('s3', 'A-002', 2)];
      const reqs = [req('A-001'), req('A-002')];
      expect(verdicts(judge(reqs, scenarios, parseBaseline(['A-001', 'A-002'])))).to.deep.equal({
        'A-001': 'waived',
        'A-002': 'waived',
      });
      const perScenario = judge(reqs, scenarios, parseBaseline(['A-001@s1', 'A-002@s3#2']));
      expect(verdicts(perScenario)).to.deep.equal({ 'A-001': 'failed', 'A-002': 'waived' });
      expect(perScenario.requirements[0]!.why).to.match(/^s2 step 7/);
      expect(perScenario.overall.exitCode).to.equal(1);
    });

    it('a stale entry fails the run; one about what did not run is only noted', function () {
      const r = judge(
        [req('A-001'), req('A-002')],
        [scenario('s1', 'passed', ['A-001']), scenario('s2', 'skipped', ['A-002'], { reason: 'no clock' })],
        parseBaseline(['A-001  # known since 0.1', 'A-002', 'B-001']),
      );
      expect(r.baseline!.map((e) => [e.text, e.use])).to.deep.equal([
        ['A-001', 'stale'],
        ['A-002', 'unused'],
        ['B-001', 'unused'],
      ]);
      expect(r.overall).to.include({ conforms: false, exitCode: 1 });
      expect(r.overall.headline).to.equal('baseline out of date: A-001 passes now; remove it from the baseline file');
    });

    it('refuses a line that is no entry, naming the line', function () {
      expect(() => parseBaseline(['A-001', 'AGT 6'], 'known.txt')).to.throw(
        /known.txt, line 2: "AGT 6" is not an entry/,
      );
    });
  });

  describe('reports', function () {
    it('JUnit as a CI reads it: a conforming run with a failed SHOULD has no failure and no error', async function () {
      const r = report(
        [req('A-001'), req('A-002', 'SHOULD'), req('A-003')],
        [
          scenario('s1', 'passed', ['A-001']),
          scenario('s2', 'failed', ['A-002'], {
            failures: [{ requirements: ['A-002'], reason: 'the header did not win', step: 4 }],
            failedRequirements: ['A-002'],
            checked: [],
          }),
          scenario('s3', 'skipped', ['A-003'], { waived: true, reason: 'no rate limit (null)' }),
        ],
      );
      expect(r.overall.exitCode).to.equal(0);
      const read = await junitReading(r);
      expect(read).to.deep.equal({ failed: [], skipped: ['A-003'], total: 3 });
      expect(junit(r)).to.match(/<system-out>WARNING \(SHOULD A-002\): s2: the header did not win<\/system-out>/);
    });

    it('JUnit names every failing scenario with its frames, blames the root cause once, and gives errors their frames', async function () {
      const r = report(
        [req('HB-002'), req('AUTH-003'), req('A-009')],
        [
          stoppedAt('auth-carriers', ['AUTH-003'], 'HB-002'),
          stoppedAt('agt-bad-fields', ['HB-002'], 'HB-002', [], 12),
          scenario('s9', 'errored', ['A-009'], { stop: { step: 2, reason: 'setup step 2 did not go' } }),
        ],
      );
      const read = await junitReading(r);
      expect(read.failed).to.deep.equal(['HB-002', 'A-009']);
      expect(read.skipped).to.deep.equal(['AUTH-003']);
      const xml = junit(r);
      expect(xml).to.include('auth-carriers step 3: HB-002 broke');
      expect(xml).to.include('agt-bad-fields step 12: HB-002 broke');
      expect(xml).to.include('{&quot;type&quot;:&quot;ping&quot;,&quot;in&quot;:&quot;s9&quot;}');
      expect(xml).to.match(/<skipped message="blocked: blocked by HB-002/);
    });

    it('the JSON report is what spec/conformance.yaml says a report is', function () {
      const r = report(
        [req('HB-002'), req('AUTH-003'), req('A-003', 'SHOULD')],
        [
          stoppedAt('auth-carriers', ['AUTH-003', 'HB-002'], 'HB-002'),
          scenario('s3', 'passed', ['A-003'], { warnings: [{ requirement: 'A-003', reason: 'slow' }] }),
        ],
        ['AUTH-003@auth-carriers'],
      );
      const json = JSON.parse(JSON.stringify(r)) as unknown;
      expect(validateConformanceReport(json), describeErrors(validateConformanceReport.errors)).to.equal(true);
    });

    it('HTML puts the findings first and folds what passed', function () {
      const page = html(
        report(
          [req('A-001'), req('A-002'), req('A-003')],
          [
            scenario('s1', 'passed', ['A-001', 'A-003']),
            scenario('s2', 'failed', ['A-002'], {
              failures: [{ requirements: ['A-002'], reason: 'wrong code', step: 5 }],
              failedRequirements: ['A-002'],
              checked: [],
            }),
          ],
        ),
      );
      const findings = page.indexOf('<h2>Findings</h2>');
      expect(findings).to.be.greaterThan(0);
      expect(page.indexOf('wrong code')).to.be.greaterThan(findings);
      expect(page.indexOf('wrong code')).to.be.lessThan(page.indexOf('<h2>Requirements</h2>'));
      expect(page).to.include('<details><summary>2 passed</summary>');
      expect(page).to.include('<details><summary>1 passed scenarios</summary>');
      expect(page).to.match(/<a class="s failed" href="#s2" title="failed">✗ s2<\/a>/);
    });
  });
});
