// Deactivation (openapi deactivate routes, W8, H5): the live connections of a deactivated app or agent get
// TOKEN_REVOKED at once, its tokens (rotated-out ones in their grace included) then get TOKEN_REVOKED, an agent's
// events in flight end with AGENT_OFFLINE and it leaves the directory; idempotent, final, and kept across a restart.
import { expect } from 'chai';
import { CLOSE_CODES, LIMITS } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { startEvent } from '../helpers/events.js';
import type { TestClient } from '../helpers/ws-client.js';

type Kind = 'app' | 'agent';
const KINDS: Kind[] = ['app', 'agent'];

const adminPath = (kind: Kind, id: string, action: 'rotate-token' | 'deactivate') =>
  `/admin/v1/${kind}s/${id}/${action}`;
const recordSchema = (kind: Kind) => (kind === 'app' ? 'App' : 'Agent');

function connect(bridge: TestBridge, kind: Kind, token: string): Promise<TestClient<any>> {
  return kind === 'app' ? bridge.connectApp(token) : bridge.connectAgent(token);
}

async function deactivate(bridge: TestBridge, kind: Kind, id: string): Promise<any> {
  const res = await bridge.http('POST', adminPath(kind, id, 'deactivate'), { schema: recordSchema(kind) });
  expect(res.status, `deactivate ${kind} ${id}`).to.equal(200);
  return res.body;
}

/**
 * The connection gets one `error` TOKEN_REVOKED (no event_id), then close TOKEN_REVOKED. Deactivation closes
 * live connections while it handles the admin call, so no clock advance and only a short wait are needed.
 */
async function expectRevoked(client: TestClient<any>, when: string): Promise<void> {
  const error = await client.expect('error', 1000);
  expect(error, when).to.deep.equal({ type: 'error', code: 'TOKEN_REVOKED', error: error.error });
  expect(error.error).to.be.a('string').that.is.not.empty;
  expect(await client.waitForClose(1000), when).to.deep.equal({
    code: CLOSE_CODES.TOKEN_REVOKED,
    reason: 'TOKEN_REVOKED',
  });
}

/** A new connection with the token is refused with TOKEN_REVOKED (not UNAUTHORIZED). */
async function expectRevokedOnConnect(bridge: TestBridge, kind: Kind, token: string, when: string): Promise<void> {
  await expectRevoked(await connect(bridge, kind, token), when);
}

async function expectDirectoryRevoked(bridge: TestBridge, orgId: string, token: string): Promise<void> {
  const res = await bridge.http('GET', `/v1/organizations/${orgId}/agents`, { token });
  expect(res.status).to.equal(401);
  expect(res.body.code).to.equal('TOKEN_REVOKED');
}

