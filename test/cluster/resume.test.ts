// Resumes across nodes (R8), with bridge cores joined by the memory hub: an event lives on its home node (the node
// of the connection that sent it), and a resume on another node is handed there, answered there, and its frames
// come back through the resuming node: exactly once, in order, as on one node.
import { expect } from 'chai';
import { validateServiceToAgentMessage, validateServiceToAppMessage, type Validator } from '../../generated/index.js';
import { makeBridge, type Bridge } from '../../src/core/bridge.js';
import { Directory, type Principal } from '../../src/core/directory.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { ClusterEngine, homeOf } from '../../src/cluster/cluster-engine.js';
import { specCheckedHub, takeOffSpec } from './spec-checked-hub.js';
import { peerConnector, principalToken, type Peer, agentRecord } from '../helpers/core-harness.js';
import { HOME_ANSWER_MS } from '../../src/core/resume-desk.js';

const app = { app_id: 'classroom', org_id: 'org', name: 'Classroom', active: true, created_at: 0 };
const agent = agentRecord('tutor', { name: 'Tutor', description: 'd' });
const appPrincipal: Principal = { kind: 'app', app, token: principalToken('app', 'classroom') };
const agentPrincipal: Principal = { kind: 'agent', agent, token: principalToken('agent', 'tutor') };
/** An app of another organization. */
const stranger = { app_id: 'stranger', org_id: 'org2', name: 'Stranger', active: true, created_at: 0 };
const strangerPrincipal: Principal = { kind: 'app', app: stranger, token: principalToken('app', 'stranger') };

function cluster(nodeIds: string[]) {
  const hub = specCheckedHub();
  const clock = new AdjustableClock({ frozen: true, start: 1_000_000 });
  const nodes = new Map<string, Bridge>();
  for (const id of nodeIds) {
    const directory = new Directory();
    directory.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
    directory.addApp(app);
    directory.addAgent(agent);
    directory.addOrg({ org_id: 'org2', name: 'Org 2', created_at: 0 });
    directory.addApp(stranger);
    nodes.set(id, makeBridge({ directory, clock, engine: new ClusterEngine(hub.join(id)) }));
  }
  const peer = peerConnector();
  function connect(node: string, principal: Principal, resumable = false): Peer {
    const validate = (
      principal.kind === 'app' ? validateServiceToAppMessage : validateServiceToAgentMessage
    ) as Validator<unknown>;
    return peer(validate, (socket) => nodes.get(node)!.open(socket, principal, undefined, resumable));
  }
  const send = (peer: Peer, message: unknown) => peer.handlers.message(JSON.stringify(message), false);
  /** The agent on `agentNode`, a resumable app connection on `home`, and one event of it accepted and delivered. */
  async function inFlight(agentNode: string, home: string) {
    const agentConn = connect(agentNode, agentPrincipal);
    await hub.settle();
    const appConn = connect(home, appPrincipal, true);
    send(appConn, { type: 'event', agent_id: 'tutor', thread_id: 't', payload: {} });
    await hub.settle();
    const accepted = appConn.frames[0]!;
    expect(homeOf(accepted.event_id)).to.equal(home);
    const tokens = async (...fragments: string[]) => {
      for (const t of fragments) send(agentConn, { type: 'token', event_id: accepted.event_id, token: t });
      await hub.settle();
    };
    const reply = async () => {
      send(agentConn, { type: 'reply', event_id: accepted.event_id, content: '', done: true });
      await hub.settle();
    };
    const resume = async (peer: Peer, afterSeq: number, resumeToken = accepted.resume_token) => {
      const before = peer.frames.length;
      send(peer, { type: 'resume', event_id: accepted.event_id, resume_token: resumeToken, after_seq: afterSeq });
      await hub.settle();
      return peer.frames.slice(before);
    };
    return { agentConn, appConn, accepted, tokens, reply, resume };
  }
  return { hub, clock, nodes, connect, send, inFlight };
}

const seqs = (frames: any[]) =>
  frames.map((f) => (f.type === 'token' ? `${f.seq}:${f.token}` : f.type === 'error' ? f.code : f.type));

