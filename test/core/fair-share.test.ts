// Fair shares per organization (F3, R10): an organization over its share of fragments has its agents paused, never
// a fragment dropped; over its share of discovers, resumes or bytes resumed it gets TOO_MANY_REQUESTS with a
// retry_after_seconds, and the event goes on; another organization is not touched.
import { expect } from 'chai';
import { LIMITS, validateServiceToAgentMessage, validateServiceToAppMessage } from '../../generated/index.js';
import type { BridgeOptions } from '../../src/core/bridge.js';
import { Directory, type AgentRecord, type AppRecord } from '../../src/core/directory.js';
import { DEFAULT_FAIR_SHARES, type FairShareLimits } from '../../src/core/fair-share.js';
import {
  agentRecord,
  peerConnector,
  principalToken,
  recordingBridge,
  type Frame,
  type Peer,
} from '../helpers/core-harness.js';

const OFF: FairShareLimits = {
  fragmentsPerSecond: 0,
  fragmentsBurst: 0,
  discoversPerSecond: 0,
  discoversBurst: 0,
  resumesPerSecond: 0,
  resumesBurst: 0,
  replayBytesPerSecond: 0,
  replayBytesBurst: 0,
};

/** Organizations `busy` and `quiet`, each with an app and a connected agent whose socket says when it is paused. */
function setup(fairShares: Partial<FairShareLimits>, options: Partial<BridgeOptions> = {}) {
  const directory = new Directory();
  const apps: Record<string, AppRecord> = {};
  const agents: Record<string, AgentRecord> = {};
  for (const org of ['busy', 'quiet']) {
    directory.addOrg({ org_id: org, name: org, created_at: 0 });
    directory.addApp((apps[org] = { app_id: `${org}-app`, org_id: org, name: org, active: true, created_at: 0 }));
    directory.addAgent((agents[org] = agentRecord(`${org}-agent`, { org_id: org, name: org })));
  }
  const { bridge, clock, logged } = recordingBridge(directory, { fairShares: { ...OFF, ...fairShares }, ...options });
  const peer = peerConnector();
  const paused = new Map<string, boolean>();
  const agent = (org: string) =>
    peer(validateServiceToAgentMessage, (conn) => {
      conn.pause = () => paused.set(org, true);
      conn.resume = () => paused.set(org, false);
      return bridge.open(conn, { kind: 'agent', agent: agents[org]!, token: principalToken('agent', `${org}-agent`) });
    });
  const app = (org: string, resumable = false) =>
    peer(validateServiceToAppMessage, (conn) =>
      bridge.open(
        conn,
        { kind: 'app', app: apps[org]!, token: principalToken('app', `${org}-app`) },
        undefined,
        resumable,
      ),
    );
  const send = (conn: Peer, message: unknown) => conn.handlers.message(JSON.stringify(message), false);
  const agentConns = { busy: agent('busy'), quiet: agent('quiet') };
  const accepted = (conn: Peer, org: string): Frame => {
    send(conn, { type: 'event', agent_id: `${org}-agent`, thread_id: 't', payload: {} });
    const answer = conn.frames.at(-1)!;
    expect(answer.type, JSON.stringify(answer)).to.equal('accepted');
    return answer;
  };
  const tokens = (org: 'busy' | 'quiet', eventId: string, count: number, text = 'w') => {
    for (let i = 0; i < count; i++) send(agentConns[org], { type: 'token', event_id: eventId, token: `${text}${i} ` });
  };
  const resume = (conn: Peer, a: Frame, afterSeq = 0) => {
    const before = conn.frames.length;
    send(conn, { type: 'resume', event_id: a.event_id, resume_token: a.resume_token, after_seq: afterSeq });
    return conn.frames.slice(before);
  };
  return { bridge, clock, logged, paused, app, send, accepted, tokens, resume, agentConns };
}

const tokenFrames = (conn: Peer) => conn.frames.filter((f) => f.type === 'token');

