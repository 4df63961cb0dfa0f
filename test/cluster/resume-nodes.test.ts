// A resume across real nodes (R8): two nodes in this process on one PostgreSQL database and a private Redis. The
// app's connection to the event's home drops mid-stream, and the app takes the event back on the other node.
import { expect } from 'chai';
import { describePostgres } from '../helpers/databases.js';
import type { TestBridge } from '../helpers/bridge.js';
import { nodesOnRedis } from '../helpers/cluster-nodes.js';

describePostgres('a resume across two nodes', function (db) {
  const node = nodesOnRedis(db);
  let n1: TestBridge, n2: TestBridge;

  beforeEach(async function () {
    n1 = await node('n1');
    n2 = await node('n2');
  });

  it('gives the fragments missed on the home node, the live ones and the reply to a connection on the other node', async function () {
    const org = await n1.org();
    const app = await n1.app(org.org_id);
    const agent = await n1.agent(org.org_id);
    const agentClient = await n2.connectAgent(agent.token);
    const first = await n1.connectResumableApp(app.token);
    first.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    const accepted = await first.expect('accepted', 5000);
    expect(accepted.event_id).to.match(/-n1$/);
    await agentClient.expect('event', 5000);
    agentClient.send({ type: 'token', event_id: accepted.event_id, token: 'one ' });
    expect(await first.expect('token', 5000)).to.include({ seq: 1 });
    first.ws.terminate();
    await first.waitForClose();
    agentClient.send({ type: 'token', event_id: accepted.event_id, token: 'two ' });
    await agentClient.expectNothingBeforePong();

    const second = await n2.connectResumableApp(app.token);
    second.send({ type: 'resume', event_id: accepted.event_id, resume_token: accepted.resume_token, after_seq: 1 });
    expect(await second.expect('token', 5000)).to.include({ token: 'two ', seq: 2 });
    agentClient.send({ type: 'token', event_id: accepted.event_id, token: 'three' });
    agentClient.send({ type: 'reply', event_id: accepted.event_id, content: '', done: true });
    expect(await second.expect('token', 5000)).to.include({ token: 'three', seq: 3 });
    expect((await second.expect('reply', 5000)).reply).to.equal('one two three');
  });
});
