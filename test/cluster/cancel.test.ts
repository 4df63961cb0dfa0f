// Cancels across nodes (S5, S6, S8), with bridge cores joined by the memory hub: the event's home decides. A cancel
// of an event whose agent is on another node tells that node, which tells the agent only if it opted in
// (?cancel=1); a cancel from a connection that resumed the event on another node is handed to the home, and its
// answer comes back — also when the agent's reply won the race.
import { expect } from 'chai';
import { validateServiceToAgentMessage, validateServiceToAppMessage, type Validator } from '../../generated/index.js';
import { makeBridge, type Bridge } from '../../src/core/bridge.js';
import { Directory, type Principal } from '../../src/core/directory.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { ClusterEngine, homeOf } from '../../src/cluster/cluster-engine.js';
import { specCheckedHub, takeOffSpec } from './spec-checked-hub.js';
import { peerConnector, principalToken, type Peer, agentRecord } from '../helpers/core-harness.js';

const app = { app_id: 'classroom', org_id: 'org', name: 'Classroom', active: true, created_at: 0 };
const agent = agentRecord('tutor', { name: 'Tutor', description: 'd' });
const appPrincipal: Principal = { kind: 'app', app, token: principalToken('app', 'classroom') };
const agentPrincipal: Principal = { kind: 'agent', agent, token: principalToken('agent', 'tutor') };

function cluster(nodeIds: string[]) {
  const hub = specCheckedHub();
  const clock = new AdjustableClock({ frozen: true, start: 1_000_000 });
  const nodes = new Map<string, Bridge>();
  for (const id of nodeIds) {
    const directory = new Directory();
    directory.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
    directory.addApp(app);
    directory.addAgent(agent);
    nodes.set(id, makeBridge({ directory, clock, engine: new ClusterEngine(hub.join(id)) }));
  }
  const peer = peerConnector();
  const connect = (node: string, principal: Principal, opts: { resumable?: boolean; cancellable?: boolean } = {}) =>
    peer(
      (principal.kind === 'app' ? validateServiceToAppMessage : validateServiceToAgentMessage) as Validator<unknown>,
      (socket) => nodes.get(node)!.open(socket, principal, undefined, opts.resumable, opts.cancellable),
    );
  const send = (peer: Peer, message: unknown) => peer.handlers.message(JSON.stringify(message), false);
  /** The agent on `agentNode`, an app connection on `home`, and one event of it accepted and delivered. */
  async function inFlight(agentNode: string, home: string, agentOptsIn = true) {
    const agentConn = connect(agentNode, agentPrincipal, { cancellable: agentOptsIn });
    await hub.settle();
    const appConn = connect(home, appPrincipal, { resumable: true });
    send(appConn, { type: 'event', agent_id: 'tutor', thread_id: 't', payload: {} });
    await hub.settle();
    const accepted = appConn.frames[0]!;
    expect(homeOf(accepted.event_id)).to.equal(home);
    const eventId = String(accepted.event_id);
    const fromAgent = async (...messages: object[]) => {
      const before = agentConn.frames.length;
      for (const m of messages) send(agentConn, { event_id: eventId, ...m });
      await hub.settle();
      return agentConn.frames.slice(before);
    };
    const cancel = async (conn: Peer) => {
      const before = conn.frames.length;
      send(conn, { type: 'cancel', event_id: eventId });
      await hub.settle();
      return conn.frames.slice(before);
    };
    /** The app's connection drops, and a connection on `node` resumes the event from its start (R8). */
    const resumeOn = async (node: string) => {
      appConn.handlers.closed();
      const conn = connect(node, appPrincipal, { resumable: true });
      send(conn, { type: 'resume', event_id: eventId, resume_token: accepted.resume_token, after_seq: 0 });
      await hub.settle();
      return conn;
    };
    return { agentConn, appConn, accepted, eventId, fromAgent, cancel, resumeOn };
  }
  return { hub, nodes, connect, send, inFlight };
}

const codes = (frames: any[]) => frames.map((f) => (f.type === 'error' ? f.code : f.type));
const TOKEN = { type: 'token', token: 'x' };

