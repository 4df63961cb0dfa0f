// The overview and an organization's live picture on a bridge of two nodes (D8, O14): every node answers, so
// either node's admin API shows both nodes and a connection held by the other.
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import { describePostgres } from '../helpers/databases.js';
import type { TestBridge } from '../helpers/bridge.js';
import { nodesOnRedis } from '../helpers/cluster-nodes.js';

describePostgres('the live numbers of two nodes', function (db) {
  const node = nodesOnRedis(db);
  let n1: TestBridge, n2: TestBridge;

  beforeEach(async function () {
    n1 = await node('n1');
    n2 = await node('n2');
  });

  it('lists both nodes in the overview and an agent connected to the other node in the live picture, with its last minute', async function () {
    const org = await n1.org();
    const app = await n1.app(org.org_id);
    const agent = await n1.agent(org.org_id);
    const agentClient = await n2.connectAgent(agent.token);
    const appClient = await n1.connectApp(app.token);
    await n1.connectApp(app.token);
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    const { event_id } = await appClient.expect('accepted');
    await agentClient.expect('event');
    agentClient.send({ type: 'token', event_id, token: 'hi' });
    agentClient.send({ type: 'reply', event_id, content: '', done: true });
    await appClient.expect('token');
    await appClient.expect('reply');

    // Both clocks move through n1's test clock: each node takes its sample at the same multiple of the interval.
    await n1.http('POST', '/admin/v1/test/clock', { body: { advance_ms: LIMITS.overviewSampleMs } });
    const overview = (await n2.http('GET', '/admin/v1/overview', { schema: 'Overview' })).body;
    expect(overview.missing_nodes).to.deep.equal([]);
    expect(overview.nodes.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['n1', 'n2']);
    const [one, two] = overview.nodes;
    expect(one.now).to.deep.equal({
      app_connections: 2,
      agent_connections: 0,
      apps_online: 1,
      agents_online: 0,
      events_in_flight: 0,
    });
    expect(two.now).to.deep.equal({
      app_connections: 0,
      agent_connections: 1,
      apps_online: 0,
      agents_online: 1,
      events_in_flight: 0,
    });
    expect(one.samples.at(-1)).to.include({ at: two.samples.at(-1).at, accepted: 1, replied: 1, fragments: 1 });
    expect(two.samples.at(-1)).to.include({ accepted: 0, agent_connections: 1 });

    const live = (await n1.http('GET', `/admin/v1/organizations/${org.org_id}/live`, { schema: 'OrganizationLive' }))
      .body;
    expect(live.missing_nodes).to.deep.equal([]);
    expect(live.agents).to.have.length(1);
    expect(live.agents[0].connection).to.include({ node_id: 'n2' });
    expect(live.agents[0].last_minute).to.deep.equal({ events: 1, errors: 0 });
    expect(live.apps[0]).to.include({ instances: 2 });
    expect(live.apps[0].connections.map((c: { node_id: string }) => c.node_id)).to.deep.equal(['n1', 'n1']);
  });
});
