// Disconnecting one connection on a bridge of two nodes (H8, O14): the admin API of either node closes a connection
// the other node holds, that node's client gets DISCONNECTED_BY_ADMIN and 4205, and the audit row names that node;
// a connection no node holds is 404 NOT_FOUND after both have answered.
import { expect } from 'chai';
import { CLOSE_CODES } from '../../generated/index.js';
import { errorText } from '../../src/shared/error-text.js';
import type { TestBridge } from '../helpers/bridge.js';
import { describePostgres } from '../helpers/databases.js';
import { nodesOnRedis } from '../helpers/cluster-nodes.js';
import type { TestClient } from '../helpers/ws-client.js';

async function expectDisconnected(client: TestClient<any>, connectionId: string): Promise<void> {
  expect(await client.expect('error', 2000)).to.deep.equal({
    type: 'error',
    code: 'DISCONNECTED_BY_ADMIN',
    error: errorText('DISCONNECTED_BY_ADMIN', 'admin', { connection_id: connectionId }),
  });
  expect(await client.waitForClose(2000)).to.deep.equal({
    code: CLOSE_CODES.DISCONNECTED_BY_ADMIN,
    reason: 'DISCONNECTED_BY_ADMIN',
  });
}

describePostgres('disconnecting a connection of another node', function (db) {
  const node = nodesOnRedis(db);
  let n1: TestBridge, n2: TestBridge;

  beforeEach(async function () {
    n1 = await node('n1');
    n2 = await node('n2');
  });

  it("closes an agent's connection on n2 through n1's admin API, and an app's on n1 through n2's", async function () {
    const org = await n1.org();
    const app = await n1.app(org.org_id);
    const agent = await n1.agent(org.org_id);
    const agentClient = await n2.connectAgent(agent.token);
    const appClient = await n1.connectApp(app.token);
    await agentClient.expectNothingBeforePong();
    await appClient.expectNothingBeforePong();
    const live = (await n1.http('GET', `/admin/v1/organizations/${org.org_id}/live`, { schema: 'OrganizationLive' }))
      .body;
    const agentConnection = live.agents[0].connection;
    const appConnection = live.apps[0].connections[0];
    expect(agentConnection).to.include({ node_id: 'n2' });
    expect(appConnection).to.include({ node_id: 'n1' });

    const byN1 = await n1.http('DELETE', `/admin/v1/connections/${agentConnection.connection_id}`, {
      schema: 'ClosedConnection',
    });
    expect(byN1.status).to.equal(200);
    expect(byN1.body).to.deep.equal({
      connection_id: agentConnection.connection_id,
      node_id: 'n2',
      kind: 'agent',
      id: agent.agent_id,
      org_id: org.org_id,
      connected_at: agentConnection.connected_at,
    });
    await expectDisconnected(agentClient, agentConnection.connection_id);

    const byN2 = await n2.http('DELETE', `/admin/v1/connections/${appConnection.connection_id}`, {
      schema: 'ClosedConnection',
    });
    expect(byN2.status).to.equal(200);
    expect(byN2.body).to.include({ node_id: 'n1', kind: 'app', id: app.app_id });
    await expectDisconnected(appClient, appConnection.connection_id);

    const audit = (await n1.http('GET', '/admin/v1/audit?limit=2', { schema: 'AuditLog' })).body.entries;
    expect(audit.map((e: any) => [e.action, e.target, e.detail.node_id])).to.deep.equal([
      ['connection.disconnect', appConnection.connection_id, 'n1'],
      ['connection.disconnect', agentConnection.connection_id, 'n2'],
    ]);

    // Gone from every node: both answer that they hold it no more.
    const again = await n1.http('DELETE', `/admin/v1/connections/${agentConnection.connection_id}`, {
      schema: 'HttpError',
    });
    expect(again.status).to.equal(404);
    expect(again.body).to.deep.equal({
      code: 'NOT_FOUND',
      error: errorText('NOT_FOUND', 'connection', { connection_id: agentConnection.connection_id }),
    });
  });
});