describe('cancels across nodes (S5)', function () {
  afterEach(() => expect(takeOffSpec(), 'bus messages off the spec').to.deep.equal([]));

  it("ends the event on its home and tells the agent's node, which tells an agent that opted in", async function () {
    const c = cluster(['n1', 'n2']);
    const e = await c.inFlight('n2', 'n1');
    await e.fromAgent(TOKEN);
    expect(codes(await e.cancel(e.appConn))).to.deep.equal(['CANCELLED']);
    expect(e.agentConn.frames.at(-1)).to.deep.equal({ type: 'cancel', event_id: e.eventId });
    expect(c.nodes.get('n1')!.stats().eventsInFlight).to.equal(0);
    // Its later frames cross the bus and are dropped at home, without an error to the agent or a frame to the app.
    const appFrames = e.appConn.frames.length;
    expect(await e.fromAgent(TOKEN, TOKEN, { type: 'reply', content: '', done: true })).to.deep.equal([]);
    expect(e.appConn.frames).to.have.length(appFrames);
    expect(c.nodes.get('n1')!.cancelStats()).to.deep.equal({ cancels: { cancelled: 1, refused: 0 }, remembered: 0 });
  });

  it('tells an agent on another node that did not opt in nothing', async function () {
    const c = cluster(['n1', 'n2']);
    const e = await c.inFlight('n2', 'n1', false);
    const before = e.agentConn.frames.length;
    expect(codes(await e.cancel(e.appConn))).to.deep.equal(['CANCELLED']);
    expect(await e.fromAgent(TOKEN)).to.deep.equal([]);
    expect(e.agentConn.frames.slice(before)).to.deep.equal([]);
  });

  it('hands the cancel of a connection that resumed the event on another node to its home (S5, S6)', async function () {
    const c = cluster(['n1', 'n2', 'n3']);
    const e = await c.inFlight('n3', 'n1');
    await e.fromAgent(TOKEN);
    const onN2 = await e.resumeOn('n2');
    expect(codes(onN2.frames)).to.deep.equal(['token']);
    expect(codes(await e.cancel(onN2))).to.deep.equal(['CANCELLED']);
    expect(e.agentConn.frames.at(-1)).to.deep.equal({ type: 'cancel', event_id: e.eventId });
    expect(c.nodes.get('n1')!.stats().eventsInFlight).to.equal(0);
    expect(c.nodes.get('n1')!.resumeStats().bytes).to.equal(0);
    // Cancelled, it cannot be resumed (S6); and a second cancel is refused (S3).
    const again = c.connect('n2', appPrincipal, { resumable: true });
    c.send(again, { type: 'resume', event_id: e.eventId, resume_token: e.accepted.resume_token, after_seq: 0 });
    await c.hub.settle();
    expect(again.frames.at(-1)).to.include({
      code: 'RESUME_GAP',
      error: `Event ${e.eventId} cannot be resumed: it was cancelled.`,
    });
    expect(codes(await e.cancel(onN2))).to.deep.equal(['CANCEL_REFUSED']);
  });

  it("answers CANCEL_REFUSED when the agent's reply reached the home first (S8)", async function () {
    const c = cluster(['n1', 'n2', 'n3']);
    const e = await c.inFlight('n3', 'n1');
    const onN2 = await e.resumeOn('n2');
    // Both on their way to the home at once: the reply first.
    c.send(e.agentConn, { type: 'reply', event_id: e.eventId, content: 'done', done: true });
    c.send(onN2, { type: 'cancel', event_id: e.eventId });
    await c.hub.settle();
    expect(codes(onN2.frames)).to.deep.equal(['reply', 'CANCEL_REFUSED']);
    expect(c.nodes.get('n1')!.cancelStats().cancels).to.deep.equal({ cancelled: 0, refused: 1 });
  });
  describe('when the home is gone (R8, S5)', function () {
    /** An event of n1 resumed on n2, its agent on n3, then n1 gone: what n2's connection gets. */
    async function resumedThenHomeGone(cancelFirst: boolean, how: 'killed' | 'cut' = 'killed') {
      const c = cluster(['n1', 'n2', 'n3']);
      const e = await c.inFlight('n3', 'n1');
      await e.fromAgent(TOKEN);
      const onN2 = await e.resumeOn('n2');
      const before = onN2.frames.length;
      // In the same turn: the cancel is on its way when n1 dies, and never arrives.
      if (cancelFirst) c.send(onN2, { type: 'cancel', event_id: e.eventId });
      if (how === 'killed') c.hub.kill('n1');
      else c.hub.cut('n2');
      await c.hub.settle();
      return { c, frames: onN2.frames.slice(before), eventId: e.eventId };
    }

    it('ends a resumed event with RESUME_GAP when its home goes away, instead of leaving the app waiting', async function () {
      const { frames, eventId } = await resumedThenHomeGone(false);
      expect(codes(frames)).to.deep.equal(['RESUME_GAP']);
      expect(frames[0]!.error).to.include('n1');
      expect(frames[0]!.event_id).to.equal(eventId);
    });

    it('refuses a cancel its home never answered, then ends the event with RESUME_GAP', async function () {
      const { c, frames } = await resumedThenHomeGone(true);
      expect(codes(frames)).to.deep.equal(['CANCEL_REFUSED', 'RESUME_GAP']);
      expect(c.nodes.get('n2')!.cancelStats().cancels).to.deep.equal({ cancelled: 0, refused: 1 });
    });

    it("does the same when the resuming node's own link is cut: no home can answer it", async function () {
      const { frames } = await resumedThenHomeGone(true, 'cut');
      expect(codes(frames)).to.deep.equal(['CANCEL_REFUSED', 'RESUME_GAP']);
    });
  });
});
