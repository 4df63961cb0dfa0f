// §2.1 and W1/W12: who may open which endpoint, with which token carrier, and what a refused client sees.
import { expect } from 'chai';
import WebSocket from 'ws';
import {
  CLOSE_CODES,
  describeErrors,
  validateServiceToAgentMessage,
  validateServiceToAppMessage,
  type Validator,
} from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { startEvent } from '../helpers/events.js';
import { TestClient } from '../helpers/ws-client.js';

type Kind = 'app' | 'agent';
type Refusal = 'UNAUTHORIZED' | 'FORBIDDEN';

/** Clients this file opens outside bridge.connectApp/connectAgent; closed after each test. */
const extra: { close(): void }[] = [];

/** A client with an explicit query token and header token (TestClient's 'both' carrier). */
async function connectBoth(bridge: TestBridge, kind: Kind, queryToken: string, headerToken: string) {
  const client = await TestClient.connect(bridge.url, kind, queryToken, 'both', headerToken);
  extra.push(client);
  return client;
}

/** Proves a refused connection: exactly one `error` without event_id, then the code's close code with the code as reason. */
async function expectRefused(client: TestClient<any>, code: Refusal): Promise<string> {
  const error = await client.expect('error');
  expect(error.code).to.equal(code);
  expect(error).to.not.have.property('event_id');
  expect(error).to.not.have.property('agent_id');
  expect(error.error).to.be.a('string').and.not.empty;
  expect(await client.waitForClose()).to.deep.equal({ code: CLOSE_CODES[code], reason: code });
  let extraFrame: unknown;
  try {
    extraFrame = await client.waitForMessage(100);
  } catch {
    // closed with nothing else queued: the only outcome we want
  }
  expect(extraFrame, 'a second frame after the refusal').to.equal(undefined);
  return error.error as string;
}

/** A raw WebSocket with arbitrary headers; every frame it receives is still validated. */
function rawRefusal(bridge: TestBridge, kind: Kind, headers: Record<string, string>) {
  const ws = new WebSocket(`${bridge.url.replace(/^http/, 'ws')}/v1/ws/${kind}`, { headers });
  extra.push({ close: () => ws.terminate() });
  const validate = (kind === 'app' ? validateServiceToAppMessage : validateServiceToAgentMessage) as Validator<any>;
  const frames: any[] = [];
  return new Promise<{ frames: any[]; code: number; reason: string }>((resolve, reject) => {
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString());
      if (!validate(frame)) reject(new Error(`invalid frame ${data.toString()}: ${describeErrors(validate.errors)}`));
      frames.push(frame);
    });
    ws.on('close', (code, reason) => resolve({ frames, code, reason: reason.toString() }));
    ws.on('error', reject);
  });
}

/** Changes the last character of a token's secret: still well-formed, no longer the token. */
function wrongSecret(token: string): string {
  return token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
}

/** The same secret format for an owner id that was never registered. */
function unknownOwner(token: string, ownerId: string): string {
  return token.replace(ownerId, 'ghost-never-registered-zz9');
}

async function provision(bridge: TestBridge) {
  const org = await bridge.org();
  const app = await bridge.app(org.org_id);
  const agent = await bridge.agent(org.org_id);
  return { org, app, agent };
}