describe('fair shares per organization (F3, R10)', function () {
  it('pauses an agent whose organization is over its share of fragments, drops none, and leaves another organization alone', async function () {
    const { clock, paused, app, accepted, tokens, bridge, logged } = setup({
      fragmentsPerSecond: 1000,
      fragmentsBurst: 100,
    });
    /** The time passes, and the paused socket's frames are read (the pause ends in a promise). */
    const pass = async (ms: number) => {
      clock.advance(ms);
      await new Promise((resolve) => setImmediate(resolve));
    };
    const [busyApp, quietApp] = [app('busy'), app('quiet')];
    const busy = accepted(busyApp, 'busy');
    const quiet = accepted(quietApp, 'quiet');
    tokens('busy', busy.event_id, 300);
    // The 101st fragment is taken and forwarded; the agent's socket is then paused and its next frames wait.
    expect(tokenFrames(busyApp)).to.have.length(101);
    expect(paused.get('busy')).to.equal(true);
    tokens('quiet', quiet.event_id, 50);
    expect(tokenFrames(quietApp)).to.have.length(50);
    expect(paused.get('quiet')).to.equal(undefined);
    await pass(LIMITS.fragmentPauseMinMs); // 10 ms at 1000/s: ten more, then paused again
    expect(tokenFrames(busyApp)).to.have.length(111);
    for (let i = 0; i < 20; i++) await pass(LIMITS.fragmentPauseMinMs);
    expect(tokenFrames(busyApp).map((f) => f.token)).to.deep.equal(Array.from({ length: 300 }, (_, i) => `w${i} `)); // all, in order
    expect(paused.get('busy')).to.equal(false);
    const { limited, pausedMs } = bridge.fairShareStats();
    expect(limited).to.deep.equal({ fragments: 20, discover: 0, resume: 0, replay: 0 }); // a pause per batch of ten
    expect(pausedMs).to.equal(200);
    const lines = logged.filter(([, m]) => m.startsWith('organizations over their fair share'));
    expect(lines[0]).to.deep.equal([
      { times: 1, limited: { 'fragments busy': 1 } },
      'organizations over their fair share: 1 time(s)',
    ]);
  });

  it("answers a discover over its organization's share with TOO_MANY_REQUESTS and retry_after_seconds, then the list again", function () {
    const { clock, app, send, bridge } = setup({ discoversPerSecond: 2, discoversBurst: 2 });
    const [busyApp, quietApp] = [app('busy'), app('quiet')];
    for (let i = 0; i < 3; i++) send(busyApp, { type: 'discover' });
    send(quietApp, { type: 'discover' });
    expect(busyApp.frames.map((f) => f.type)).to.deep.equal(['agents', 'agents', 'error']);
    expect(busyApp.frames[2]).to.deep.equal({
      type: 'error',
      code: 'TOO_MANY_REQUESTS',
      error: 'Too many discover requests from the apps of organization busy; retry after 0.5 s.',
      metadata: { retry_after_seconds: 0.5 },
    });
    expect(quietApp.frames.map((f) => f.type)).to.deep.equal(['agents']);
    clock.advance(500);
    send(busyApp, { type: 'discover' });
    expect(busyApp.frames.at(-1)).to.deep.include({ type: 'agents' });
    expect(bridge.fairShareStats().limited.discover).to.equal(1);
  });

  it("refuses a resume over its organization's share with TOO_MANY_REQUESTS, before looking the event up, and the event goes on", function () {
    const { clock, app, accepted, tokens, resume, bridge } = setup({ resumesPerSecond: 1, resumesBurst: 1 });
    const first = app('busy', true);
    const a = accepted(first, 'busy');
    tokens('busy', a.event_id, 2);
    first.handlers.closed();
    const second = app('busy', true);
    expect(tokenFrames(second)).to.have.length(0);
    expect(resume(second, a).map((f) => f.token)).to.deep.equal(['w0 ', 'w1 ']);
    const third = app('busy', true);
    const unknown = { event_id: '01JQ7ZK3M4N5P6Q7R8S9T0V1W2', resume_token: 'A'.repeat(43) };
    for (const event of [a, unknown]) {
      expect(resume(third, event)).to.deep.equal([
        {
          type: 'error',
          event_id: event.event_id,
          code: 'TOO_MANY_REQUESTS',
          error: `Too many resumes from the apps of organization busy; retry after 1 s. Event ${event.event_id} goes on.`,
          metadata: { retry_after_seconds: 1 },
        },
      ]);
    }
    tokens('busy', a.event_id, 1, 'live');
    expect(tokenFrames(second).at(-1)).to.include({ token: 'live0 ', seq: 3 }); // still the second connection's
    clock.advance(1000);
    expect(resume(third, a, 3)).to.deep.equal([]); // taken over, nothing missed
    expect(bridge.resumeStats().resumes).to.deep.equal({ resumed: 2, gap: 0, refused: 0, limited: 2 });
  });

  it('meters the bytes resumes send again: once the organization owes, a resume with something to send waits, one with nothing does not', function () {
    const { clock, app, accepted, tokens, resume, send, agentConns, bridge } = setup({
      replayBytesPerSecond: 10_000,
      replayBytesBurst: 10_000,
    });
    const conn = app('busy', true);
    const ended = accepted(conn, 'busy');
    tokens('busy', ended.event_id, 100, 'x'.repeat(100)); // about 17 KB of frames to send again
    send(agentConns.busy, { type: 'reply', event_id: ended.event_id, content: '', done: true });
    const live = accepted(conn, 'busy');
    const again = app('busy', true);
    const whole = resume(again, ended);
    expect(whole).to.have.length(101); // taken whole, into debt
    const owed = whole.reduce((n, f) => n + Buffer.byteLength(JSON.stringify(f)), 0) - 10_000;
    const limited = resume(again, ended);
    expect(limited).to.have.length(1);
    expect(limited[0]).to.include({ code: 'TOO_MANY_REQUESTS', event_id: ended.event_id });
    expect(limited[0]!.error).to.match(
      /^The apps of organization busy have taken back more than their share of kept streams \(10000 bytes\/s\); retry after [\d.]+ s\. Event \w+ goes on\.$/,
    );
    expect(limited[0]!.metadata.retry_after_seconds).to.be.closeTo(owed / 10_000, 0.002);
    expect(resume(again, live)).to.deep.equal([]); // nothing to send again: free, and taken over
    clock.advance(Math.ceil(limited[0]!.metadata.retry_after_seconds * 1000));
    expect(resume(again, ended)).to.have.length(101);
    expect(bridge.fairShareStats().limited).to.deep.include({ replay: 1 });
    expect(bridge.resumeStats().resumes).to.deep.include({ resumed: 3, limited: 1 });
  });

  it('has defaults a normal organization never meets', function () {
    expect(DEFAULT_FAIR_SHARES).to.deep.equal({
      fragmentsPerSecond: LIMITS.fragmentsPerOrgPerSecond,
      fragmentsBurst: LIMITS.fragmentsPerOrgBurst,
      discoversPerSecond: LIMITS.discoversPerOrgPerSecond,
      discoversBurst: LIMITS.discoversPerOrgBurst,
      resumesPerSecond: LIMITS.resumesPerOrgPerSecond,
      resumesBurst: LIMITS.resumesPerOrgBurst,
      replayBytesPerSecond: LIMITS.resumeReplayBytesPerOrgPerSecond,
      replayBytesBurst: LIMITS.resumeReplayBytesPerOrgBurst,
    });
    const { app, accepted, tokens, paused } = setup(DEFAULT_FAIR_SHARES);
    const conn = app('busy');
    const a = accepted(conn, 'busy');
    tokens('busy', a.event_id, 5000); // a quarter of a second of the share at once
    expect(tokenFrames(conn)).to.have.length(5000);
    expect(paused.get('busy')).to.equal(undefined);
  });
});
