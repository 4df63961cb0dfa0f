// W13 and H2: which agents an app is shown, over the WebSocket (`discover`) and over HTTP (the directory).
import { expect } from 'chai';
import { LIMITS, type AgentsMessage } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { TestClient } from '../helpers/ws-client.js';

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
  const res = await bridge.http('PUT', `/admin/v1/agents/${agentId}/allowlist`, {
    body: { app_ids: appIds },
    schema: 'Agent',
  });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
}

const byId =
  <T>(key: keyof T) =>
  (a: T, b: T) =>
    String(a[key]) < String(b[key]) ? -1 : String(a[key]) > String(b[key]) ? 1 : 0;

type Summary = { agent_id: string; name: string; description: string };
const summary = (a: Summary): Summary => ({ agent_id: a.agent_id, name: a.name, description: a.description });

/** Polls the directory until `agentId` has `status`; the close of a socket travels asynchronously. */
async function waitForStatus(
  bridge: TestBridge,
  orgId: string,
  token: string,
  agentId: string,
  status: 'online' | 'offline',
) {
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

  describe('an organization larger than a frame (W13, H2)', function () {
    it('answers a directory of 7,000 agents with long descriptions within frameMaxBytes: discover lists the first that fit and says it is incomplete, an app that reads is never closed, the HTTP directory pages through them all', async function () {
      this.timeout(120_000);
      const bridge = await startTestBridge();
      const org = await bridge.org('Large');
      const app = await bridge.app(org.org_id);
      const other = await bridge.app(org.org_id, 'Other');
      // 1,024 characters, some of two and three UTF-8 bytes: ~1.2 KB an agent, 8.6 MB for all of them.
      const description = 'Répond aux questions — '.repeat(45).slice(0, 1024);
      const created: string[] = [];
      // Through the registry in the process: 7,000 admin requests would be the test's whole time. A hundred at a
      // time, so the database's round trips overlap.
      const batches = async <T>(items: T[], each: (item: T) => Promise<unknown>) => {
        for (let i = 0; i < items.length; i += 100) await Promise.all(items.slice(i, i + 100).map(each));
      };
      await batches(
        [...Array(7_000).keys()],
        async (i) =>
          (created[i] = (await bridge.registry.createAgent(org.org_id, { name: `Agent ${i}`, description })).agent_id),
      );
      // One in three is for the other app only: discover lists the rest, in the same order as the directory.
      await batches(
        created.filter((_, i) => i % 3 === 0),
        (agentId) => bridge.registry.setAllowlist(agentId, { app_ids: [other.app_id] }),
      );
      const everyId = [...created].sort();
      const usable = everyId.filter((id) => created.indexOf(id) % 3 !== 0);

      // An app with the spec's frame limit: a frame over frameMaxBytes would close it (1009).
      const appClient = await TestClient.connect(bridge.url, 'app', app.token, 'header', app.token, {
        maxPayload: LIMITS.frameMaxBytes,
      });
      let answer: AgentsMessage | undefined;
      for (let i = 0; i < 12; i++) {
        appClient.send({ type: 'discover' }); // more than sendBufferMaxBytes of answers in all, read as they come
        answer = (await appClient.expect('agents')) as AgentsMessage;
      }
      const frameBytes = Buffer.byteLength(JSON.stringify(answer));
      expect(frameBytes, 'the frame')
        .to.be.at.most(LIMITS.frameMaxBytes)
        .and.above(LIMITS.frameMaxBytes - 2_000);
      expect(answer!.incomplete).to.equal(true);
      const listed = answer!.agents.map((a) => a.agent_id);
      expect(listed.length).to.be.above(500).and.below(usable.length);
      expect(listed, 'the first the app may use, by agent_id').to.deep.equal(usable.slice(0, listed.length));
      expect(answer!.agents[0]).to.deep.equal({
        agent_id: listed[0],
        name: bridge.directory.agents.get(listed[0]!)!.name,
        description,
      });
      await appClient.expectNothingBeforePong();

      // The HTTP directory, page after page: every agent once, in order, each page within the frame limit.
      const path = `/v1/organizations/${org.org_id}/agents`;
      const paged: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const res = await bridge.http('GET', after ? `${path}?after=${after}` : path, {
          token: app.token,
          schema: 'AgentDirectory',
        });
        expect(res.status).to.equal(200);
        expect(Buffer.byteLength(JSON.stringify(res.body)), `page ${pages}`).to.be.at.most(LIMITS.frameMaxBytes);
        paged.push(...res.body.agents.map((a: { id: string }) => a.id));
        after = res.body.next_after;
        pages++;
      } while (after);
      expect(paged).to.deep.equal(everyId);
      expect(pages).to.be.within(8, 12);

      // Where discover stopped, the directory goes on (W13): its next usable agent is the first discover left out.
      const rest = await bridge.http('GET', `${path}?after=${listed[listed.length - 1]}`, {
        token: app.token,
        schema: 'AgentDirectory',
      });
      expect(rest.body.agents.find((a: { allowlisted: boolean }) => a.allowlisted).id).to.equal(usable[listed.length]);
      appClient.close();
    });

    it('lists an organization that fits one frame whole, without incomplete', async function () {
      const bridge = await startTestBridge();
      const org = await bridge.org('Small');
      const app = await bridge.app(org.org_id);
      for (let i = 0; i < 3; i++) await bridge.agent(org.org_id, `Agent ${i}`, { description: 'Short.' });
      const appClient = await bridge.connectApp(app.token);
      appClient.send({ type: 'discover' });
      const answer = await appClient.expect('agents');
      expect(answer).to.have.all.keys('type', 'agents');
      expect(answer.agents).to.have.length(3);
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
        next_after: null,
      });

      agentClient.close();
      const offline = await waitForStatus(bridge, w.org.org_id, w.app.token, w.theirs.agent_id, 'offline');
      expect(offline.agents.map((a: { status: string }) => a.status)).to.deep.equal([
        'offline',
        'offline',
        'offline',
        'offline',
      ]);

      // The other app of the organization sees the same agents with its own `allowlisted`.
      const other = await bridge.http('GET', path, { token: w.otherApp.token, schema: 'AgentDirectory' });
      expect(other.body).to.deep.equal({
        agents: [
          entry(w.open, 'offline', true),
          entry(w.mine, 'offline', false),
          entry(w.theirs, 'offline', true),
          entry(w.wide, 'offline', true),
        ].sort(byId('id')),
        next_after: null,
      });
    });

    it('pages with limit and after, in id order, next_after the last id of a page and null on the last; 400 for a limit or cursor out of range', async function () {
      const bridge = await startTestBridge();
      const w = await world(bridge);
      const path = `/v1/organizations/${w.org.org_id}/agents`;
      const ids = [w.open, w.mine, w.theirs, w.wide].map((a) => a.agent_id).sort();
      const page = async (query: string) =>
        (await bridge.http('GET', `${path}?${query}`, { token: w.app.token, schema: 'AgentDirectory' })).body;

      const first = await page('limit=3');
      expect(first.agents.map((a: { id: string }) => a.id)).to.deep.equal(ids.slice(0, 3));
      expect(first.next_after).to.equal(ids[2]);
      expect(await page(`limit=3&after=${first.next_after}`))
        .to.deep.include({ next_after: null })
        .and.have.nested.property('agents[0].id', ids[3]);
      expect(
        (await page(`after=${ids[1]}`)).agents.map((a: { id: string }) => a.id),
        'the default limit',
      ).to.deep.equal(ids.slice(2));
      expect(await page('limit=4')).to.have.property('next_after', null);
      expect(await page(`after=${ids[3]}`)).to.deep.equal({ agents: [], next_after: null });

      for (const query of ['limit=0', 'limit=1001', 'limit=x', 'after=NOT_AN_ID']) {
        const res = await bridge.http('GET', `${path}?${query}`, { token: w.app.token });
        expect(res.status, query).to.equal(400);
        expect(res.body.code, query).to.equal('INVALID_REQUEST');
      }
      const foreign = await bridge.http('GET', `/v1/organizations/${w.elsewhere.org_id}/agents?limit=0`, {
        token: w.app.token,
      });
      expect(foreign.status, 'another organization: 403 before any parameter is judged').to.equal(403);
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
