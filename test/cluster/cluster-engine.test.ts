// Two and three bridge cores in one process, joined by the memory hub: the seam the Redis engine plugs into. The
// app is on one node and its agent on another, and everything the app sees must be what one node shows it.
import { expect } from 'chai';
import {
  ERRORS,
  validateServiceToAgentMessage,
  validateServiceToAppMessage,
  type Validator,
} from '../../generated/index.js';
import { makeBridge, type Bridge } from '../../src/core/bridge.js';
import { Directory, type Principal } from '../../src/core/directory.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { ClusterEngine, homeOf } from '../../src/cluster/cluster-engine.js';
import { errorText } from '../../src/shared/error-text.js';
import { specCheckedHub, takeOffSpec } from './spec-checked-hub.js';
import { peerConnector, principalToken, type Peer, agentRecord } from '../helpers/core-harness.js';

const app = { app_id: 'classroom', org_id: 'org', name: 'Classroom', active: true, created_at: 0 };
const agent = agentRecord('tutor', { name: 'Tutor', description: 'd' });
const coach = { ...agent, agent_id: 'coach', name: 'Coach' };
const appPrincipal: Principal = { kind: 'app', app, token: principalToken('app', 'classroom') };
const agentPrincipal: Principal = { kind: 'agent', agent, token: principalToken('agent', 'tutor') };
const coachPrincipal: Principal = { kind: 'agent', agent: coach, token: principalToken('agent', 'coach') };
const GRACE_MS = 10_000;