describe('deactivation', function () {
  it('closes every instance of a deactivated app with TOKEN_REVOKED, then refuses its token with TOKEN_REVOKED; other apps go on', async function () {
    const bridge = await startTestBridge();
    const { org, app, agent, appClient, agentClient } = await bridge.pair();
    const secondInstance = await bridge.connectApp(app.token);
    const other = await bridge.app(org.org_id, 'Other App');
    const otherClient = await bridge.connectApp(other.token);
    await secondInstance.expectNothingBeforePong();

    const body = await deactivate(bridge, 'app', app.app_id);
    expect(body).to.deep.equal({
      app_id: app.app_id,
      org_id: org.org_id,
      name: app.name,
      active: false,
      online: false,
      created_at: app.created_at,
    });
    await expectRevoked(appClient, 'first instance');
    await expectRevoked(secondInstance, 'second instance');

    await expectRevokedOnConnect(bridge, 'app', app.token, "a new connection with the deactivated app's token");
    await expectDirectoryRevoked(bridge, org.org_id, app.token);
    const listed = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/apps`, { schema: 'AppList' });
    expect(listed.body.apps.map((a: any) => [a.app_id, a.active])).to.have.deep.members([
      [app.app_id, false],
      [other.app_id, true],
    ]);

    // The other app and the agent are unaffected.
    await otherClient.expectNothingBeforePong();
    await agentClient.expectNothingBeforePong();
    otherClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: { from: 'other' } });
    const { event_id } = await otherClient.expect('accepted');
    expect(await agentClient.expect('event')).to.include({ event_id, app_id: other.app_id });
    agentClient.send({ type: 'reply', event_id, content: 'hello', done: true });
    expect(await otherClient.expect('reply')).to.include({ event_id, reply: 'hello' });
    const directory = await bridge.http('GET', `/v1/organizations/${org.org_id}/agents`, {
      token: other.token,
      schema: 'AgentDirectory',
    });
    expect(directory.status).to.equal(200);
    const fresh = await bridge.connectApp(other.token);
    await fresh.expectNothingBeforePong();
  });

  it('closes a deactivated agent with TOKEN_REVOKED, ends its events at once with AGENT_OFFLINE, and hides it from apps', async function () {
    const bridge = await startTestBridge();
    const { org, app, agent, appClient, agentClient } = await bridge.pair();
    const other = await bridge.agent(org.org_id, 'Other Agent');
    const otherClient = await bridge.connectAgent(other.token);
    await bridge.untilAgentOnline(other.agent_id, true);

    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id, 't', { q: 1 });
    agentClient.send({ type: 'token', event_id, token: 'Partly ' });
    await appClient.expect('token');

    const body = await deactivate(bridge, 'agent', agent.agent_id);
    const { token: _token, ...created } = agent;
    expect(body).to.deep.equal({ ...created, active: false, online: false });
    await expectRevoked(agentClient, "the agent's live connection");

    // The event in flight ends now, without the reconnect grace.
    const ended = await appClient.expect('error', 1000);
    expect(ended).to.deep.equal({
      type: 'error',
      event_id,
      agent_id: agent.agent_id,
      code: 'AGENT_OFFLINE',
      error: ended.error,
    });
    expect(ended.error).to.be.a('string').that.is.not.empty;
    bridge.clock.advance(LIMITS.agentReconnectGraceMs);
    await appClient.expectNothingBeforePong();

    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    const notFound = await appClient.expect('error');
    expect(notFound).to.include({ type: 'error', agent_id: agent.agent_id, code: 'AGENT_NOT_FOUND' });
    expect(notFound.event_id).to.be.a('string').that.is.not.empty;

    appClient.send({ type: 'discover' });
    const discovered = await appClient.expect('agents');
    expect(discovered.agents.map((a) => a.agent_id)).to.deep.equal([other.agent_id]);
    const directory = await bridge.http('GET', `/v1/organizations/${org.org_id}/agents`, {
      token: app.token,
      schema: 'AgentDirectory',
    });
    expect(directory.body.agents.map((a: any) => a.id)).to.deep.equal([other.agent_id]);
    const listed = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/agents`, { schema: 'AgentList' });
    const entry = listed.body.agents.find((a: any) => a.agent_id === agent.agent_id);
    expect(entry).to.include({ active: false, online: false });
    expect(listed.body.agents.find((a: any) => a.agent_id === other.agent_id)).to.include({
      active: true,
      online: true,
    });

    await expectRevokedOnConnect(bridge, 'agent', agent.token, "a new connection with the deactivated agent's token");

    // The other agent is unaffected.
    await otherClient.expectNothingBeforePong();
    await startEvent(appClient, otherClient, other.agent_id);
  });

  for (const kind of KINDS) {
    it(`refuses a rotated-out ${kind} token still in its grace with TOKEN_REVOKED once the ${kind} is deactivated`, async function () {
      const bridge = await startTestBridge();
      const org = await bridge.org();
      const owner = kind === 'app' ? await bridge.app(org.org_id) : await bridge.agent(org.org_id);
      const id = 'app_id' in owner ? owner.app_id : owner.agent_id;
      const rotated = await bridge.http('POST', adminPath(kind, id, 'rotate-token'), {
        schema: kind === 'app' ? 'AppTokenRotated' : 'AgentTokenRotated',
      });
      expect(rotated.status).to.equal(200);
      const newToken: string = rotated.body.token;
      bridge.clock.advance(10 * 60_000);
      const live = await connect(bridge, kind, owner.token); // opened with the old token, in its grace
      await live.expectNothingBeforePong();

      await deactivate(bridge, kind, id);
      await expectRevoked(live, 'live connection opened with the old token');
      await expectRevokedOnConnect(bridge, kind, owner.token, 'old token in its grace');
      await expectRevokedOnConnect(bridge, kind, newToken, 'new token');
      if (kind === 'app') {
        await expectDirectoryRevoked(bridge, org.org_id, owner.token);
        await expectDirectoryRevoked(bridge, org.org_id, newToken);
      }
    });

    it(`answers 200 with the same ${kind} when deactivating twice, and 404 NOT_FOUND for an unknown ${kind}`, async function () {
      const bridge = await startTestBridge();
      const org = await bridge.org();
      const owner = kind === 'app' ? await bridge.app(org.org_id) : await bridge.agent(org.org_id);
      const id = 'app_id' in owner ? owner.app_id : owner.agent_id;

      const first = await deactivate(bridge, kind, id);
      expect(first.active).to.equal(false);
      bridge.clock.advance(60_000);
      const second = await deactivate(bridge, kind, id);
      expect(second).to.deep.equal(first);
      await expectRevokedOnConnect(bridge, kind, owner.token, 'after the second deactivation');

      const missing = await bridge.http('POST', adminPath(kind, `no-such-${kind}`, 'deactivate'));
      expect(missing.status).to.equal(404);
      expect(missing.body.code).to.equal('NOT_FOUND');
    });
  }

  describeEachDatabase('across a restart', function (db) {
    it("still refuses a deactivated app's and agent's tokens with TOKEN_REVOKED after a restart", async function () {
      const databaseUrl = db.url();
      const first = await startTestBridge({ databaseUrl });
      const org = await first.org();
      const app = await first.app(org.org_id);
      const agent = await first.agent(org.org_id);
      const keptApp = await first.app(org.org_id, 'Kept App');
      const appBody = await deactivate(first, 'app', app.app_id);
      const agentBody = await deactivate(first, 'agent', agent.agent_id);
      await first.close();

      const second = await startTestBridge({ databaseUrl });
      await expectRevokedOnConnect(second, 'app', app.token, 'app token after the restart');
      await expectRevokedOnConnect(second, 'agent', agent.token, 'agent token after the restart');
      await expectDirectoryRevoked(second, org.org_id, app.token);

      const apps = await second.http('GET', `/admin/v1/organizations/${org.org_id}/apps`, { schema: 'AppList' });
      expect(apps.body.apps.find((a: any) => a.app_id === app.app_id)).to.deep.equal(appBody);
      const agents = await second.http('GET', `/admin/v1/organizations/${org.org_id}/agents`, { schema: 'AgentList' });
      expect(agents.body.agents.find((a: any) => a.agent_id === agent.agent_id)).to.deep.equal(agentBody);
      const directory = await second.http('GET', `/v1/organizations/${org.org_id}/agents`, {
        token: keptApp.token,
        schema: 'AgentDirectory',
      });
      expect(directory.body.agents).to.deep.equal([]);

      // Still final: idempotent, and no rotation.
      expect(await deactivate(second, 'app', app.app_id)).to.deep.equal(appBody);
      const rotate = await second.http('POST', adminPath('agent', agent.agent_id, 'rotate-token'));
      expect(rotate.status).to.equal(400);
      expect(rotate.body.code).to.equal('INVALID_REQUEST');
    });
  });
});
