// `bridge-conformance robustness` against our bridge, with a small stand-in case list and with 20 of the
// generator's cases (cases.ts) in both profiles: a run conforms with the canary's latencies recorded; a non-loopback
// target is refused before any connection; the caps are printed and enforced; a seed gives back the same cases.
import { expect } from 'chai';
import { robustnessHelpers } from '../../conformance/cli.js';
import { generateCases } from '../../conformance/robustness/cases.js';
import { CAP_DEFAULTS, robustness, type RobustnessOptions } from '../../conformance/robustness/run.js';
import { ADMIN_TOKEN, startTestBridge } from '../helpers/bridge.js';
import { captured } from './suite.js';

type Case = ReturnType<NonNullable<Parameters<typeof robustness>[1]['generate']>>[number];

/** A stand-in of cases.ts's generateCases: a fixed pool, shuffled by the seed (same seed, same order). */
function standIn({ seed, cases = 6 }: { seed: number; cases?: number }): Case[] {
  const pool: Case[] = [
    {
      id: 'APP-NOT-JSON',
      endpoint: 'app',
      needsEvent: false,
      frames: [{ text: '{not json' }],
      expect: { kind: 'error', code: 'INVALID_JSON', requirement: 'ERR-001' },
      source: 'protocol',
      category: 'not-json',
      conforms: false,
      why: 'a frame that is not JSON',
    },
    {
      id: 'APP-UNKNOWN-TYPE',
      endpoint: 'app',
      needsEvent: false,
      frames: [{ text: '{"type":"nope"}' }],
      expect: { kind: 'any-error', requirement: 'ERR-011' },
      source: 'protocol',
      category: 'unknown-type',
      conforms: false,
      why: 'an unknown type',
    },
    {
      id: 'APP-EVENT-OK',
      endpoint: 'app',
      needsEvent: false,
      frames: [{ text: '{"type":"event","agent_id":"${agent_id}","thread_id":"t","payload":{}}' }],
      expect: { kind: 'accepted', requirement: 'FLOW-001' },
      source: 'protocol',
      category: 'limit',
      conforms: true,
      why: 'a valid event (boundary)',
    },
    {
      id: 'AGT-TOKEN-MISTYPED',
      endpoint: 'agent',
      needsEvent: true,
      frames: [{ text: '{"type":"token","event_id":"${event_id}","token":123}' }],
      expect: { kind: 'any-error', requirement: 'AGT-008' },
      source: 'protocol',
      category: 'wrong-type',
      conforms: false,
      why: 'a token that is a number',
    },
    {
      id: 'AGT-TOKEN-OK',
      endpoint: 'agent',
      needsEvent: true,
      frames: [{ text: '{"type":"token","event_id":"${event_id}","token":"hi"}' }],
      expect: { kind: 'accepted', requirement: 'FLOW-003' },
      source: 'protocol',
      category: 'limit',
      conforms: true,
      why: 'a token (boundary)',
    },
    {
      id: 'APP-BINARY',
      endpoint: 'app',
      needsEvent: false,
      frames: [{ binary: Buffer.from([0, 1, 2, 255]).toString('base64') }],
      expect: { kind: 'error-or-silence', requirement: 'ERR-011' },
      source: 'protocol',
      category: 'binary',
      conforms: false,
      why: 'a binary frame',
    },
  ];
  const order = pool.map((c, i) => ({ c, k: (i * 7919 + seed * 104729) % 1009 })).sort((a, b) => a.k - b.k);
  return order.slice(0, cases).map((o) => o.c);
}

function runRobustness(
  options: Partial<RobustnessOptions> & Pick<RobustnessOptions, 'url'>,
  generate: typeof standIn | typeof generateCases = standIn,
) {
  return captured((reportJson) =>
    robustness(
      {
        profile: 'protocol',
        list: false,
        canaryMs: 2_000,
        timeoutMs: 1_000,
        scale: 'quick',
        exclude: 'resource.', // the resource cases have their own tests (robustness-resources.test.ts)
        ...CAP_DEFAULTS,
        reportJson,
        ...options,
      },
      { ...robustnessHelpers, generate },
    ),
  );
}

