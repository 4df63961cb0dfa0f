// The engine contract (src/core/engine.ts) as behaviour every engine must show, one suite declared per engine: the
// core never asks which engine it has, so what it sees must not depend on it. The cases about other nodes are
// declared only for an engine of several nodes (never passed vacuously by one that has none). This file: presence.
import { expect } from 'chai';
import { relayCases } from './engine-contract-relay.js';
import { fakeConnection, Rig, until, type EngineSetup, type Node } from './engine-rig.js';

export type { EngineNodes, EngineSetup } from './engine-rig.js';

const located = (n: Node, agentId: string) => Promise.resolve(n.engine.locateAgent(agentId));

export function engineContract(name: string, setup: EngineSetup): void {
  describe(`the engine contract: ${name}`, function () {
    const rig = new Rig();
    beforeEach(async function () {
      await rig.start(setup);
    });
    afterEach(async function () {
      await rig.close();
    });
    agentPresenceCases(rig, setup.nodes >= 2);
    appPresenceCases(rig, setup.nodes >= 2);
    relayCases(rig, setup);
  });
}

function agentPresenceCases(rig: Rig, several: boolean): void {
  describe('agent presence', function () {
    agentPresenceHere(rig);
    if (several) agentPresenceAcross(rig);
  });
}

function agentPresenceHere(rig: Rig): void {
  const a = () => rig.nodes[0]!;
  const everyNode = (what: string, ok: (n: Node) => boolean) => until(what, () => rig.nodes.every(ok));

  it('an attached agent is online and located on its node at once; one never attached is neither', async function () {
    a().engine.attachAgent('tutor', fakeConnection());
    expect(a().engine.isAgentOnline('tutor')).to.equal(true);
    expect(await located(a(), 'tutor')).to.equal(true);
    expect(a().engine.isAgentOnline('nobody')).to.equal(false);
    expect(await located(a(), 'nobody')).to.equal(false);
  });

  it("an event's token comes with a way to locate its agent, which answers as locateAgent does", async function () {
    const limit = a().engine.eventRateLimit(1, 1, () => rig.clock.advanced);
    a().engine.attachAgent('tutor', fakeConnection());
    const take = (agentId: string) =>
      Promise.resolve(a().engine.takeForEvent(limit, 'classroom', agentId, rig.clock.monotonic()));
    const first = await take('tutor');
    expect([first.wait, await first.locate()]).to.deep.equal([0, true]);
    const second = await take('nobody');
    expect(second.wait).to.be.closeTo(1, 0.1);
    expect(await second.locate()).to.equal(false);
  });

  it('a newer connection of an agent on the same node hands back the one it replaces, and takes its frames', function () {
    const [older, newer] = [fakeConnection(), fakeConnection()];
    expect(a().engine.attachAgent('tutor', older)).to.equal(undefined);
    expect(a().engine.attachAgent('tutor', newer)).to.equal(older);
    expect(a().engine.attachAgent('tutor', newer), 'the same one again replaces nothing').to.equal(undefined);
    expect(a().engine.toAgent('tutor', 'f')).to.equal(true);
    expect([older.sent, newer.sent]).to.deep.equal([[], ['f']]);
  });

  it('detaching a connection already replaced returns false and changes nothing, on any node', async function () {
    const [older, newer] = [fakeConnection(), fakeConnection()];
    a().engine.attachAgent('tutor', older);
    a().engine.attachAgent('tutor', newer);
    expect(a().engine.detachAgent('tutor', older)).to.equal(false);
    await rig.allHeard(a());
    expect(rig.nodes.map((n) => n.engine.isAgentOnline('tutor'))).to.deep.equal(rig.nodes.map(() => true));
    expect(a().engine.toAgent('tutor', 'f')).to.equal(true);
    expect(newer.sent).to.deep.equal(['f']);
  });

  it('detaching the current connection takes the agent offline on every node', async function () {
    const conn = fakeConnection();
    a().engine.attachAgent('tutor', conn);
    await everyNode('the agent online everywhere', (n) => n.engine.isAgentOnline('tutor'));
    expect(a().engine.detachAgent('tutor', conn)).to.equal(true);
    await everyNode('the agent offline everywhere', (n) => !n.engine.isAgentOnline('tutor'));
    for (const n of rig.nodes) {
      expect(await located(n, 'tutor')).to.equal(false);
      expect(n.engine.toAgent('tutor', 'f')).to.equal(false);
    }
    for (const n of rig.others(a())) expect(n.listener.calls('agentPresence').at(-1)).to.deep.equal(['tutor', false]);
    expect(conn.sent).to.deep.equal([]);
  });

  it("a node's listener hears nothing of what the node did itself", async function () {
    const conn = fakeConnection();
    a().engine.attachAgent('tutor', conn);
    a().engine.appPresence('classroom', true);
    a().engine.detachAgent('tutor', conn);
    a().engine.appPresence('classroom', false);
    await rig.allHeard(a());
    expect(a().listener.heard).to.deep.equal([]);
  });
}

