// Proof that the cancel profile can fail, as broken-resume-bridges.test.ts proves it for the resume profile: our
// bridge behind the fault proxy passes every scenario of the profile with no fault, and each fault of the extension
// (an agent not told, an agent told that did not opt in, late fragments forwarded, another app's event told apart)
// fails exactly the requirement it breaks, while a control scenario that does not depend on that rule keeps passing.
import { expect } from 'chai';
import type { RunResult } from '../../conformance/results.js';
import { extensionOf, loadRequirements, loadScenarios } from '../../conformance/scenario.js';
import { startServer, type RunningBridge } from '../../src/server.js';
import { ADMIN_TOKEN, testConfig } from '../helpers/bridge.js';
import { startFaultProxy, type FaultName } from './fault-proxy.js';
import { explain, runSuite } from './suite.js';

interface Case {
  fault: FaultName;
  /** Scenario ids to run: the one the fault breaks, and a control. */
  scenarios: string[];
  fails: string;
  because: RegExp;
}

const CASES: Case[] = [
  {
    fault: 'cancel-not-told',
    scenarios: ['can-cancel-in-flight', 'can-refused'],
    fails: 'CAN-002',
    because: /agent1: no frame within 1500 ms/,
  },
  {
    fault: 'cancel-to-non-opted',
    scenarios: ['can-not-opted', 'can-refused'],
    fails: 'CAN-003',
    because: /"type":"cancel"/,
  },
  {
    fault: 'cancel-late-forwarded',
    scenarios: ['can-cancel-in-flight', 'can-refused'],
    fails: 'CAN-004',
    because: /"type":"token"/,
  },
  {
    fault: 'cancel-refusal-tells-apart',
    scenarios: ['can-refused', 'can-not-opted'],
    fails: 'CAN-005',
    because: /code: expected "CANCEL_REFUSED", got "PERMISSION_DENIED"/,
  },
];

const requirements = loadRequirements();
const grepFor = (ids: string[]) => `^(?:${ids.join('|')})$`;
const failedIds = (report: RunResult) =>
  report.requirements
    .filter((r) => r.verdict === 'failed')
    .map((r) => r.id)
    .sort();

describe('the cancel profile against broken bridges', function () {
  this.timeout(120_000);
  let bridge: RunningBridge;

  before(async () => {
    bridge = await startServer(testConfig({ testClock: true }));
  });

  after(async () => {
    await bridge?.close();
  });

  async function runAgainst(
    fault: FaultName | undefined,
    scenarios: string[],
  ): Promise<{ code: number; report: RunResult }> {
    const proxy = await startFaultProxy(bridge.url, fault);
    try {
      const { code, report } = await runSuite({
        url: `${proxy.wsUrl}/v1`,
        adminToken: ADMIN_TOKEN,
        timeoutMs: 1_500,
        grep: grepFor(scenarios),
        profile: 'cancel',
      });
      expect(report!.scenarios.map((s) => s.id).sort(), 'scenarios run').to.deep.equal([...scenarios].sort());
      return { code, report: report! };
    } finally {
      await proxy.close();
    }
  }

  it('passes every scenario of the profile through the proxy with no fault, and judges only its own requirements', async () => {
    const all = loadScenarios(requirements)
      .filter((s) => s.requirements.some((id) => extensionOf(id) === 'cancel'))
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
    expect(
      report.requirements.map((r) => r.id).filter((id) => id.startsWith('RES-')),
      'no resume rule',
    ).to.deep.equal([]);
    expect(code).to.equal(0);
  });

  for (const c of CASES) {
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
});
