// Proof that the conformance suite can fail: it runs against our bridge through a fault proxy (fault-proxy.ts),
// once with no fault, where every selected scenario must pass (the proxy is transparent), and once per fault,
// where exactly the requirements that fault breaks must fail, for the reason the fault gives, and the exit code
// must be 1 when a MUST requirement fails.
//
// The suite judges requirements by the failing step: a scenario that fails at a step marked `checks: [...]` fails
// those requirements only (the rest of the scenario is not reached). Each selection also holds a control scenario
// that uses the faulty path without depending on the broken rule, and
// must keep passing: a fault fails what it breaks, not everything.
import { expect } from 'chai';
import { loadRequirements } from '../../conformance/scenario.js';
import { brokenBridgeRuns, failedIds } from './broken-extension-bridges.js';
import type { FaultName } from './fault-proxy.js';

interface Case {
  fault: FaultName;
  /** Scenario ids to run (the grep selects exactly these). */
  scenarios: string[];
  /** The requirement IDs that must fail, and no others. */
  fails: string[];
  /** Every failed scenario's reason must match: it failed because of the fault, not a timeout elsewhere. */
  because: RegExp;
}

const CASES: Case[] = [
  {
    fault: 'token-without-agent-id',
    scenarios: ['flow-stream-and-reply', 'auth-header-carrier'],
    // Exactly MSG-001: the token frame breaks the protocol's own (open) schema, which every received frame is
    // checked against; the accepted and delivered steps before it pass, and the control sees no token.
    fails: ['MSG-001'],
    because: /received an invalid app frame \{"type":"token".*agent_id: is required/,
  },
  {
    fault: 'agent-session-key-with-agent-id',
    scenarios: ['flow-stream-and-reply', 'sess-key-per-thread', 'flow-app-instances'],
    // FLOW-002 is the rule broken (the delivery step checks it). SESS-001 fails rightly: its scenario checks the
    // session key in both forms, and the agent's form is wrong. flow-app-instances delivers events to an agent
    // without checking their session key: the control, it passes.
    fails: ['FLOW-002', 'SESS-001'],
    because: /session_key: expected "svc:[^:"]+:[^:"]+", got "svc:[^:"]+:[^:"]+:[^:"]+"/,
  },
  {
    fault: 'payload-limit-off-by-one',
    scenarios: ['err-payload-size', 'flow-stream-and-reply'],
    // Exactly ERR-004: err-payload-size names nothing else; smaller payloads (flow-stream-and-reply) still pass.
    fails: ['ERR-004'],
    because: /expected \{"type":"accepted".*type: expected "accepted", got "error"/,
  },
  {
    fault: 'reply-to-every-instance',
    scenarios: ['flow-app-instances', 'flow-stream-and-reply'],
    // Exactly FLOW-008. A single instance (flow-stream-and-reply) gets its reply as before. (auth-query-carrier,
    // which also opens three instances, would add AUTH-002, AUTH-003, HB-001 and HB-002: not selected.)
    fails: ['FLOW-008'],
    because: /"type":"reply"|got "reply"/,
  },
  {
    fault: 'no-pong',
    scenarios: ['hb-ping-pong', 'disc-directory-auth'],
    // Exactly HB-001: the first app pong step checks it (agent pongs still arrive). Nearly every scenario pings
    // its apps (expectSilence, heartbeats while the clock moves), so the control is an HTTP-only one.
    fails: ['HB-001'],
    because: /app1: no frame within 1500 ms/,
  },
  {
    fault: 'forbidden-as-unauthorized',
    scenarios: ['auth-wrong-endpoint', 'auth-bad-token'],
    // AUTH-004 fails at the scenario's first refusal (an agent token on /ws/app); the scenario stops there, so
    // AUTH-005, broken too, is errored (not judged) rather than failed: the suite reports the first broken rule of each
    // scenario. AUTH-008 (code, close code and reason agree) is still kept by the rewritten error. A genuine
    // UNAUTHORIZED (auth-bad-token) is untouched: the control, it passes.
    fails: ['AUTH-004'],
    because: /expected a refusal with FORBIDDEN; got \{"type":"error".*"code":"UNAUTHORIZED"/,
  },
  {
    fault: 'close-without-reason',
    scenarios: ['auth-bad-token', 'auth-header-carrier'],
    // Exactly AUTH-008 (the close reason must be the error code): the close steps check it. The control never
    // sees a close.
    fails: ['AUTH-008'],
    because: /refusal with UNAUTHORIZED: close reason "", expected UNAUTHORIZED/,
  },
  {
    fault: 'retry-after-missing',
    scenarios: ['rate-limit-exceeded', 'err-invalid-agent-id'],
    // Exactly ERR-008. Other event errors (INVALID_AGENT_ID, the control) keep their shape.
    fails: ['ERR-008'],
    because: /RATE_LIMIT_EXCEEDED/,
  },
];

const requirements = loadRequirements();

describe('the conformance suite against broken bridges', function () {
  this.timeout(120_000);
  const runAgainst = brokenBridgeRuns('bridge', {
    config: { rateLimitPerSecond: 20, rateLimitBurst: 40 },
    everyRun(report) {
      expect(report.hasClock, 'the test clock answers through the proxy').to.equal(true);
      expect(
        report.scenarios.filter((s) => s.status === 'skipped').map((s) => `${s.id}: ${s.reason}`),
        'skipped',
      ).to.deep.equal([]);
    },
  });

  it('passes every selected scenario through the proxy with no fault (the proxy is transparent)', async () => {
    const all = [...new Set(CASES.flatMap((c) => c.scenarios))];
    const { code, report } = await runAgainst(undefined, all);
    const failures = report.scenarios
      .filter((s) => s.status !== 'passed')
      .map((s) => `${s.id}: step ${s.failedStep}: ${s.reason}`);
    expect(failures).to.deep.equal([]);
    expect(failedIds(report)).to.deep.equal([]);
    expect(code).to.equal(0);
  });

  for (const c of CASES) {
    it(`${c.fault}: fails exactly ${c.fails.join(', ')}`, async () => {
      const { code, report } = await runAgainst(c.fault, c.scenarios);
      expect(failedIds(report), 'failed requirements').to.deep.equal([...c.fails].sort());
      for (const s of report.scenarios.filter((x) => x.status === 'failed')) {
        expect(s.reason, `why ${s.id} failed`).to.match(c.because);
      }
      const mustFailed = c.fails.some((id) => requirements.get(id)?.level === 'MUST');
      expect(report.failedByLevel.MUST > 0).to.equal(mustFailed);
      expect(code, 'exit code').to.equal(mustFailed ? 1 : 0);
    });
  }
});