function agentPresenceAcross(rig: Rig): void {
  const a = () => rig.nodes[0]!;
  const b = () => rig.nodes[1]!;

  it('the other nodes see an attached agent online once the news arrives, locate it, and are told', async function () {
    a().engine.attachAgent('tutor', fakeConnection());
    for (const n of rig.others(a())) {
      await until('the news on another node', () => n.engine.isAgentOnline('tutor'));
      expect(await located(n, 'tutor')).to.equal(true);
      expect(n.listener.calls('agentPresence')).to.deep.equal([['tutor', true]]);
    }
  });

  it("an event's token on another node comes with the agent located there too", async function () {
    a().engine.attachAgent('tutor', fakeConnection());
    await located(a(), 'tutor');
    for (const n of rig.others(a())) {
      const limit = n.engine.eventRateLimit(10, 10, () => rig.clock.advanced);
      const taken = await n.engine.takeForEvent(limit, 'classroom', 'tutor', rig.clock.monotonic());
      expect([taken.wait, await taken.locate()]).to.deep.equal([0, true]);
    }
  });

  it("the newest connection wins across nodes: the older one's node is told, and frames go to the newer", async function () {
    const [older, newer] = [fakeConnection(), fakeConnection()];
    a().engine.attachAgent('tutor', older);
    await until('the agent seen on b', () => b().engine.isAgentOnline('tutor'));
    b().engine.attachAgent('tutor', newer);
    await until('a told of the newer one', () => a().listener.calls('agentReplaced').length > 0);
    expect(a().listener.calls('agentReplaced')).to.have.length(1);
    expect(a().listener.calls('agentReplaced')[0]![1]).to.equal(older);
    expect(a().engine.detachAgent('tutor', older), 'the replaced one').to.equal(false);
    expect(a().engine.toAgent('tutor', 'f')).to.equal(true);
    await until('the frame at the newer connection', () => newer.sent.length > 0);
    expect([older.sent, newer.sent]).to.deep.equal([[], ['f']]);
    await rig.allHeard(a());
    expect(rig.nodes.map((n) => n.engine.isAgentOnline('tutor'))).to.deep.equal(rig.nodes.map(() => true));
  });
}

function appPresenceCases(rig: Rig, several: boolean): void {
  const a = () => rig.nodes[0]!;
  const b = () => rig.nodes[1]!;
  const online = () => rig.nodes.map((n) => n.engine.isAppOnline('classroom'));
  const all = (value: boolean) => rig.nodes.map(() => value);

  describe('app presence', function () {
    it('an app is online while its node has a connection of it, offline once the last leaves; one never seen is not', function () {
      expect(a().engine.isAppOnline('classroom')).to.equal(false);
      a().engine.appPresence('classroom', true);
      expect(a().engine.isAppOnline('classroom')).to.equal(true);
      a().engine.appPresence('classroom', false);
      expect(a().engine.isAppOnline('classroom')).to.equal(false);
    });

    if (several)
      it('an app is online on every node while any node has it, offline everywhere once the last one leaves', async function () {
        a().engine.appPresence('classroom', true);
        b().engine.appPresence('classroom', true);
        await until('the app online everywhere', () => online().every(Boolean));
        a().engine.appPresence('classroom', false);
        await rig.allHeard(a());
        expect(online(), 'b still has it').to.deep.equal(all(true));
        b().engine.appPresence('classroom', false);
        await until('the app offline everywhere', () => !online().some(Boolean));
      });
  });
}
