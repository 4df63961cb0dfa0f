// DELETE /admin/v1/connections/{connection_id} (H8): one connection closed with DISCONNECTED_BY_ADMIN (4205), which
// its client may reconnect from at once; answered with what it was, recorded in the audit trail, 404 when no node
// holds it. Events in flight fare as after any close.
import { expect } from 'chai';
import { CLOSE_CODES, ERRORS } from '../../generated/index.js';
import { iso } from '../../src/shared/time.js';
import { errorText } from '../../src/shared/error-text.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { startEvent } from '../helpers/events.js';
import type { TestClient } from '../helpers/ws-client.js';

/** The organization's connections as the live picture lists them: each app's, then each agent's. */
async function connectionIds(bridge: TestBridge, orgId: string) {
  const res = await bridge.http('GET', `/admin/v1/organizations/${orgId}/live`, { schema: 'OrganizationLive' });
  expect(res.status).to.equal(200);
  return {
    apps: res.body.apps.flatMap((a: any) => a.connections.map((c: any) => c.connection_id)) as string[],
    agents: res.body.agents.flatMap((a: any) => (a.connection ? [a.connection.connection_id] : [])) as string[],
  };
}

function disconnect(bridge: TestBridge, connectionId: string) {
  return bridge.http('DELETE', `/admin/v1/connections/${connectionId}`, { schema: 'ClosedConnection' });
}

/** One `error` DISCONNECTED_BY_ADMIN (no event_id) naming the connection, then the close 4205. */
async function expectDisconnected(client: TestClient<any>, connectionId: string): Promise<void> {
  expect(await client.expect('error', 1000)).to.deep.equal({
    type: 'error',
    code: 'DISCONNECTED_BY_ADMIN',
    error: errorText('DISCONNECTED_BY_ADMIN', 'admin', { connection_id: connectionId }),
  });
  expect(await client.waitForClose(1000)).to.deep.equal({
    code: CLOSE_CODES.DISCONNECTED_BY_ADMIN,
    reason: 'DISCONNECTED_BY_ADMIN',
  });
}

describe('disconnecting one connection (DELETE /admin/v1/connections/{connection_id})', function () {
  it('is a connection error clients may reconnect from, with a close code of its own', function () {
    expect(ERRORS.DISCONNECTED_BY_ADMIN).to.include({ scope: 'connection', retry: true, closeCode: 4205 });
    const others = Object.entries(ERRORS).filter(([code]) => code !== 'DISCONNECTED_BY_ADMIN');
    expect(others.map(([, e]) => e.closeCode)).not.to.include(4205);
  });

  it('closes the one app connection named, answers what it was, records who did it, and lets the app reconnect with its token', async function () {
    const bridge = await startTestBridge({ nodeId: 'solo' });
    const { org, app, agent, appClient, agentClient } = await bridge.pair();
    const connectedAt = bridge.clock.now();
    bridge.clock.advance(1_000);
    const other = await bridge.connectApp(app.token);
    await other.expectNothingBeforePong();
    const [first, second] = (await connectionIds(bridge, org.org_id)).apps;
    expect(first).to.match(/^c-[0-9a-z]{16}$/);
    expect(second)
      .to.match(/^c-[0-9a-z]{16}$/)
      .and.not.equal(first);

    const res = await disconnect(bridge, first!);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      connection_id: first,
      node_id: 'solo',
      kind: 'app',
      id: app.app_id,
      org_id: org.org_id,
      connected_at: iso(connectedAt),
    });
    await expectDisconnected(appClient, first!);
    expect((await connectionIds(bridge, org.org_id)).apps).to.deep.equal([second]);
    // The app's other instance and the agent are untouched.
    await startEvent(other, agentClient, agent.agent_id);

    const audit = await bridge.http('GET', '/admin/v1/audit?limit=1', { schema: 'AuditLog' });
    expect(audit.body.entries[0]).to.deep.include({
      actor: { kind: 'admin_token', session: null },
      action: 'connection.disconnect',
      target: first,
      detail: { node_id: 'solo', kind: 'app', app_id: app.app_id, org_id: org.org_id },
    });

    const again = await bridge.connectApp(app.token);
    await again.expectNothingBeforePong();
    expect((await connectionIds(bridge, org.org_id)).apps)
      .to.have.length(2)
      .and.include(second);
  });

  it("closes an agent's connection; its event in flight waits for it to come back, and it answers it", async function () {
    const bridge = await startTestBridge();
    const { org, agent, appClient, agentClient } = await bridge.pair();
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
    const [connectionId] = (await connectionIds(bridge, org.org_id)).agents;

    const res = await disconnect(bridge, connectionId!);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ connection_id: connectionId, kind: 'agent', id: agent.agent_id });
    await expectDisconnected(agentClient, connectionId!);
    await bridge.untilAgentOnline(agent.agent_id, false);

    const back = await bridge.connectAgent(agent.token);
    await back.expectNothingBeforePong();
    const [newId] = (await connectionIds(bridge, org.org_id)).agents;
    expect(newId).to.match(/^c-/).and.not.equal(connectionId);
    back.send({ type: 'reply', event_id, content: 'Still here.', done: true });
    expect(await appClient.expect('reply')).to.include({ event_id, reply: 'Still here.' });
  });

  it('answers 404 NOT_FOUND for a connection no node holds (closed already, unknown or malformed), recording nothing', async function () {
    const bridge = await startTestBridge();
    const { org, appClient } = await bridge.pair();
    const [connectionId] = (await connectionIds(bridge, org.org_id)).apps;
    expect((await disconnect(bridge, connectionId!)).status).to.equal(200);
    await appClient.waitForClose(1000);
    const before = (await bridge.http('GET', '/admin/v1/audit', { schema: 'AuditLog' })).body.entries.length;

    for (const id of [connectionId!, 'c-0000000000000000', 'not-a-connection']) {
      const res = await bridge.http('DELETE', `/admin/v1/connections/${id}`, { schema: 'HttpError' });
      expect(res.status, id).to.equal(404);
      expect(res.body, id).to.deep.equal({
        code: 'NOT_FOUND',
        error: errorText('NOT_FOUND', 'connection', { connection_id: id }),
      });
    }
    const after = (await bridge.http('GET', '/admin/v1/audit', { schema: 'AuditLog' })).body.entries.length;
    expect(after).to.equal(before);
  });

  it('takes the admin token or a session, like every admin write', async function () {
    const bridge = await startTestBridge();
    const { org } = await bridge.pair();
    const [connectionId] = (await connectionIds(bridge, org.org_id)).apps;
    const res = await bridge.http('DELETE', `/admin/v1/connections/${connectionId}`, { token: null });
    expect(res.status).to.equal(401);
    expect(res.body.code).to.equal('UNAUTHORIZED');
    expect((await connectionIds(bridge, org.org_id)).apps).to.deep.equal([connectionId]);
  });
});