describe('resumes across nodes (R8)', function () {
  afterEach(() => expect(takeOffSpec(), 'bus messages off the spec').to.deep.equal([]));

  it("gives the missed fragments, the live ones and the reply to a connection on another node than the event's home", async function () {
    const c = cluster(['n1', 'n2', 'n3']);
    const e = await c.inFlight('n2', 'n1');
    await e.tokens('a', 'b');
    e.appConn.handlers.closed();
    await e.tokens('c');
    const onN3 = c.connect('n3', appPrincipal, true);
    expect(seqs(await e.resume(onN3, 1))).to.deep.equal(['2:b', '3:c']);
    await e.tokens('d');
    expect(seqs(onN3.frames)).to.deep.equal(['2:b', '3:c', '4:d']);
    onN3.handlers.closed(); // dropped again: resumed on the agent's node this time
    await e.tokens('e');
    const onN2 = c.connect('n2', appPrincipal, true);
    expect(seqs(await e.resume(onN2, 4))).to.deep.equal(['5:e']);
    await e.reply();
    expect(seqs(onN2.frames)).to.deep.equal(['5:e', 'reply']);
    expect(onN2.frames.at(-1)!.reply).to.equal('abcde');
    expect(onN3.frames).to.have.length(3);
    const stats = c.nodes.get('n1')!.resumeStats();
    expect(stats.resumes).to.deep.equal({ resumed: 2, gap: 0, refused: 0, limited: 0 }); // judged at home
  });

  it('sends every fragment once and in order when the resume crosses the bus with live fragments on their way home', async function () {
    const c = cluster(['n1', 'n2', 'n3']);
    const e = await c.inFlight('n2', 'n1');
    await e.tokens('0');
    e.appConn.handlers.closed();
    const onN3 = c.connect('n3', appPrincipal, true);
    for (let i = 1; i <= 50; i++) {
      c.send(e.agentConn, { type: 'token', event_id: e.accepted.event_id, token: String(i) }); // n2 -> n1, on their way
      if (i === 20)
        c.send(onN3, {
          type: 'resume',
          event_id: e.accepted.event_id,
          resume_token: e.accepted.resume_token,
          after_seq: 1,
        }); // n3 -> n1
    }
    await e.reply();
    expect(onN3.frames.map((f) => f.seq ?? f.type)).to.deep.equal([
      ...Array.from({ length: 50 }, (_, i) => i + 2),
      'reply',
    ]);
    expect(onN3.frames.at(-1)!.reply).to.equal(Array.from({ length: 51 }, (_, i) => i).join(''));
  });

  it('takes the event from a connection still open on its home: it gets nothing more; an ended event comes whole at once', async function () {
    const c = cluster(['n1', 'n2']);
    const e = await c.inFlight('n2', 'n1');
    await e.tokens('a');
    const taker = c.connect('n2', appPrincipal, true);
    expect(seqs(await e.resume(taker, 1))).to.deep.equal([]);
    await e.tokens('b');
    await e.reply();
    expect(seqs(taker.frames)).to.deep.equal(['2:b', 'reply']);
    expect(seqs(e.appConn.frames)).to.deep.equal(['accepted', '1:a']);
    const late = c.connect('n2', appPrincipal, true);
    expect(seqs(await e.resume(late, 0))).to.deep.equal(['1:a', '2:b', 'reply']);
  });

  it("relays the home's refusal and its gap for an event it does not keep, and the event goes on for its holder", async function () {
    const c = cluster(['n1', 'n2']);
    const e = await c.inFlight('n2', 'n1');
    const other = c.connect('n2', appPrincipal, true);
    const refused = await e.resume(other, 0, 'W'.repeat(43));
    expect(refused).to.deep.equal([
      {
        type: 'error',
        event_id: e.accepted.event_id,
        code: 'RESUME_REFUSED',
        error: `This connection cannot resume event ${e.accepted.event_id}: the resume token does not match.`,
      },
    ]);
    const unknown = '01JQ7ZK3M4N5P6Q7R8S9T0V1W2-n1';
    c.send(other, { type: 'resume', event_id: unknown, resume_token: 'W'.repeat(43), after_seq: 0 });
    await c.hub.settle();
    expect(other.frames.at(-1)).to.include({ code: 'RESUME_GAP', event_id: unknown });
    await e.tokens('still yours');
    expect(seqs(e.appConn.frames.slice(-1))).to.deep.equal(['1:still yours']);
  });

  it("answers a resume of another app's event from another node exactly as one of an unknown event (R5), and the event goes on", async function () {
    const c = cluster(['n1', 'n2']);
    const e = await c.inFlight('n2', 'n1');
    await e.tokens('one');
    const plain = c.connect('n1', appPrincipal);
    c.send(plain, { type: 'event', agent_id: 'tutor', thread_id: 't', payload: {} });
    await c.hub.settle();
    const plainId = plain.frames[0]!.event_id;
    const outsider = c.connect('n2', strangerPrincipal, true);
    const ask = async (eventId: string, token: string) => {
      const before = outsider.frames.length;
      c.send(outsider, { type: 'resume', event_id: eventId, resume_token: token, after_seq: 0 });
      await c.hub.settle();
      return outsider.frames.slice(before);
    };
    const unknownAnswer = (id: string) => [
      {
        type: 'error',
        event_id: id,
        code: 'RESUME_GAP',
        error: `Event ${id} cannot be resumed: the bridge no longer keeps it (its resume window ended, or the bridge or the event's node restarted).`,
      },
    ];
    const never = '01JQ7ZK3M4N5P6Q7R8S9T0V1W2-n1';
    expect(await ask(never, 'W'.repeat(43))).to.deep.equal(unknownAnswer(never));
    expect(await ask(e.accepted.event_id, e.accepted.resume_token)).to.deep.equal(unknownAnswer(e.accepted.event_id));
    expect(await ask(e.accepted.event_id, 'W'.repeat(43))).to.deep.equal(unknownAnswer(e.accepted.event_id));
    expect(await ask(plainId, 'W'.repeat(43))).to.deep.equal(unknownAnswer(plainId));
    await e.tokens('two');
    expect(seqs(e.appConn.frames.slice(-1))).to.deep.equal(['2:two']);
  });

  it('answers RESUME_GAP home_gone when the home does not answer within 1 s, or is known to be gone', async function () {
    const c = cluster(['n1', 'n2']);
    const e = await c.inFlight('n2', 'n1');
    const onN2 = c.connect('n2', appPrincipal, true);
    c.hub.cut('n1');
    expect(await e.resume(onN2, 0)).to.deep.equal([]);
    c.clock.advance(HOME_ANSWER_MS - 1);
    expect(onN2.frames).to.deep.equal([]);
    c.clock.advance(1);
    const homeGone = {
      type: 'error',
      event_id: e.accepted.event_id,
      code: 'RESUME_GAP',
      error: `Event ${e.accepted.event_id} cannot be resumed: node n1 that holds it does not answer.`,
    };
    expect(onN2.frames).to.deep.equal([homeGone]);
    c.hub.kill('n1');
    expect(await e.resume(onN2, 0)).to.deep.equal([homeGone]);
    expect(c.nodes.get('n2')!.resumeStats().resumes).to.deep.equal({ resumed: 0, gap: 2, refused: 0, limited: 0 });
  });

  it("stops sending a resumed event's frames across the bus once the connection that took it is gone", async function () {
    const c = cluster(['n1', 'n2']);
    const e = await c.inFlight('n1', 'n1');
    const onN2 = c.connect('n2', appPrincipal, true);
    await e.resume(onN2, 0);
    await e.tokens('a');
    expect(seqs(onN2.frames)).to.deep.equal(['1:a']);
    onN2.handlers.closed();
    await c.hub.settle();
    const carried = c.hub.sent.get('to-app');
    await e.tokens('b', 'c');
    expect(c.hub.sent.get('to-app')).to.equal(carried);
    const back = c.connect('n1', appPrincipal, true);
    expect(seqs(await e.resume(back, 1))).to.deep.equal(['2:b', '3:c']);
  });
});
