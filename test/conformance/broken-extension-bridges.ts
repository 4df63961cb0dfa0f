// What the broken-bridge tests of the extensions' profiles share (broken-resume-bridges.test.ts,
// broken-cancel-bridges.test.ts): our bridge, with the test clock, behind the fault proxy; the profile's scenarios run
// through it with no fault must all pass, and each fault must fail exactly the requirement it breaks while a control
// scenario that does not depend on that rule keeps passing.
import { expect } from 'chai';
import type { RunResult } from '../../conformance/results.js';
import { extensionOf, loadRequirements, loadScenarios, type Profile } from '../../conformance/scenario.js';
import type { Config } from '../../src/config.js';
import { startServer, type RunningBridge } from '../../src/server.js';
import { ADMIN_TOKEN, testConfig } from '../helpers/bridge.js';
import { startFaultProxy, type FaultName } from './fault-proxy.js';
import { explain, runSuite } from './suite.js';

export interface BrokenBridgeCase {
  fault: FaultName;
  /** Scenario ids to run: the one the fault breaks, and a control. */
  scenarios: string[];
  fails: string;
  because: RegExp;
}

const grepFor = (ids: string[]) => `^(?:${ids.join('|')})$`;
export const failedIds = (report: RunResult) =>
  report.requirements
    .filter((r) => r.verdict === 'failed')
    .map((r) => r.id)
    .sort();

/**
 * Our bridge (test clock on, `config` besides) started before the suite's tests and closed after them, and a run of
 * `profile`'s `scenarios` through the fault proxy with `fault` (none: the proxy is transparent). Every run must have
 * run exactly the scenarios asked for; `everyRun` asserts more of each report.
 */
export function brokenBridgeRuns(
  profile: Profile,
  o: { config?: Partial<Config>; everyRun?: (report: RunResult) => void } = {},
): (fault: FaultName | undefined, scenarios: string[]) => Promise<{ code: number; report: RunResult }> {
  let bridge: RunningBridge;
  before(async () => {
    bridge = await startServer(testConfig({ testClock: true, ...o.config }));
  });
  after(async () => {
    await bridge?.close();
  });
  return async (fault, scenarios) => {
    const proxy = await startFaultProxy(bridge.url, fault);
    try {
      const { code, report } = await runSuite({
        url: `${proxy.wsUrl}/v1`,
        adminToken: ADMIN_TOKEN,
        timeoutMs: 1_500,
        grep: grepFor(scenarios),
        profile,
      });
      // The selection ran in full: a renamed scenario must not pass silently.
      expect(report!.scenarios.map((s) => s.id).sort(), 'scenarios run').to.deep.equal([...scenarios].sort());
      o.everyRun?.(report!);
      return { code, report: report! };
    } finally {
      await proxy.close();
    }
  };
}

/**
 * The tests of one extension's profile against broken bridges. `everyRun` is asserted of every run's report (the
 * test clock answering through the proxy, …), `clean` of the run with no fault.
 */
export function brokenExtensionBridges(
  profile: Extract<Profile, 'resume' | 'cancel'>,
  cases: BrokenBridgeCase[],
  o: { everyRun?: (report: RunResult) => void; clean?: (report: RunResult) => void } = {},
): void {
  const requirements = loadRequirements();
  const runAgainst = brokenBridgeRuns(profile, { everyRun: o.everyRun });

  it(`passes every scenario of the ${profile} profile through the proxy with no fault`, async () => {
    const all = loadScenarios(requirements)
      .filter((s) => s.requirements.some((id) => extensionOf(id) === profile))
      .map((s) => s.id);
    expect(all).to.have.length.greaterThan(0);
    const { code, report } = await runAgainst(undefined, all);
    expect(
      report.scenarios.filter((s) => s.status !== 'passed'),
      explain(report),
    ).to.deep.equal([]);
    expect(
      report.requirements.filter((r) => r.verdict !== 'passed').map((r) => r.id),
      explain(report),
    ).to.deep.equal([]);
    o.clean?.(report);
    expect(code).to.equal(0);
  });

  for (const c of cases) {
    it(`${c.fault}: fails exactly ${c.fails}`, async () => {
      const { code, report } = await runAgainst(c.fault, c.scenarios);
      expect(failedIds(report), explain(report)).to.deep.equal([c.fails]);
      for (const s of report.scenarios.filter((x) => x.status === 'failed'))
        expect(s.reason, `why ${s.id} failed`).to.match(c.because);
      expect(report.scenarios.find((s) => s.id === c.scenarios[1])?.status, `the control ${c.scenarios[1]}`).to.equal(
        'passed',
      );
      expect(code).to.equal(1);
    });
  }
}
