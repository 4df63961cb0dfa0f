// The engine contract, continued (engine-contract.ts): frames to an agent and to an event's home, the resume relay,
// the shared rate limit, and a node gone.
import { expect } from 'chai';
import type { AgentTokenMessage } from '../../generated/index.js';
import type { ResumeRequest } from '../../src/core/engine.js';
import { fakeConnection, until, type EngineSetup, type Node, type Rig } from './engine-rig.js';

const token = (eventId: string): AgentTokenMessage => ({ type: 'token', event_id: eventId, token: 'Because' });
const resume = (eventId: string): ResumeRequest => ({
  event_id: eventId,
  resume_token: 'rt',
  after_seq: 2,
  app_id: 'classroom',
});

export function relayCases(rig: Rig, setup: EngineSetup): void {
  deliveryCases(rig, setup.nodes >= 2);
  resumeCases(rig, setup.nodes >= 2);
  cancelCases(rig, setup.nodes >= 2);
  rateLimitCases(rig, setup.nodes >= 2 && setup.sharedBuckets);
  if (setup.nodes >= 2) nodeGoneCase(rig);
}

function deliveryCases(rig: Rig, several: boolean): void {
  const a = () => rig.nodes[0]!;
  const b = () => rig.nodes[1]!;

  describe('delivery', function () {
    it("toAgent reaches the agent's connection, and is false for an agent not connected", function () {
      const conn = fakeConnection();
      a().engine.attachAgent('tutor', conn);
      expect(a().engine.toAgent('tutor', 'f')).to.equal(true);
      expect(conn.sent).to.deep.equal(['f']);
      expect(a().engine.toAgent('nobody', 'f')).to.equal(false);
    });

    if (several)
      it("toAgent from another node reaches the agent's connection where it is", async function () {
        const conn = fakeConnection();
        b().engine.attachAgent('tutor', conn);
        await until('the agent seen on a', () => a().engine.isAgentOnline('tutor'));
        expect(a().engine.toAgent('tutor', 'f')).to.equal(true);
        await until('the frame at the connection', () => conn.sent.length > 0);
        expect(conn.sent).to.deep.equal(['f']);
      });

    it("an event's delivery is told by the node that hands it to the agent's connection, and only an event's", async function () {
      const conn = fakeConnection();
      a().engine.attachAgent('tutor', conn);
      const event = { eventId: a().eventId(), traceparent: undefined };
      expect(a().engine.toAgent('tutor', 'e', event)).to.equal(true);
      expect(a().engine.toAgent('tutor', 'f')).to.equal(true);
      expect(a().listener.calls('eventDelivered')).to.deep.equal([['tutor', event]]);
    });

    if (several)
      it("an event sent from another node is told delivered where the agent is, with the home's trace context", async function () {
        const conn = fakeConnection();
        b().engine.attachAgent('tutor', conn);
        await until('the agent seen on a', () => a().engine.isAgentOnline('tutor'));
        const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
        const event = { eventId: a().eventId(), traceparent };
        expect(a().engine.toAgent('tutor', 'e', event)).to.equal(true);
        await until('the delivery told on b', () => b().listener.calls('eventDelivered').length > 0);
        expect(conn.sent).to.deep.equal(['e']);
        expect(b().listener.calls('eventDelivered')).to.deep.equal([['tutor', event]]);
        expect(a().listener.calls('eventDelivered')).to.deep.equal([]);
      });

    if (several)
      it('an event from another node is reported to its node when it arrives after its agent left, and only then', async function () {
        const [gone, stays] = [fakeConnection(), fakeConnection()];
        b().engine.attachAgent('tutor', gone);
        b().engine.attachAgent('coach', stays);
        await until('the agents seen on a', () => ['tutor', 'coach'].every((id) => a().engine.isAgentOnline(id)));
        const [lost, reached] = [a().eventId(), a().eventId()];
        expect(a().engine.toAgent('tutor', 'f', { eventId: lost, traceparent: undefined })).to.equal(true);
        expect(a().engine.toAgent('coach', 'g', { eventId: reached, traceparent: undefined })).to.equal(true);
        b().engine.detachAgent('tutor', gone); // before the frame can have arrived
        await until('the event reported', () => a().listener.calls('eventUndelivered').length > 0);
        await until('the other event at its agent', () => stays.sent.length > 0);
        await rig.allHeard(b());
        expect(a().listener.calls('eventUndelivered')).to.deep.equal([['tutor', lost]]);
        expect([gone.sent, stays.sent]).to.deep.equal([[], ['g']]);
      });

    it('toEventHome is false for an event made on this node (its home is here)', function () {
      expect(a().engine.toEventHome('tutor', token(a().eventId()))).to.equal(false);
    });

    if (several)
      it("an agent's message about another node's event reaches that node's listener", async function () {
        const message = token(b().eventId());
        expect(a().engine.toEventHome('tutor', message)).to.equal(true);
        await until('the message at b', () => b().listener.calls('agentMessage').length > 0);
        expect(b().listener.calls('agentMessage')).to.deep.equal([['tutor', message]]);
      });
  });
}

