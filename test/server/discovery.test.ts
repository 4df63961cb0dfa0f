// W13 and H2: which agents an app is shown, over the WebSocket (`discover`) and over HTTP (the directory).
import { expect } from 'chai';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';

/**
 * Two organizations. In `org`: the calling `app`, an `otherApp`, and four agents, created in an order that is not
 * their id order: `open` (no allowlist), `mine` (allowlists `app`), `theirs` (allowlists `otherApp` only) and
 * `wide` (allowlists both). In `elsewhere`: one open agent.
 */
async function world(bridge: TestBridge) {
  const org = await bridge.org('Acme');
  const elsewhere = await bridge.org('Globex');
  const app = await bridge.app(org.org_id, 'Classroom');
  const otherApp = await bridge.app(org.org_id, 'Gradebook');
  const open = await bridge.agent(org.org_id, 'Zeta Open', { description: 'Open to every app.' });
  const mine = await bridge.agent(org.org_id, 'Alpha Mine', { description: 'Only for the classroom.' });
  const theirs = await bridge.agent(org.org_id, 'Mid Theirs', { description: 'Only for the gradebook.' });
  const wide = await bridge.agent(org.org_id, 'Beta Wide');
  const foreign = await bridge.agent(elsewhere.org_id, 'Alpha Foreign', { description: 'Another organization.' });
  await allowlist(bridge, mine.agent_id, [app.app_id]);
  await allowlist(bridge, theirs.agent_id, [otherApp.app_id]);
  await allowlist(bridge, wide.agent_id, [otherApp.app_id, app.app_id]);
  return { org, elsewhere, app, otherApp, open, mine, theirs, wide, foreign };
}

async function allowlist(bridge: TestBridge, agentId: string, appIds: string[] | null): Promise<void> {
  const res = await bridge.http('PUT', `/admin/v1/agents/${agentId}/allowlist`, { body: { app_ids: appIds }, schema: 'Agent' });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
}

const byId = <T>(key: keyof T) => (a: T, b: T) => (String(a[key]) < String(b[key]) ? -1 : String(a[key]) > String(b[key]) ? 1 : 0);

type Summary = { agent_id: string; name: string; description: string };
const summary = (a: Summary): Summary => ({ agent_id: a.agent_id, name: a.name, description: a.description });

/** Polls the directory until `agentId` has `status`; the close of a socket travels asynchronously. */
async function waitForStatus(bridge: TestBridge, orgId: string, token: string, agentId: string, status: 'online' | 'offline') {
  let last: unknown;
  for (let i = 0; i < 20; i++) {
    const res = await bridge.http('GET', `/v1/organizations/${orgId}/agents`, { token, schema: 'AgentDirectory' });
    const entry = res.body.agents.find((a: { id: string }) => a.id === agentId);
    if (entry?.status === status) return res.body;
    last = res.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`agent ${agentId} never became ${status}: ${JSON.stringify(last)}`);
}

