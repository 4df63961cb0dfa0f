// The cancel extension in the core (S1-S8), without sockets: an app's cancel ends its event at once with CANCELLED
// and frees what it held, an agent that opted in (?cancel=1) is told and one that did not sees nothing, the agent's
// later frames are dropped without an error, and a cancel of anything not in flight for the connection gets the
// same CANCEL_REFUSED whoever's it is.
import { expect } from 'chai';
import { validateServiceToAgentMessage, validateServiceToAppMessage } from '../../generated/index.js';
import type { BridgeOptions } from '../../src/core/bridge.js';
import { Directory, type AppRecord } from '../../src/core/directory.js';
import {
  agentRecord,
  peerConnector,
  principalToken,
  recordingBridge,
  type Frame,
  type Peer,
} from '../helpers/core-harness.js';

/** A bridge on a frozen clock with apps `a1`, `a2` and the agent `x`, connected with ?cancel=1 or not. */
function setup(options: Partial<BridgeOptions> & { agentOptsIn?: boolean } = {}) {
  const { agentOptsIn = true, ...bridgeOptions } = options;
  const directory = new Directory();
  directory.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
  const apps: Record<string, AppRecord> = {};
  for (const id of ['a1', 'a2'])
    directory.addApp((apps[id] = { app_id: id, org_id: 'org', name: id, active: true, created_at: 0 }));
  const agent = agentRecord('x');
  directory.addAgent(agent);
  const { bridge, clock, ended } = recordingBridge(directory, bridgeOptions);
  const peer = peerConnector();
  const app = (id: string, resumable = false) =>
    peer(validateServiceToAppMessage, (conn) =>
      bridge.open(conn, { kind: 'app', app: apps[id]!, token: principalToken('app', id) }, undefined, resumable),
    );
  const x = peer(validateServiceToAgentMessage, (conn) =>
    bridge.open(conn, { kind: 'agent', agent, token: principalToken('agent', 'x') }, undefined, false, agentOptsIn),
  );
  const send = (conn: Peer, message: unknown) => conn.handlers.message(JSON.stringify(message), false);
  const accepted = (from: Peer): Frame => {
    send(from, { type: 'event', agent_id: 'x', thread_id: 't', payload: { q: 1 } });
    const answer = from.frames.at(-1)!;
    expect(answer.type, JSON.stringify(answer)).to.equal('accepted');
    return answer;
  };
  const cancel = (conn: Peer, eventId: string): Frame[] => {
    const before = conn.frames.length;
    send(conn, { type: 'cancel', event_id: eventId });
    return conn.frames.slice(before);
  };
  /** What the agent gets in answer to its frames about `eventId`. */
  const fromAgent = (eventId: string, ...messages: object[]): Frame[] => {
    const before = x.frames.length;
    for (const m of messages) send(x, { event_id: eventId, ...m });
    return x.frames.slice(before);
  };
  return { bridge, clock, app, x, send, accepted, cancel, fromAgent, ended };
}

const TOKEN = { type: 'token', token: 'more ' };
const REPLY = { type: 'reply', content: '', done: true };