function resumeCases(rig: Rig, several: boolean): void {
  const a = () => rig.nodes[0]!;
  const b = () => rig.nodes[1]!;
  /** A resume by connection 7 of a, of an event of b, until b hears it: b's name for a, and a's for b. */
  async function resumeAtB() {
    const request = resume(b().eventId());
    const sent = a().engine.toResumeHome(request, 7);
    expect(sent).to.include({ up: true });
    await until('the resume at b', () => b().listener.calls('resumeRequest').length > 0);
    const [from, heard, connId] = b().listener.calls('resumeRequest')[0]!;
    expect([heard, connId]).to.deep.equal([request, 7]);
    return { request, resumer: from, home: sent!.home };
  }

  describe('resume relay', function () {
    it('toResumeHome is undefined for an event of this node (it is resumed here)', function () {
      expect(a().engine.toResumeHome(resume(a().eventId()), 7)).to.equal(undefined);
    });

    if (several)
      it("a resume of another node's event reaches its home, whose answer and later frames come back in order", async function () {
        const { request, resumer, home } = await resumeAtB();
        const eventId = request.event_id;
        b().engine.answerResume(resumer, 7, eventId, ['r1', 'r2']);
        const app = b().engine.remoteApp(resumer, 7, eventId);
        app.send('r3');
        app.send('r4');
        const frames = () =>
          a()
            .listener.calls('framesForApp')
            .flatMap(([, , , f]) => f);
        await until('the frames at a', () => frames().length === 4);
        expect(frames()).to.deep.equal(['r1', 'r2', 'r3', 'r4']);
        for (const [from, connId, id] of a().listener.calls('framesForApp'))
          expect([from, connId, id]).to.deep.equal([home, 7, eventId]);
      });

    if (several)
      it("the resuming connection's end reaches the event's home", async function () {
        const { request, resumer, home } = await resumeAtB();
        a().engine.resumerGone(home, 7, request.event_id);
        await until('the end at b', () => b().listener.calls('resumerGone').length > 0);
        expect(b().listener.calls('resumerGone')).to.deep.equal([[resumer, 7, request.event_id]]);
      });
  });
}

function cancelCases(rig: Rig, several: boolean): void {
  const a = () => rig.nodes[0]!;
  const b = () => rig.nodes[1]!;

  describe('cancel relay (S5)', function () {
    it("cancelToAgent reaches the listener of the agent's node with its connection, and nothing when it is nowhere", async function () {
      const conn = fakeConnection();
      a().engine.attachAgent('tutor', conn);
      await rig.allHeard(a());
      const agentNode = a();
      for (const n of rig.nodes) n.engine.cancelToAgent('tutor', 'e1');
      await until('every cancel heard', () => agentNode.listener.calls('cancelForAgent').length === rig.nodes.length);
      expect(agentNode.listener.calls('cancelForAgent')).to.deep.equal(rig.nodes.map(() => [conn, 'e1']));
      for (const n of rig.nodes) n.engine.cancelToAgent('nobody', 'e2');
      await rig.allHeard(a());
      expect(rig.nodes.flatMap((n) => n.listener.calls('cancelForAgent'))).to.have.length(rig.nodes.length);
    });

    if (several)
      it("a cancel of another node's event reaches its home, with the connection and the app", async function () {
        const eventId = b().eventId();
        const home = a().engine.toResumeHome(resume(eventId), 7)!.home;
        expect(a().engine.cancelAtHome(home, 7, eventId, 'classroom')).to.equal(true);
        await until('the cancel at b', () => b().listener.calls('cancelRequest').length > 0);
        const [, connId, id, appId] = b().listener.calls('cancelRequest')[0]!;
        expect([connId, id, appId]).to.deep.equal([7, eventId, 'classroom']);
      });
  });
}

function rateLimitCases(rig: Rig, shared: boolean): void {
  /** Node `n`'s limit of 1 event a second, 2 at once, on the bridge's clock. */
  const limitOf = (n: Node) => {
    const limit = n.engine.eventRateLimit(1, 2, () => rig.clock.advanced);
    return async (appId = 'classroom') => limit.take(appId, rig.clock.monotonic());
  };

  describe('the per-app rate limit', function () {
    it('admits two events at once, makes the third wait about a second, and admits it once that second passed', async function () {
      const take = limitOf(rig.nodes[0]!);
      expect([await take(), await take()]).to.deep.equal([0, 0]);
      expect(await take()).to.be.closeTo(1, 0.1);
      expect(await take('another-app'), 'its own bucket').to.equal(0);
      rig.clock.advance(1000);
      expect(await take()).to.equal(0);
      expect(await take()).to.be.closeTo(1, 0.1);
    });

    if (shared)
      it('makes every node draw on the same bucket of an app: the others wait once one node emptied it', async function () {
        const [first, ...others] = rig.nodes.map(limitOf);
        expect([await first!(), await first!()]).to.deep.equal([0, 0]);
        for (const take of others) expect(await take()).to.be.closeTo(1, 0.1);
      });
  });
}

function nodeGoneCase(rig: Rig): void {
  describe('a node gone', function () {
    it('its agents and apps go offline on the others, who are told, and its events are out of reach', async function () {
      const gone = rig.nodes[1]!;
      gone.engine.attachAgent('tutor', fakeConnection());
      gone.engine.appPresence('classroom', true);
      const survivors = rig.others(gone);
      await until('the agent seen', () => survivors.every((n) => n.engine.isAgentOnline('tutor')));
      const eventId = gone.eventId();
      await rig.kill(1);
      await until('the agent offline', () => survivors.every((n) => !n.engine.isAgentOnline('tutor')));
      for (const n of survivors) {
        expect(n.listener.calls('agentPresence').at(-1)).to.deep.equal(['tutor', false]);
        expect(n.engine.isAppOnline('classroom')).to.equal(false);
        expect(await Promise.resolve(n.engine.locateAgent('tutor'))).to.equal(false);
        expect(n.engine.toAgent('tutor', 'f')).to.equal(false);
        expect(n.engine.toEventHome('tutor', token(eventId))).to.equal(false);
        expect(n.engine.toResumeHome(resume(eventId), 7)).to.include({ up: false });
      }
    });
  });
}
