// Three nodes in this process (startServer, each its own HTTP port, Redis connections and frozen test clock) on one
// PostgreSQL database and a private Redis: what a change made through one node's admin API does on the others, the
// shared rate limit and clock, and presence. A change holds on every node once the admin API has answered.
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import { describePostgres } from '../helpers/databases.js';
import type { TestBridge } from '../helpers/bridge.js';
import { nodesOnRedis } from '../helpers/cluster-nodes.js';
import type { TestClient } from '../helpers/ws-client.js';

describePostgres('three nodes as one bridge', function (db) {
  const node = nodesOnRedis(db);
  let n1: TestBridge, n2: TestBridge, n3: TestBridge;

  beforeEach(async function () {
    n1 = await node('n1');
    [n2, n3] = [await node('n2'), await node('n3')];
  });

  async function setup() {
    const org = await n1.org();
    const app = await n1.app(org.org_id);
    const agent = await n1.agent(org.org_id);
    return { org, app, agent };
  }
  const event = (agentId: string, thread = 't') => ({
    type: 'event',
    agent_id: agentId,
    thread_id: thread,
    payload: {},
  });

  /** Moves every node's clock through n1, a heartbeat at a time, the live clients pinging in between. */
  async function advanceEverywhere(ms: number, live: TestClient<any>[]): Promise<void> {
    for (let left = ms; left > 0; left -= LIMITS.heartbeatIntervalMs) {
      await n1.http('POST', '/admin/v1/test/clock', {
        body: { advance_ms: Math.min(left, LIMITS.heartbeatIntervalMs) },
      });
      for (const client of live) await client.expectNothingBeforePong();
    }
  }

  it("shows an agent connected to one node online in another node's directory, and an app connected to one node online in another's admin API", async function () {
    const { org, app, agent } = await setup();
    await n2.connectAgent(agent.token);
    await n3.connectApp(app.token);
    const directory = await n1.http('GET', `/v1/organizations/${org.org_id}/agents`, { token: app.token });
    expect(directory.body.agents[0]).to.include({ id: agent.agent_id, status: 'online' });
    const apps = await n1.http('GET', `/admin/v1/organizations/${org.org_id}/apps`);
    expect(apps.body[0] ?? apps.body.apps?.[0]).to.include({ app_id: app.app_id, online: true });
  });

  it('shows a rename on every node as soon as the admin API answered, and gives sessions opened on another node the new TTL', async function () {
    const { org, app, agent } = await setup();
    await n1.http('PATCH', `/admin/v1/organizations/${org.org_id}`, { body: { name: 'Renamed Org' } });
    await n1.http('PATCH', `/admin/v1/apps/${app.app_id}`, { body: { name: 'Renamed App' } });
    expect(
      (
        await n1.http('PATCH', `/admin/v1/agents/${agent.agent_id}`, {
          body: { name: 'Renamed Agent', description: 'New.', ttl_days: 2 },
        })
      ).status,
    ).to.equal(200);
    const directory = await n2.http('GET', `/v1/organizations/${org.org_id}/agents`, { token: app.token });
    expect(directory.body.agents[0]).to.include({ id: agent.agent_id, name: 'Renamed Agent', description: 'New.' });
    expect(
      (await n3.http('GET', `/admin/v1/organizations?q=renamed`)).body.organizations.map(
        (o: { name: string }) => o.name,
      ),
    ).to.deep.equal(['Renamed Org']);
    expect((await n3.http('GET', `/admin/v1/organizations/${org.org_id}/apps`)).body.apps[0].name).to.equal(
      'Renamed App',
    );

    const agentClient = await n3.connectAgent(agent.token);
    const appClient = await n2.connectApp(app.token);
    appClient.send(event(agent.agent_id, 'after-ttl-change'));
    const accepted = await appClient.expect('accepted');
    await agentClient.expect('event');
    const sessions = await n1.http('GET', `/admin/v1/sessions?agent_id=${agent.agent_id}`);
    const session = sessions.body.sessions.find((s: { session_key: string }) => s.session_key === accepted.session_key);
    expect(Date.parse(session.expires_at) - Date.parse(session.created_at)).to.equal(2 * 86_400_000);
  });

  it("closes an agent's connection on another node with TOKEN_REVOKED when it is deactivated, and ends its events held on a third", async function () {
    const { app, agent } = await setup();
    const agentClient = await n3.connectAgent(agent.token);
    const appClient = await n2.connectApp(app.token);
    appClient.send(event(agent.agent_id));
    const accepted = await appClient.expect('accepted');
    await agentClient.expect('event');
    const started = Date.now();
    expect((await n1.http('POST', `/admin/v1/agents/${agent.agent_id}/deactivate`)).status).to.equal(200);
    const answeredMs = Date.now() - started;
    // Already done everywhere when the admin API answered: the frames are there, not on their way.
    expect(await agentClient.expect('error', 50)).to.include({ code: 'TOKEN_REVOKED' });
    expect(await appClient.expect('error', 50)).to.include({ code: 'AGENT_OFFLINE', event_id: accepted.event_id });
    expect(answeredMs).to.be.below(1000);
    const again = await n2.connectAgent(agent.token);
    expect(await again.expect('error')).to.include({ code: 'TOKEN_REVOKED' });
  });

  it("authenticates a rotated token on every node as soon as the admin API answers, and closes the old token's connections on every node when the grace ends", async function () {
    const { app, agent } = await setup();
    const old = await n3.connectApp(app.token);
    const agentClient = await n2.connectAgent(agent.token);
    const rotated = (await n1.http('POST', `/admin/v1/apps/${app.app_id}/rotate-token`)).body;
    const fresh = await n2.connectApp(rotated.token);
    fresh.send(event(agent.agent_id));
    expect(await fresh.expect('accepted')).to.include({ agent_id: agent.agent_id });
    const delivered = await agentClient.expect('event');
    agentClient.send({ type: 'reply', event_id: delivered.event_id, content: 'ok', done: true });
    await fresh.expect('reply');
    await advanceEverywhere(LIMITS.rotationGraceMs - LIMITS.heartbeatIntervalMs, [old, fresh, agentClient]);
    await n1.http('POST', '/admin/v1/test/clock', { body: { advance_ms: LIMITS.heartbeatIntervalMs } });
    expect(await old.expect('error', 500)).to.include({ code: 'UNAUTHORIZED' });
    await fresh.expectNothingBeforePong();
  });

  it('refuses an event with PERMISSION_DENIED on every node as soon as an allowlist leaving its app out is set', async function () {
    const { org, app, agent } = await setup();
    const other = await n1.app(org.org_id, 'Other');
    await n3.connectAgent(agent.token);
    const appClient = await n2.connectApp(app.token);
    await n1.http('PUT', `/admin/v1/agents/${agent.agent_id}/allowlist`, { body: { app_ids: [other.app_id] } });
    appClient.send(event(agent.agent_id));
    expect(await appClient.expect('error')).to.include({ code: 'PERMISSION_DENIED' });
  });

  it("moves every node's clock together: an event held on one node times out when the clock moves through another", async function () {
    const { app, agent } = await setup();
    const agentClient = await n2.connectAgent(agent.token);
    const appClient = await n3.connectApp(app.token);
    appClient.send(event(agent.agent_id));
    const accepted = await appClient.expect('accepted');
    await agentClient.expect('event');
    await advanceEverywhere(LIMITS.agentTimeoutMs - LIMITS.heartbeatIntervalMs, [appClient, agentClient]);
    await n1.http('POST', '/admin/v1/test/clock', { body: { advance_ms: LIMITS.heartbeatIntervalMs } });
    expect(await appClient.expect('error', 500)).to.include({ code: 'AGENT_TIMEOUT', event_id: accepted.event_id });
  });
});

describePostgres('three nodes sharing one rate limit', function (db) {
  const node = nodesOnRedis(db);

  it("counts an app's events on every node against one bucket", async function () {
    const limits = { rateLimitPerSecond: 1, rateLimitBurst: 3 };
    const [n1, n2] = [await node('n1', limits), await node('n2', limits)];
    const org = await n1.org();
    const app = await n1.app(org.org_id);
    const agent = await n1.agent(org.org_id);
    await n1.connectAgent(agent.token);
    const [a1, a2] = [await n1.connectApp(app.token), await n2.connectApp(app.token)];
    const codes: string[] = [];
    for (const client of [a1, a2, a1, a2]) {
      client.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
      const answer = await client.waitForMessage();
      codes.push(answer.type === 'error' ? answer.code : answer.type);
    }
    expect(codes).to.deep.equal(['accepted', 'accepted', 'accepted', 'RATE_LIMIT_EXCEEDED']);
  });
});
