// GET /admin/v1/organizations/{org_id}/live (D8): each app's live instances, each agent's connection (its id,
// connected since, last ping) and its last minute of events from the event log.
import { expect } from 'chai';
import { FIELD_BOUNDS, LIMITS } from '../../generated/index.js';
import { iso } from '../../src/shared/time.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { startEvent } from '../helpers/events.js';
import { sample, scrape } from '../helpers/metrics.js';

/** The picture, each connection's id checked (its own, of the ConnectionId form: H8) and then left out. */
async function live(bridge: TestBridge, orgId: string) {
  const res = await bridge.http('GET', `/admin/v1/organizations/${orgId}/live`, { schema: 'OrganizationLive' });
  expect(res.status).to.equal(200);
  const connections = [
    ...res.body.apps.flatMap((a: any) => a.connections),
    ...res.body.agents.flatMap((a: any) => (a.connection ? [a.connection] : [])),
  ];
  const ids = connections.map(({ connection_id }) => connection_id as string);
  for (const id of ids) expect(id).to.match(/^c-[0-9a-z]{16}$/);
  expect(new Set(ids).size).to.equal(ids.length);
  for (const connection of connections) delete connection.connection_id;
  return res.body;
}

describe("an organization's live picture (GET /admin/v1/organizations/{org_id}/live)", function () {
  it("lists each app's instances and each agent's connection with when it connected and last pinged, as /metrics counts them", async function () {
    const bridge = await startTestBridge({ nodeId: 'solo' });
    const org = await bridge.org();
    const app = await bridge.app(org.org_id, 'Busy App');
    const idle = await bridge.app(org.org_id, 'Idle App');
    const agent = await bridge.agent(org.org_id, 'Online Agent');
    const offline = await bridge.agent(org.org_id, 'Offline Agent');
    const other = await bridge.org('Other Org');
    const stranger = await bridge.app(other.org_id, 'Stranger');
    await bridge.connectApp(stranger.token); // another organization's: not in this picture

    const connectedAt = bridge.clock.now();
    const agentClient = await bridge.connectAgent(agent.token);
    const first = await bridge.connectApp(app.token);
    bridge.clock.advance(1_000);
    const second = await bridge.connectApp(app.token);
    bridge.clock.advance(2_000);
    await agentClient.expectNothingBeforePong();
    await first.expectNothingBeforePong();

    const picture = await live(bridge, org.org_id);
    expect(picture).to.deep.equal({
      org_id: org.org_id,
      apps: [
        {
          app_id: app.app_id,
          instances: 2,
          connections: [
            { node_id: 'solo', connected_at: iso(connectedAt), last_ping_at: iso(connectedAt + 3_000) },
            { node_id: 'solo', connected_at: iso(connectedAt + 1_000), last_ping_at: null },
          ],
        },
        { app_id: idle.app_id, instances: 0, connections: [] },
      ].sort((a, b) => a.app_id.localeCompare(b.app_id)),
      agents: [
        {
          agent_id: agent.agent_id,
          connection: { node_id: 'solo', connected_at: iso(connectedAt), last_ping_at: iso(connectedAt + 3_000) },
          last_minute: { events: 0, errors: 0 },
        },
        { agent_id: offline.agent_id, connection: null, last_minute: { events: 0, errors: 0 } },
      ].sort((a, b) => a.agent_id.localeCompare(b.agent_id)),
      missing_nodes: [],
    });
    const metrics = await scrape(bridge.url);
    expect(sample(metrics, 'bridge_connections', { kind: 'app' })).to.equal(2 + 1); // the stranger's too
    expect(sample(metrics, 'bridge_connections', { kind: 'agent' })).to.equal(1);

    second.close();
    await second.waitForClose();
    for (let i = 0; i < 200 && bridge.bridge.stats().apps > 2; i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    const after = (await live(bridge, org.org_id)).apps.find((a: { app_id: string }) => a.app_id === app.app_id);
    expect(after).to.deep.equal({
      app_id: app.app_id,
      instances: 1,
      connections: [{ node_id: 'solo', connected_at: iso(connectedAt), last_ping_at: iso(connectedAt + 3_000) }],
    });
  });

  it(`lists an app's ${FIELD_BOUNDS.AppLive.connections.maxItems} oldest connections and counts them all`, async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const listed = FIELD_BOUNDS.AppLive.connections.maxItems;
    const start = bridge.clock.now();
    for (let i = 0; i <= listed; i++) {
      await bridge.connectApp(app.token);
      bridge.clock.advance(1);
    }
    const [shown] = (await live(bridge, org.org_id)).apps;
    expect(shown.instances).to.equal(listed + 1);
    expect(shown.connections.map((c: { connected_at: string }) => c.connected_at)).to.deep.equal(
      Array.from({ length: listed }, (_, i) => iso(start + i)),
    );
  });

  it('answers NOT_FOUND for an organization that does not exist', async function () {
    const bridge = await startTestBridge();
    const res = await bridge.http('GET', '/admin/v1/organizations/no-such-org/live');
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ code: 'NOT_FOUND', error: 'Organization no-such-org does not exist.' });
  });
});

describeEachDatabase("an agent's last minute in the live picture", function (db) {
  it("counts each agent's events of the last minute and those that ended with an error, refused ones included", async function () {
    const bridge = await startTestBridge({ databaseUrl: db.url() });
    const { org, agent, appClient, agentClient } = await bridge.pair();
    const offline = await bridge.agent(org.org_id, 'Offline Agent');
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
    agentClient.send({ type: 'reply', event_id, content: 'ok', done: true });
    await appClient.expect('reply');
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    const failed = await appClient.expect('accepted');
    await agentClient.expect('event');
    agentClient.send({ type: 'error', event_id: failed.event_id, code: 'AGENT_ERROR', error: 'no' });
    await appClient.expect('error');
    appClient.send({ type: 'event', agent_id: offline.agent_id, thread_id: 't', payload: {} });
    expect(await appClient.expect('error')).to.include({ code: 'AGENT_OFFLINE' });

    const minute = async () =>
      Object.fromEntries((await live(bridge, org.org_id)).agents.map((a: any) => [a.agent_id, a.last_minute]));
    expect(await minute()).to.deep.equal({
      [agent.agent_id]: { events: 2, errors: 1 },
      [offline.agent_id]: { events: 1, errors: 1 },
    });
    await bridge.advanceWithHeartbeats(LIMITS.heartbeatIntervalMs * 2, [appClient, agentClient]);
    appClient.send({ type: 'event', agent_id: offline.agent_id, thread_id: 't', payload: {} });
    await appClient.expect('error');
    expect(await minute()).to.deep.equal({
      [agent.agent_id]: { events: 0, errors: 0 },
      [offline.agent_id]: { events: 1, errors: 1 },
    });
  });
});