describe('handshake', function () {
  afterEach(function () {
    for (const c of extra.splice(0)) c.close();
  });

  for (const carrier of ['header', 'query'] as const) {
    it(`accepts an app token in the ${carrier} carrier: ping is answered and an event is accepted`, async function () {
      const bridge = await startTestBridge();
      const { app, agent } = await provision(bridge);
      const agentClient = await bridge.connectAgent(agent.token);
      const appClient = await bridge.connectApp(app.token, carrier);

      appClient.send({ type: 'ping' });
      await appClient.expect('pong');
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: { q: 1 } });
      const accepted = await appClient.expect('accepted');
      expect(accepted.agent_id).to.equal(agent.agent_id);
      expect((await agentClient.expect('event')).event_id).to.equal(accepted.event_id);
    });

    it(`accepts an agent token in the ${carrier} carrier: ping is answered and it receives and answers an event`, async function () {
      const bridge = await startTestBridge();
      const { app, agent } = await provision(bridge);
      const agentClient = await bridge.connectAgent(agent.token, carrier);
      const appClient = await bridge.connectApp(app.token);

      agentClient.send({ type: 'ping' });
      await agentClient.expect('pong');
      const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
      agentClient.send({ type: 'reply', event_id, content: 'done', done: true });
      expect(await appClient.expect('reply')).to.include({ event_id, reply: 'done' });
    });
  }

  it('uses the header token when both carriers are present (a wrong ?token= does not matter)', async function () {
    const bridge = await startTestBridge();
    const { app, agent } = await provision(bridge);
    const appClient = await connectBoth(bridge, 'app', wrongSecret(app.token), app.token);
    const agentClient = await connectBoth(bridge, 'agent', 'garbage', agent.token);
    await appClient.expectNothingBeforePong();
    await agentClient.expectNothingBeforePong();
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    await appClient.expect('accepted');
    await agentClient.expect('event');
  });

  it('refuses UNAUTHORIZED when the header token is wrong, even with a valid ?token=', async function () {
    const bridge = await startTestBridge();
    const { app, agent } = await provision(bridge);
    await expectRefused(await connectBoth(bridge, 'app', app.token, wrongSecret(app.token)), 'UNAUTHORIZED');
    await expectRefused(await connectBoth(bridge, 'agent', agent.token, wrongSecret(agent.token)), 'UNAUTHORIZED');
    expect(bridge.bridge.stats()).to.deep.equal({ apps: 0, agents: 0, eventsInFlight: 0 });
  });

  it('refuses an agent token on /v1/ws/app with FORBIDDEN', async function () {
    const bridge = await startTestBridge();
    const { agent } = await provision(bridge);
    for (const carrier of ['header', 'query'] as const) {
      await expectRefused(await bridge.connectApp(agent.token, carrier), 'FORBIDDEN');
    }
  });

  it('refuses an app token on /v1/ws/agent with FORBIDDEN', async function () {
    const bridge = await startTestBridge();
    const { app } = await provision(bridge);
    for (const carrier of ['header', 'query'] as const) {
      await expectRefused(await bridge.connectAgent(app.token, carrier), 'FORBIDDEN');
    }
  });

  for (const kind of ['app', 'agent'] as const) {
    it(`refuses UNAUTHORIZED on /v1/ws/${kind}: no token, garbage, wrong secret, unknown owner, Basic auth`, async function () {
      const bridge = await startTestBridge();
      const { app, agent } = await provision(bridge);
      const own = kind === 'app' ? { token: app.token, id: app.app_id } : { token: agent.token, id: agent.agent_id };
      const connect = (token: string | undefined, carrier?: 'header' | 'query' | 'none') =>
        kind === 'app' ? bridge.connectApp(token, carrier) : bridge.connectAgent(token, carrier);

      await expectRefused(await connect(undefined, 'none'), 'UNAUTHORIZED');
      await expectRefused(await connect('garbage-token'), 'UNAUTHORIZED');
      await expectRefused(await connect('garbage-token', 'query'), 'UNAUTHORIZED');
      await expectRefused(await connect(wrongSecret(own.token)), 'UNAUTHORIZED');
      await expectRefused(await connect(wrongSecret(own.token), 'query'), 'UNAUTHORIZED');
      await expectRefused(await connect(unknownOwner(own.token, own.id)), 'UNAUTHORIZED');

      const basic = await rawRefusal(bridge, kind, {
        authorization: `Basic ${Buffer.from(`user:${own.token}`).toString('base64')}`,
      });
      expect(basic.frames).to.have.length(1);
      expect(basic.frames[0]).to.include({ type: 'error', code: 'UNAUTHORIZED' });
      expect(basic.frames[0]).to.not.have.property('event_id');
      expect(basic).to.include({ code: CLOSE_CODES.UNAUTHORIZED, reason: 'UNAUTHORIZED' });
    });
  }

  it('never lets a refused connection into the bridge core', async function () {
    const bridge = await startTestBridge();
    const { app, agent } = await provision(bridge);
    await expectRefused(await bridge.connectApp(agent.token), 'FORBIDDEN');
    await expectRefused(await bridge.connectAgent(app.token), 'FORBIDDEN');
    await expectRefused(await bridge.connectApp(wrongSecret(app.token)), 'UNAUTHORIZED');
    await expectRefused(await bridge.connectAgent(wrongSecret(agent.token)), 'UNAUTHORIZED');
    await expectRefused(await bridge.connectApp(undefined, 'none'), 'UNAUTHORIZED');
    expect(bridge.bridge.stats()).to.deep.equal({ apps: 0, agents: 0, eventsInFlight: 0 });

    // The agent whose token was tried on the wrong endpoint did not come online.
    const appClient = await bridge.connectApp(app.token);
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    expect((await appClient.expect('error')).code).to.equal('AGENT_OFFLINE');
  });

  it('does not replace a live agent connection when its token is refused on /v1/ws/app', async function () {
    const bridge = await startTestBridge();
    const { agent, appClient, agentClient } = await bridge.pair();
    await expectRefused(await bridge.connectApp(agent.token), 'FORBIDDEN');
    await agentClient.expectNothingBeforePong();
    await startEvent(appClient, agentClient, agent.agent_id);
  });

  it('gives a wrong secret for a real app the same answer as a token for an app that does not exist', async function () {
    const bridge = await startTestBridge();
    const { app, agent } = await provision(bridge);
    const wrongApp = await expectRefused(await bridge.connectApp(wrongSecret(app.token)), 'UNAUTHORIZED');
    const ghostApp = await expectRefused(await bridge.connectApp(unknownOwner(app.token, app.app_id)), 'UNAUTHORIZED');
    expect(wrongApp).to.equal(ghostApp);
    const wrongAgent = await expectRefused(await bridge.connectAgent(wrongSecret(agent.token)), 'UNAUTHORIZED');
    const ghostAgent = await expectRefused(
      await bridge.connectAgent(unknownOwner(agent.token, agent.agent_id)),
      'UNAUTHORIZED',
    );
    expect(wrongAgent).to.equal(ghostAgent);
    expect(bridge.bridge.stats()).to.deep.equal({ apps: 0, agents: 0, eventsInFlight: 0 });
  });

  it('answers unknown WebSocket paths with HTTP 404 instead of upgrading', async function () {
    const bridge = await startTestBridge();
    const { app } = await provision(bridge);
    const base = bridge.url.replace(/^http/, 'ws');
    for (const path of ['/v1/ws/other', '/ws/app', '/ws/agent', '/v2/ws/app', '/v1/ws/app/extra']) {
      const status = await new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(`${base}${path}`, { headers: { authorization: `Bearer ${app.token}` } });
        ws.on('unexpected-response', (req, res) => {
          req.destroy();
          resolve(res.statusCode ?? 0);
        });
        ws.on('error', () => {}); // the aborted handshake, after the status was read
        ws.on('open', () => reject(new Error(`${path} was upgraded`)));
      });
      expect(status, path).to.equal(404);
    }
    expect(bridge.bridge.stats()).to.deep.equal({ apps: 0, agents: 0, eventsInFlight: 0 });
  });

  it('shows a token only once: the app and agent listings never contain it', async function () {
    const bridge = await startTestBridge();
    const { org, app, agent } = await provision(bridge);
    const secret = (token: string) => token.slice(token.lastIndexOf('_') + 1);
    const apps = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/apps`, { schema: 'AppList' });
    const agents = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/agents`, { schema: 'AgentList' });
    expect(apps.status).to.equal(200);
    expect(agents.status).to.equal(200);
    expect(apps.body.apps.map((a: { app_id: string }) => a.app_id)).to.deep.equal([app.app_id]);
    expect(agents.body.agents.map((a: { agent_id: string }) => a.agent_id)).to.deep.equal([agent.agent_id]);
    for (const listing of [JSON.stringify(apps.body), JSON.stringify(agents.body)]) {
      for (const token of [app.token, agent.token]) {
        expect(listing).to.not.include(token);
        expect(listing).to.not.include(secret(token));
      }
    }
  });
});