describe('bridge-conformance robustness', function () {
  this.timeout(30_000);

  it('conforms against our bridge, each case judged, the canary timed', async function () {
    const bridge = await startTestBridge();
    const { code, report, output } = await runRobustness({
      url: `${bridge.url.replace(/^http/, 'ws')}/v1`,
      adminToken: ADMIN_TOKEN,
      seed: 7,
    });
    expect(output.split('\n')[0], output).to.match(/seed 7 /);
    expect(code, output).to.equal(0);
    expect(report!.role).to.equal('robustness');
    expect(report!.scenarios.map((s) => s.status)).to.deep.equal(Array(6).fill('passed'));
    expect(report!.robustness!.canary.latenciesMs).to.have.length(6);
    expect(report!.robustness!.canary.p99Ms).to.be.a('number');
    const rob = report!.requirements.find((r) => r.id === 'ROB-001');
    expect(rob?.verdict).to.equal('passed');
  });

  for (const profile of ['protocol', 'bridge'] as const)
    it(`conforms against our bridge with 20 of the generator's cases (${profile} profile)`, async function () {
      const bridge = await startTestBridge();
      const { code, report, output } = await runRobustness(
        { url: `${bridge.url.replace(/^http/, 'ws')}/v1`, adminToken: ADMIN_TOKEN, seed: 5, cases: 20, profile },
        generateCases,
      );
      expect(code, output).to.equal(0);
      const cases = report!.scenarios;
      expect(cases.length).to.equal(report!.robustness!.cases).and.to.be.greaterThan(10);
      expect(cases.filter((s) => s.status !== 'passed').map((s) => `${s.id}: ${s.reason}`)).to.deep.equal([]);
      expect(cases.every((s) => /^\[[a-z-]+\] /.test(s.title))).to.equal(true);
      expect(report!.robustness!.canary.latenciesMs).to.have.length(cases.length);
      expect(report!.robustness!.canary.p50Ms).to.be.a('number');
    });

  it('refuses a target that is not on loopback, before any connection (exit 2)', async function () {
    const { code, output, report } = await runRobustness({ url: 'ws://192.0.2.1:9/v1', adminToken: 'x', seed: 1 });
    expect(code).to.equal(2);
    expect(output).to.match(/not loopback/);
    expect(report).to.equal(undefined);
  });

  it('prints its caps first and stops at one: the remaining cases untested, never passed (exit 3)', async function () {
    const bridge = await startTestBridge();
    // The target's two connections and the canary's two: a cap of 3 stops the first case, at the canary.
    const { code, report, output } = await runRobustness({
      url: `${bridge.url.replace(/^http/, 'ws')}/v1`,
      adminToken: ADMIN_TOKEN,
      seed: 3,
      maxConnections: 3,
    });
    expect(output).to.match(/caps: at most 3 connections/);
    expect(output.indexOf('caps:')).to.be.lessThan(output.indexOf('robustness cases'));
    expect(code, output).to.equal(3);
    expect(report!.robustness!.stopped).to.match(/cap of 3 connections/);
    const untested = report!.scenarios.filter((s) => s.status === 'skipped');
    expect(untested.length).to.be.greaterThan(0);
    expect(untested.every((s) => /^not run: the cap/.test(s.reason!))).to.equal(true);
    expect(report!.robustness!.used!.connections).to.be.at.most(3);
  });

  it('gives back the same cases for the same seed (--list)', async function () {
    const list = async (seed: number) =>
      (await runRobustness({ url: 'ws://127.0.0.1:9/v1', list: true, seed })).output.split('\n').slice(1).join('\n');
    expect(await list(11)).to.equal(await list(11));
    expect(await list(11)).to.not.equal(await list(12));
  });
});