/** Polls every turn of the event loop: what the test waits for must be seen before the delayed gossip lands. */
async function until(what: string, ok: () => boolean): Promise<void> {
  for (let turns = 0; turns < 100_000; turns++) {
    if (ok()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never: ${what}`);
}

function cluster(nodeIds: string[]) {
  const hub = specCheckedHub();
  const clock = new AdjustableClock({ frozen: true, start: 1_000_000 });
  const nodes = new Map<string, { bridge: Bridge; engine: ClusterEngine }>();
  for (const id of nodeIds) {
    const directory = new Directory(); // each node has its own copy of the registrations, as from one database
    directory.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
    directory.addApp(app);
    directory.addAgent(agent);
    directory.addAgent(coach);
    const engine = new ClusterEngine(hub.join(id), undefined, undefined, clock);
    nodes.set(id, {
      bridge: makeBridge({ directory, clock, engine, agentReconnectGraceMs: GRACE_MS }),
      engine,
    });
  }
  const peer = peerConnector({ reportClose: true });
  function connect(node: string, principal: Principal): Peer {
    const validate = (
      principal.kind === 'app' ? validateServiceToAppMessage : validateServiceToAgentMessage
    ) as Validator<unknown>;
    return peer(validate, (socket) => nodes.get(node)!.bridge.open(socket, principal));
  }
  const send = (peer: Peer, message: unknown) => peer.handlers.message(JSON.stringify(message), false);
  const event = (thread = 't', agentId = 'tutor') => ({
    type: 'event',
    agent_id: agentId,
    thread_id: thread,
    payload: { q: 'why?' },
  });
  /** The agent connected to `agentNode`, the app to `appNode`, and one event of the app accepted and delivered. */
  async function inFlight(agentNode: string, appNode: string) {
    const agentConn = connect(agentNode, agentPrincipal);
    await hub.settle();
    const appConn = connect(appNode, appPrincipal);
    send(appConn, event());
    await hub.settle();
    return { agentConn, appConn, eventId: appConn.frames[0]!.event_id as string };
  }
  return { hub, clock, nodes, connect, send, event, inFlight, settle: () => hub.settle() };
}

describe('several cores on one bus (the cluster engine)', function () {
  afterEach(() => expect(takeOffSpec(), 'bus messages off the spec').to.deep.equal([]));

  it('carries a whole event between an app on one node and its agent on another', async function () {
    const c = cluster(['n1', 'n2']);
    const { agentConn, appConn } = await c.inFlight('n2', 'n1');
    const accepted = appConn.frames[0]!;
    expect(accepted).to.include({ type: 'accepted', agent_id: 'tutor' });
    expect(homeOf(accepted.event_id)).to.equal('n1');
    expect(agentConn.frames[0]).to.include({ type: 'event', event_id: accepted.event_id, app_id: 'classroom' });
    for (const token of ['Because', ' of', ' physics.'])
      c.send(agentConn, { type: 'token', event_id: accepted.event_id, token });
    c.send(agentConn, { type: 'reply', event_id: accepted.event_id, content: '', done: true });
    await c.settle();
    expect(appConn.frames.map((f) => f.type)).to.deep.equal(['accepted', 'token', 'token', 'token', 'reply']);
    expect(appConn.frames.at(-1)!.reply).to.equal('Because of physics.');
    expect(appConn.frames.at(-1)!.metadata.tokens_used).to.equal(3);
    expect(c.nodes.get('n1')!.bridge.stats().eventsInFlight).to.equal(0);
    expect(c.nodes.get('n2')!.bridge.stats().eventsInFlight).to.equal(0);
  });

  it('answers AGENT_OFFLINE on any node for an agent connected to none, and knows an app connected elsewhere', async function () {
    const c = cluster(['n1', 'n2']);
    const appConn = c.connect('n1', appPrincipal);
    c.send(appConn, c.event());
    await c.settle();
    expect(appConn.frames[0]).to.include({ type: 'error', code: 'AGENT_OFFLINE' });
    expect(c.nodes.get('n2')!.bridge.isAppOnline('classroom')).to.equal(true);
    appConn.handlers.closed();
    await c.settle();
    expect(c.nodes.get('n2')!.bridge.isAppOnline('classroom')).to.equal(false);
  });

  it('lets a newer connection of the agent on one node replace the older one on another, as on one node', async function () {
    const c = cluster(['n1', 'n2']);
    const older = c.connect('n1', agentPrincipal);
    await c.settle();
    const newer = c.connect('n2', agentPrincipal);
    await c.settle();
    expect(older.frames.at(-1)).to.include({ type: 'error', code: 'CONNECTION_REPLACED' });
    expect(older.closedWith).to.deep.equal([ERRORS.CONNECTION_REPLACED.closeCode, 'CONNECTION_REPLACED']);
    expect(newer.closedWith).to.equal(undefined);
    // Still reachable, through the newer connection, from the node that held the older one.
    const appConn = c.connect('n1', appPrincipal);
    c.send(appConn, c.event());
    await c.settle();
    expect(newer.frames.map((f) => f.type)).to.deep.equal(['event']);
  });

  it('answers INVALID_EVENT_ID for an event id of another node that is not in flight there', async function () {
    const c = cluster(['n1', 'n2']);
    const { agentConn, appConn, eventId: id } = await c.inFlight('n2', 'n1');
    c.send(agentConn, { type: 'reply', event_id: id, content: 'done', done: true });
    await c.settle();
    c.send(agentConn, { type: 'reply', event_id: id, content: 'again', done: true }); // the event is over
    await c.settle();
    expect(agentConn.frames.at(-1)).to.include({ type: 'error', code: 'INVALID_EVENT_ID', event_id: id });
    expect(appConn.frames.map((f) => f.type)).to.deep.equal(['accepted', 'reply']);
  });

  it('lets an agent that reconnects to a third node within the grace finish an event held on the first', async function () {
    const c = cluster(['n1', 'n2', 'n3']);
    const { agentConn: first, appConn, eventId: id } = await c.inFlight('n2', 'n1');
    first.handlers.closed();
    await c.settle();
    c.clock.advance(GRACE_MS - 1);
    const second = c.connect('n3', agentPrincipal);
    await c.settle();
    c.clock.advance(10);
    c.send(second, { type: 'reply', event_id: id, content: 'late but here', done: true });
    await c.settle();
    expect(appConn.frames.map((f) => f.type)).to.deep.equal(['accepted', 'reply']);
  });

  it("ends at once an event that reached the agent's node after the agent left it, though the agent is back within the grace", async function () {
    const c = cluster(['n1', 'n2']);
    const first = c.connect('n2', agentPrincipal);
    await c.settle();
    const appConn = c.connect('n1', appPrincipal);
    c.hub.delayGossip = true; // the event takes a while to cross: the agent leaves meanwhile
    c.send(appConn, c.event());
    await until('the event accepted and on its way', () => appConn.frames.length > 0);
    first.handlers.closed();
    await c.settle();
    const second = c.connect('n2', agentPrincipal); // back within the grace: the event is over, not waiting
    await c.settle();
    expect(appConn.frames.map((f) => f.code ?? f.type)).to.deep.equal(['accepted', 'AGENT_OFFLINE']);
    expect(appConn.frames[1]!.error).to.equal(errorText('AGENT_OFFLINE', 'not_reached', { agent_id: 'tutor' }));
    expect([first.frames, second.frames]).to.deep.equal([[], []]);
  });

  it("ends at once an event whose agent's node died before it arrived; one the node had delivered waits the grace", async function () {
    const c = cluster(['n1', 'n2', 'n3']);
    const { appConn, eventId: delivered } = await c.inFlight('n2', 'n1');
    c.hub.delayGossip = true;
    c.send(appConn, c.event('second'));
    await until('the second event accepted and on its way', () => appConn.frames.length > 1);
    const lost = appConn.frames[1]!.event_id as string;
    c.hub.kill('n2');
    await c.settle();
    expect(appConn.frames.slice(2).map((f) => [f.code, f.event_id])).to.deep.equal([['AGENT_OFFLINE', lost]]);
    const back = c.connect('n3', agentPrincipal);
    await c.settle();
    c.send(back, { type: 'reply', event_id: delivered, content: 'still here', done: true });
    await c.settle();
    expect(appConn.frames.at(-1)).to.include({ type: 'reply', event_id: delivered });
  });

  it("tells the other nodes at a node's shutdown that its agents left, before its heartbeat is missed", async function () {
    const c = cluster(['n1', 'n2']);
    const { appConn } = await c.inFlight('n2', 'n1');
    c.nodes.get('n2')!.bridge.shutdown();
    await c.settle();
    expect(c.nodes.get('n1')!.engine.isAgentOnline('tutor')).to.equal(false);
    expect(c.hub.claims.has('tutor'), 'the claim released').to.equal(false);
    c.clock.advance(GRACE_MS);
    expect(appConn.frames.map((f) => f.code ?? f.type)).to.deep.equal(['accepted', 'AGENT_OFFLINE']);
  });

  it('ends the events at an agent on a killed node with AGENT_OFFLINE once the grace has passed, and reaches the agent again on another node', async function () {
    const c = cluster(['n1', 'n2', 'n3']);
    const { appConn } = await c.inFlight('n2', 'n1');
    c.hub.kill('n2');
    c.clock.advance(GRACE_MS - 1);
    expect(appConn.frames.map((f) => f.type)).to.deep.equal(['accepted']);
    c.clock.advance(1);
    expect(appConn.frames.at(-1)).to.include({ type: 'error', code: 'AGENT_OFFLINE' });
    expect(appConn.frames.at(-1)!.error).to.match(/did not come back within 10 s/);
    const again = c.connect('n3', agentPrincipal);
    await c.settle();
    c.send(appConn, c.event());
    await c.settle();
    expect(appConn.frames.at(-1)).to.include({ type: 'accepted' });
    expect(again.frames.map((f) => f.type)).to.deep.equal(['event']);
  });

  it('ends at once the events of a node whose link is cut, and those of the other nodes that depended on it once the link is back', async function () {
    const c = cluster(['n1', 'n2']);
    const tutorOnN2 = c.connect('n2', agentPrincipal);
    const coachOnN1 = c.connect('n1', coachPrincipal);
    await c.settle();
    const appOnN1 = c.connect('n1', appPrincipal);
    const appOnN2 = c.connect('n2', appPrincipal);
    c.send(appOnN1, c.event('a', 'tutor')); // held on n1, its agent on n2
    c.send(appOnN2, c.event('b', 'coach')); // held on n2, its agent on n1
    await c.settle();
    c.hub.cut('n1');
    expect(appOnN1.frames.at(-1)).to.include({ type: 'error', code: 'AGENT_OFFLINE' });
    expect(appOnN1.frames.at(-1)!.error).to.match(/link between the nodes was cut/);
    c.send(appOnN1, c.event('c', 'tutor')); // out of reach while cut
    expect(appOnN1.frames.at(-1)).to.include({ type: 'error', code: 'AGENT_OFFLINE' });
    expect(appOnN2.frames.map((f) => f.type)).to.deep.equal(['accepted']); // n2 has noticed nothing yet
    c.hub.restore('n1');
    await c.settle();
    expect(appOnN2.frames.at(-1)).to.include({ type: 'error', code: 'AGENT_OFFLINE' });
    c.send(appOnN1, c.event('d', 'tutor'));
    c.send(appOnN2, c.event('e', 'coach'));
    await c.settle();
    expect(appOnN1.frames.at(-1)).to.include({ type: 'accepted' });
    expect(appOnN2.frames.at(-1)).to.include({ type: 'accepted' });
    expect(tutorOnN2.frames.filter((f) => f.type === 'event')).to.have.length(2);
    expect(coachOnN1.frames.filter((f) => f.type === 'event')).to.have.length(2);
  });

  it('claims an agent again while the link is up when the record did not take its claim after a cut (Redis back empty)', async function () {
    const c = cluster(['n1', 'n2']);
    const tutorOnN2 = c.connect('n2', agentPrincipal);
    await c.settle();
    c.hub.cut('n2');
    c.hub.claims.clear(); // Redis restarted: it kept nothing
    c.hub.claimWrite = () => Promise.reject(new Error('Redis is still loading'));
    c.hub.restore('n2');
    await c.settle();
    const appOnN1 = c.connect('n1', appPrincipal);
    c.send(appOnN1, c.event('a'));
    await c.settle();
    expect(appOnN1.frames.at(-1)).to.include({ type: 'error', code: 'AGENT_OFFLINE' }); // no claim, out of reach

    c.hub.claimWrite = () => Promise.resolve();
    c.clock.advance(1_000);
    await c.settle();
    c.send(appOnN1, c.event('b'));
    await c.settle();
    expect(appOnN1.frames.at(-1)).to.include({ type: 'accepted' });
    expect(tutorOnN2.frames.filter((f) => f.type === 'event')).to.have.length(1);
  });

  it('finds an agent that connected to another node a moment ago, before the gossip about it has arrived', async function () {
    const c = cluster(['n1', 'n2']);
    c.hub.delayGossip = true;
    const agentConn = c.connect('n2', agentPrincipal);
    await agentConn.handlers.ready; // the agent's handshake answered: it may tell an app it is there
    const appConn = c.connect('n1', appPrincipal);
    c.send(appConn, c.event('a'));
    c.send(appConn, { type: 'ping' }); // answered after the event's answer, whatever the wait
    await c.settle();
    expect(appConn.frames.map((f) => f.type)).to.deep.equal(['accepted', 'pong']);
    expect(agentConn.frames.map((f) => f.type)).to.deep.equal(['event']);
  });

  it("answers an agent's handshake only once the record has its claim, and refuses it when the record does not take it", async function () {
    const c = cluster(['n1', 'n2']);
    let land = () => {};
    c.hub.claimWrite = () => new Promise<void>((resolve) => (land = resolve));
    const agentConn = c.connect('n2', agentPrincipal);
    let answered = false;
    void agentConn.handlers.ready!.then(() => (answered = true));
    await c.settle();
    expect(answered, 'answered before the record has the claim').to.equal(false);
    land();
    await agentConn.handlers.ready;
    expect(agentConn.frames).to.deep.equal([]);

    c.hub.claimWrite = () => Promise.reject(new Error('Redis does not answer'));
    const refused = c.connect('n1', coachPrincipal);
    await refused.handlers.ready;
    expect(refused.frames.map((f) => f.code)).to.deep.equal(['INTERNAL_ERROR']);
    expect(refused.closedWith).to.deep.equal([ERRORS.INTERNAL_ERROR.closeCode, 'INTERNAL_ERROR']);
  });

  it('answers AGENT_OFFLINE at once for an agent that left another node a moment ago, before the gossip about it has arrived', async function () {
    const c = cluster(['n1', 'n2']);
    const agentConn = c.connect('n2', agentPrincipal);
    await c.settle();
    c.hub.delayGossip = true;
    agentConn.handlers.closed();
    const appConn = c.connect('n1', appPrincipal);
    c.send(appConn, c.event('a')); // n1's picture still shows it: the record does not
    await c.settle();
    expect(appConn.frames.map((f) => f.code ?? f.type)).to.deep.equal(['AGENT_OFFLINE']);
  });

  it('keeps the later of two connections of one agent whose nodes had not heard of each other yet', async function () {
    const c = cluster(['n1', 'n2']);
    c.hub.delayGossip = true;
    // On the node whose id would win a tie: the older must lose by the clock, not by the id.
    const older = c.connect('n2', agentPrincipal);
    await new Promise((resolve) => setTimeout(resolve, 2)); // later by the clock, before n1 heard of the first
    const newer = c.connect('n1', agentPrincipal);
    await c.settle();
    expect(older.frames.at(-1)).to.include({ type: 'error', code: 'CONNECTION_REPLACED' });
    expect(newer.frames).to.deep.equal([]);
    expect(newer.closedWith).to.equal(undefined);
  });
});