describe('cancel in the core (S1-S8)', function () {
  it('ends the event at once with CANCELLED, logs it cancelled and frees its bounds (S2, S7)', function () {
    const { bridge, app, x, send, accepted, cancel, ended } = setup();
    const a1 = app('a1');
    const { event_id } = accepted(a1);
    send(x, { type: 'token', event_id, token: 'Hello ' });
    expect(bridge.stats().eventsInFlight).to.equal(1);
    expect(cancel(a1, event_id)).to.deep.equal([
      {
        type: 'error',
        event_id,
        agent_id: 'x',
        error: `Event ${event_id} was cancelled by the app.`,
        code: 'CANCELLED',
      },
    ]);
    expect(bridge.stats().eventsInFlight).to.equal(0);
    expect(bridge.streamedTextBytes()).to.equal(0);
    expect(ended).to.have.length(1);
    expect(ended[0]).to.include({ event_id, outcome: 'cancelled', code: 'CANCELLED', tokens_used: null });
    expect(bridge.cancelStats()).to.deep.equal({ cancels: { cancelled: 1, refused: 0 }, remembered: 1 });
  });

  it('tells an agent that opted in (?cancel=1), and only such an agent (S1, S4)', function () {
    const optedIn = setup();
    const a = optedIn.app('a1');
    const first = optedIn.accepted(a);
    optedIn.cancel(a, String(first.event_id));
    expect(optedIn.x.frames.at(-1)).to.deep.equal({ type: 'cancel', event_id: first.event_id });

    const plain = setup({ agentOptsIn: false });
    const b = plain.app('a1');
    const second = plain.accepted(b);
    const before = plain.x.frames.length;
    plain.cancel(b, String(second.event_id));
    expect(plain.x.frames.slice(before)).to.deep.equal([]);
  });

  for (const agentOptsIn of [true, false]) {
    it(`drops the agent's later frames without an error until its reply (${agentOptsIn ? 'opted in' : 'not opted in'}, S4)`, function () {
      const { app, accepted, cancel, fromAgent } = setup({ agentOptsIn });
      const a1 = app('a1');
      const event_id = String(accepted(a1).event_id);
      cancel(a1, event_id);
      const appFrames = a1.frames.length;
      expect(fromAgent(event_id, TOKEN, TOKEN, REPLY)).to.deep.equal([]);
      expect(a1.frames.length, 'nothing more reaches the app').to.equal(appFrames);
      // After its reply the event is forgotten: a frame about it is one about any ended event.
      expect(fromAgent(event_id, TOKEN).map((f) => f.code)).to.deep.equal(['INVALID_EVENT_ID']);
    });
  }

  it('remembers a cancelled event for agentTimeoutMs after the cancel, no longer (S4)', function () {
    const agentTimeoutMs = 5000; // within the heartbeat's window: the agent stays connected without a ping
    const { clock, app, accepted, cancel, fromAgent, bridge } = setup({ agentTimeoutMs });
    const a1 = app('a1');
    const event_id = String(accepted(a1).event_id);
    cancel(a1, event_id);
    clock.advance(agentTimeoutMs - 1);
    expect(fromAgent(event_id, TOKEN)).to.deep.equal([]);
    clock.advance(1);
    expect(bridge.cancelStats().remembered).to.equal(0);
    expect(fromAgent(event_id, TOKEN).map((f) => f.code)).to.deep.equal(['INVALID_EVENT_ID']);
  });

  it("remembers at most eventsInFlightPerAgentMax of an agent's cancelled events, the oldest forgotten first", function () {
    const { app, accepted, cancel, fromAgent, bridge } = setup({ maxEventsInFlightPerAgent: 2 });
    const a1 = app('a1');
    const ids = [0, 1, 2].map(() => {
      const id = String(accepted(a1).event_id);
      cancel(a1, id);
      return id;
    });
    expect(bridge.cancelStats().remembered).to.equal(2);
    expect(fromAgent(ids[0]!, TOKEN).map((f) => f.code)).to.deep.equal(['INVALID_EVENT_ID']);
    expect(fromAgent(ids[1]!, TOKEN)).to.deep.equal([]);
    expect(fromAgent(ids[2]!, TOKEN)).to.deep.equal([]);
  });

  it("refuses, with one identical frame, an unknown, an ended, another connection's and another app's event (S3)", function () {
    const { app, accepted, cancel, send, x } = setup();
    const a1 = app('a1');
    const sibling = app('a1');
    const a2 = app('a2');
    const live = String(accepted(a1).event_id);
    const done = String(accepted(a1).event_id);
    send(x, { type: 'reply', event_id: done, content: 'ok', done: true });
    const refusal = (eventId: string) => ({
      type: 'error',
      event_id: eventId,
      error: `Event ${eventId} cannot be cancelled: it is not in flight for this app.`,
      code: 'CANCEL_REFUSED',
    });
    expect(cancel(a1, '01JQ7ZK3M4N5P6Q7R8S9T0V1W2')).to.deep.equal([refusal('01JQ7ZK3M4N5P6Q7R8S9T0V1W2')]);
    expect(cancel(a1, done), 'ended: the reply won (S8)').to.deep.equal([refusal(done)]);
    expect(cancel(sibling, live), 'another instance of the app').to.deep.equal([refusal(live)]);
    expect(cancel(a2, live), 'another app').to.deep.equal([refusal(live)]);
    // The event goes on for its own connection.
    send(x, { type: 'reply', event_id: live, content: 'still here', done: true });
    expect(a1.frames.at(-1)).to.include({ type: 'reply', event_id: live, reply: 'still here' });
  });

  it('answers a malformed cancel with INVALID_MESSAGE', function () {
    const { app, send } = setup();
    const a1 = app('a1');
    send(a1, { type: 'cancel' });
    expect(a1.frames.at(-1)).to.include({ type: 'error', code: 'INVALID_MESSAGE' });
  });

  describe('with resume (S6)', function () {
    it('cancels an event taken over by a resume, and a cancelled event cannot be resumed', function () {
      const { app, accepted, cancel, send, x, bridge } = setup();
      const first = app('a1', true);
      const a = accepted(first);
      const event_id = String(a.event_id);
      send(x, { type: 'token', event_id, token: 'one ' });
      first.handlers.closed();
      const second = app('a1', true);
      send(second, { type: 'resume', event_id, resume_token: a.resume_token, after_seq: 0 });
      expect(second.frames.at(-1)).to.include({ type: 'token', seq: 1 });
      expect(cancel(second, event_id).map((f) => f.code)).to.deep.equal(['CANCELLED']);
      expect(bridge.resumeStats().bytes, 'its kept fragments are let go at once').to.equal(0);
      const third = app('a1', true);
      send(third, { type: 'resume', event_id, resume_token: a.resume_token, after_seq: 0 });
      expect(third.frames.at(-1)).to.deep.equal({
        type: 'error',
        event_id,
        agent_id: 'x',
        error: `Event ${event_id} cannot be resumed: it was cancelled.`,
        code: 'RESUME_GAP',
      });
    });

    it('refuses the cancel of the connection whose event a resume took over', function () {
      const { app, accepted, cancel, send } = setup();
      const first = app('a1', true);
      const a = accepted(first);
      const second = app('a1', true);
      send(second, { type: 'resume', event_id: a.event_id, resume_token: a.resume_token, after_seq: 0 });
      expect(cancel(first, String(a.event_id)).map((f) => f.code)).to.deep.equal(['CANCEL_REFUSED']);
      expect(cancel(second, String(a.event_id)).map((f) => f.code)).to.deep.equal(['CANCELLED']);
    });
  });
});
