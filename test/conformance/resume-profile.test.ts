// The resume profile (fair conformance for an extension): its requirements are judged only with --profile resume,
// the protocol and bridge profiles select none of its scenarios, and the extension's rules of every frame (R1-R3)
// fail exactly their own requirement.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { client } from '../../conformance/cli.js';
import { resumeFrameRule } from '../../conformance/resume-frames.js';
import { extensionOf, inProfile, loadRequirements, loadScenarios, PROFILES } from '../../conformance/scenario.js';
import { validateOpenServiceToAppMessage, validateServiceToAppMessage } from '../../generated/index.js';
import { runSuite } from './suite.js';

const TOKEN_A = 'A'.repeat(43);
const TOKEN_B = 'B'.repeat(43);

describe('the resume profile', function () {
  const registry = loadRequirements();
  // The cancel extension's requirements and scenarios are its own profile's (broken-cancel-bridges.test.ts).
  const isResume = (id: string) => extensionOf(id) === 'resume';
  const scenarios = loadScenarios(registry).map((s) => ({
    ...s,
    extension: s.extension && s.requirements.some(isResume),
  }));
  const extensionIds = [...registry.values()]
    .filter((r) => r.source === 'extension' && isResume(r.id))
    .map((r) => r.id);

  it('judges the extension alone (and MSG-001 and CLI-001, every frame a message of the protocol); the other profiles never judge it', function () {
    expect(extensionIds.length).to.be.greaterThan(10);
    const judged = (profile: (typeof PROFILES)[number]) =>
      [...registry.values()].filter((r) => inProfile(r, profile)).map((r) => r.id);
    expect(judged('resume').sort()).to.deep.equal(['CLI-001', 'MSG-001', ...extensionIds].sort());
    for (const profile of ['protocol', 'bridge', 'cancel'] as const)
      expect(
        judged(profile).filter((id) => id.startsWith('RES-')),
        profile,
      ).to.deep.equal([]);
    expect(judged('bridge')).to.include.members(['MSG-001', 'MSG-002', 'AUTH-008']);
  });

  it("lists exactly the extension's scenarios with --profile resume, and none of them in the other profiles", async function () {
    const listed = async (profile: (typeof PROFILES)[number]) => {
      const { code, output } = await runSuite({ url: 'ws://127.0.0.1:9/v1', list: true, profile });
      expect(code).to.equal(0);
      return output
        .split('\n')
        .map((l) => l.split(' ')[0]!)
        .filter(Boolean)
        .sort();
    };
    const extension = scenarios
      .filter((s) => s.extension)
      .map((s) => s.id)
      .sort();
    expect(extension).to.have.length.greaterThan(5);
    expect(await listed('resume')).to.deep.equal(extension);
    for (const profile of ['protocol', 'bridge', 'cancel'] as const) {
      const ids = await listed(profile);
      expect(
        ids.filter((id) => extension.includes(id)),
        profile,
      ).to.deep.equal([]);
      if (profile !== 'cancel') expect(ids.length, profile).to.be.greaterThan(40);
    }
  });

  it("adds the extension's frame requirements to its own scenarios only", function () {
    for (const s of scenarios) {
      const named = s.requirements.filter((id) => ['RES-001', 'RES-002', 'RES-003'].includes(id));
      expect(named, s.id).to.deep.equal(
        s.extension ? ['RES-001', 'RES-002', 'RES-003'].filter((id) => s.requirements.includes(id)) : [],
      );
      if (s.extension) expect(named.length, s.id).to.equal(3);
    }
  });

  it('refuses a scenario that mixes the extension with the protocol or our decisions', function () {
    const dir = mkdtempSync(join(tmpdir(), 'resume-profile-'));
    try {
      writeFileSync(
        join(dir, 'mixed.yaml'),
        'title: Mixed\nrequirements: [HB-001, RES-004]\nfixtures: { orgs: [org1], apps: { app1: org1 } }\nsteps:\n  - connect: { actor: app1, resume: true, checks: [HB-001, RES-004] }\n',
      );
      expect(() => loadScenarios(registry, dir)).to.throw(
        /mixed\.yaml: names requirements of the extension .* a scenario belongs to one profile/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has no client scenarios: the client role refuses the profile (exit 2)', async function () {
    const { error } = console;
    console.error = () => undefined;
    try {
      expect(
        await client({
          role: 'app',
          command: 'true',
          profile: 'resume',
          list: false,
          slow: false,
          connectTimeoutMs: 1000,
        }),
      ).to.equal(2);
    } finally {
      console.error = error;
    }
  });
});

describe('the frame checks of every profile on resumable connections', function () {
  const accepted = {
    type: 'accepted',
    event_id: '01JQ7ZK3M4N5P6Q7R8S9T0V1W2',
    agent_id: 'agent-1',
    session_key: 'svc:agent-1:app-1:t',
    status: 'accepted',
    resume_token: TOKEN_A,
  };
  const token = { type: 'token', event_id: '01JQ7ZK3M4N5P6Q7R8S9T0V1W2', agent_id: 'agent-1', token: 'x', seq: 1 };

  it('accept resume_token and seq (MSG-001 open schemas, MSG-002 our closed ones)', function () {
    for (const frame of [accepted, token]) {
      expect(validateOpenServiceToAppMessage(frame), `open ${frame.type}`).to.equal(true);
      expect(validateServiceToAppMessage(frame), `closed ${frame.type}`).to.equal(true);
    }
  });
});

describe("the resume extension's rules of every frame", function () {
  const ev = (n: number) => `01JQ7ZK3M4N5P6Q7R8S9T0V1W${n}`;
  const judge = (rule: ReturnType<typeof resumeFrameRule>, frame: Record<string, unknown>) =>
    rule(frame, JSON.stringify(frame));

  it('R1: a connection without ?resume=1 gets no resume_token and no seq (RES-001)', function () {
    const rule = resumeFrameRule(false, new Set());
    expect(judge(rule, { type: 'accepted', event_id: ev(1) })).to.equal(undefined);
    expect(judge(rule, { type: 'token', event_id: ev(1), token: 'x' })).to.equal(undefined);
    expect(judge(rule, { type: 'accepted', event_id: ev(1), resume_token: TOKEN_A })).to.deep.include({
      requirement: 'RES-001',
    });
    expect(judge(rule, { type: 'token', event_id: ev(1), token: 'x', seq: 1 })?.problem).to.match(
      /seq on a connection opened without \?resume=1/,
    );
  });

  it('R2: every accepted carries a well-formed resume token, never one given before, on any connection (RES-002)', function () {
    const seen = new Set<string>();
    const one = resumeFrameRule(true, seen);
    const other = resumeFrameRule(true, seen);
    expect(judge(one, { type: 'accepted', event_id: ev(1) })).to.deep.include({ requirement: 'RES-002' });
    expect(judge(one, { type: 'accepted', event_id: ev(1), resume_token: 'short' })).to.deep.include({
      requirement: 'RES-002',
    });
    expect(judge(one, { type: 'accepted', event_id: ev(1), resume_token: TOKEN_A })).to.equal(undefined);
    expect(judge(other, { type: 'accepted', event_id: ev(2), resume_token: TOKEN_A })?.problem).to.match(
      /the resume_token of an earlier event again/,
    );
    expect(judge(other, { type: 'accepted', event_id: ev(2), resume_token: TOKEN_B })).to.equal(undefined);
  });

  it("R3: tokens of the connection's own events count 1, 2, 3 with no gap; replies and errors carry no seq (RES-003)", function () {
    const rule = resumeFrameRule(true, new Set());
    judge(rule, { type: 'accepted', event_id: ev(1), resume_token: TOKEN_A });
    expect(judge(rule, { type: 'token', event_id: ev(1), token: 'a' })).to.deep.include({ requirement: 'RES-003' });
    expect(judge(rule, { type: 'token', event_id: ev(1), token: 'a', seq: 1 })).to.equal(undefined);
    expect(judge(rule, { type: 'token', event_id: ev(1), token: 'c', seq: 3 })?.problem).to.match(
      /seq 3 after 1; expected 2/,
    );
    expect(judge(rule, { type: 'token', event_id: ev(1), token: 'b', seq: 2 })).to.equal(undefined);
    expect(judge(rule, { type: 'reply', event_id: ev(1), reply: 'ab', seq: 3 })).to.deep.include({
      requirement: 'RES-003',
    });
    expect(judge(rule, { type: 'error', event_id: ev(1), code: 'AGENT_ERROR', error: 'x', seq: 3 })).to.deep.include({
      requirement: 'RES-003',
    });
    expect(judge(rule, { type: 'reply', event_id: ev(1), reply: 'ab' })).to.equal(undefined);
  });

  it("leaves the positions of an event taken back to the scenario's steps (R4), but still wants a seq", function () {
    const rule = resumeFrameRule(true, new Set());
    expect(judge(rule, { type: 'token', event_id: ev(9), token: 'c', seq: 3 })).to.equal(undefined);
    expect(judge(rule, { type: 'token', event_id: ev(9), token: 'c', seq: 0 })).to.deep.include({
      requirement: 'RES-003',
    });
  });
});