describe('discovery', function () {
  describe('discover over the app connection', function () {
    it("lists the agents of the app's organization that the app may use, online or not, sorted by agent_id", async function () {
      const bridge = await startTestBridge();
      const w = await world(bridge);
      await bridge.connectAgent(w.mine.token); // one online, the others offline
      await bridge.connectAgent(w.foreign.token);
      const appClient = await bridge.connectApp(w.app.token);

      appClient.send({ type: 'discover' });
      const { agents } = await appClient.expect('agents');
      const expected = [w.open, w.mine, w.wide].map(summary).sort(byId<Summary>('agent_id'));
      expect(agents).to.deep.equal(expected);
      expect(agents.map((a) => a.agent_id)).to.not.include.members([w.theirs.agent_id, w.foreign.agent_id]);
      expect(agents.find((a) => a.agent_id === w.mine.agent_id)?.description).to.equal('Only for the classroom.');
      expect(agents.find((a) => a.agent_id === w.wide.agent_id)?.description).to.equal('');
    });

    it('shows another app of the same organization its own view', async function () {
      const bridge = await startTestBridge();
      const w = await world(bridge);
      const otherClient = await bridge.connectApp(w.otherApp.token);
      otherClient.send({ type: 'discover' });
      const { agents } = await otherClient.expect('agents');
      expect(agents.map((a) => a.agent_id)).to.deep.equal([w.open, w.theirs, w.wide].map((a) => a.agent_id).sort());
    });

    it('reflects an allowlist change on the next discover, without reconnecting', async function () {
      const bridge = await startTestBridge();
      const w = await world(bridge);
      const appClient = await bridge.connectApp(w.app.token);
      const ids = async () => {
        appClient.send({ type: 'discover' });
        return (await appClient.expect('agents')).agents.map((a) => a.agent_id);
      };
      expect(await ids()).to.have.members([w.open.agent_id, w.mine.agent_id, w.wide.agent_id]);

      await allowlist(bridge, w.theirs.agent_id, [w.otherApp.app_id, w.app.app_id]); // now allowed
      await allowlist(bridge, w.open.agent_id, []); // now closed to every app
      await allowlist(bridge, w.mine.agent_id, null); // now open: still listed
      expect(await ids()).to.deep.equal([w.mine.agent_id, w.theirs.agent_id, w.wide.agent_id].sort());

      await allowlist(bridge, w.wide.agent_id, [w.otherApp.app_id]);
      expect(await ids()).to.deep.equal([w.mine.agent_id, w.theirs.agent_id].sort());
      await appClient.expectNothingBeforePong();
    });
  });

  describe('the HTTP directory', function () {
    it("lists every active agent of the app's organization with its status and whether the app may use it", async function () {
      const bridge = await startTestBridge();
      const w = await world(bridge);
      const path = `/v1/organizations/${w.org.org_id}/agents`;
      const agentClient = await bridge.connectAgent(w.theirs.token);
      await agentClient.expectNothingBeforePong();

      const online = await bridge.http('GET', path, { token: w.app.token, schema: 'AgentDirectory' });
      expect(online.status).to.equal(200);
      const entry = (a: typeof w.open, status: 'online' | 'offline', allowlisted: boolean) => ({
        id: a.agent_id,
        name: a.name,
        description: a.description,
        status,
        allowlisted,
      });
      expect(online.body).to.deep.equal({
        agents: [
          entry(w.open, 'offline', true),
          entry(w.mine, 'offline', true),
          entry(w.theirs, 'online', false),
          entry(w.wide, 'offline', true),
        ].sort(byId('id')),
      });

      agentClient.close();
      const offline = await waitForStatus(bridge, w.org.org_id, w.app.token, w.theirs.agent_id, 'offline');
      expect(offline.agents.map((a: { status: string }) => a.status)).to.deep.equal(['offline', 'offline', 'offline', 'offline']);

      // The other app of the organization sees the same agents with its own `allowlisted`.
      const other = await bridge.http('GET', path, { token: w.otherApp.token, schema: 'AgentDirectory' });
      expect(other.body).to.deep.equal({
        agents: [
          entry(w.open, 'offline', true),
          entry(w.mine, 'offline', false),
          entry(w.theirs, 'offline', true),
          entry(w.wide, 'offline', true),
        ].sort(byId('id')),
      });
    });

    it('answers 401 UNAUTHORIZED without a token and with a wrong one', async function () {
      const bridge = await startTestBridge();
      const w = await world(bridge);
      const path = `/v1/organizations/${w.org.org_id}/agents`;
      const wrong = w.app.token.slice(0, -1) + (w.app.token.endsWith('A') ? 'B' : 'A');
      for (const token of [null, 'garbage', wrong]) {
        const res = await bridge.http('GET', path, { token });
        expect(res.status, String(token)).to.equal(401);
        expect(Object.keys(res.body).sort()).to.deep.equal(['code', 'error']);
        expect(res.body.code).to.equal('UNAUTHORIZED');
      }
    });

    it("answers 403 FORBIDDEN for another organization's directory and for an unknown one, never 404", async function () {
      const bridge = await startTestBridge();
      const w = await world(bridge);
      for (const orgId of [w.elsewhere.org_id, 'no-such-org-abc123', 'NOT_AN_ID']) {
        const res = await bridge.http('GET', `/v1/organizations/${orgId}/agents`, { token: w.app.token });
        expect(res.status, orgId).to.equal(403);
        expect(Object.keys(res.body).sort()).to.deep.equal(['code', 'error']);
        expect(res.body.code).to.equal('FORBIDDEN');
        expect(JSON.stringify(res.body)).to.not.include(w.foreign.agent_id);
      }
      const other = await bridge.http('GET', `/v1/organizations/${w.elsewhere.org_id}/agents`, { token: w.app.token });
      const unknown = await bridge.http('GET', '/v1/organizations/no-such-org-abc123/agents', { token: w.app.token });
      expect(other.body).to.deep.equal(unknown.body);
    });

    it('answers 403 FORBIDDEN to an agent token', async function () {
      const bridge = await startTestBridge();
      const w = await world(bridge);
      const res = await bridge.http('GET', `/v1/organizations/${w.org.org_id}/agents`, { token: w.open.token });
      expect(res.status).to.equal(403);
      expect(Object.keys(res.body).sort()).to.deep.equal(['code', 'error']);
      expect(res.body.code).to.equal('FORBIDDEN');
    });
  });
});
