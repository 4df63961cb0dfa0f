// The app client against a real bridge (startTestBridge: port 0, in-memory store, frozen clock) with a test agent
// on the other side. The client runs on the bridge's clock, so nothing here depends on real time passing.
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import {
  BridgeError,
  ConnectionLostError,
  connectApp,
  type AppClient,
  type AppClientOptions,
} from '../../src/sdk/app-client.js';
import { rejection } from '../helpers/rejection.js';

const clients: AppClient[] = [];

function baseUrl(bridge: TestBridge): string {
  return `${bridge.url.replace(/^http/, 'ws')}/v1`;
}

async function appClient(
  bridge: TestBridge,
  token: string,
  options: Partial<AppClientOptions> = {},
): Promise<AppClient> {
  const client = await connectApp({
    url: baseUrl(bridge),
    token,
    clock: bridge.clock,
    reconnect: { enabled: false },
    ...options,
  });
  clients.push(client);
  return client;
}

/** An organization with one app (connected through the SDK) and one agent (connected as a test client). */
async function provision(bridge: TestBridge) {
  const org = await bridge.org();
  const app = await bridge.app(org.org_id);
  const agent = await bridge.agent(org.org_id, 'Tutor', { description: 'Explains things' });
  const agentClient = await bridge.connectAgent(agent.token);
  const client = await appClient(bridge, app.token);
  return { org, app, agent, agentClient, client };
}

describe('app client against a real bridge', function () {
  afterEach(async function () {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  it('sends an event, streams the tokens in order and ends with the reply', async function () {
    const bridge = await startTestBridge();
    const { app, agent, agentClient, client } = await provision(bridge);
    const payload = { kind: 'question', text: 'What is a prime?', nested: { ü: ['✓', 1, null] } };
    const handle = client.send({ agentId: agent.agent_id, threadId: 'lesson-42', payload });

    const accepted = await handle.accepted;
    expect(accepted.session_key).to.equal(`svc:${agent.agent_id}:${app.app_id}:lesson-42`);
    const delivered = await agentClient.expect('event');
    expect(delivered).to.include({ event_id: accepted.event_id, app_id: app.app_id, thread_id: 'lesson-42' });
    expect(delivered.payload).to.deep.equal(payload);

    const received: string[] = [];
    const streaming = (async () => {
      for await (const fragment of handle.tokens) received.push(fragment);
    })();
    const fragments = ['A prime ', 'has exactly ', 'two divisors.'];
    for (const token of fragments) agentClient.send({ type: 'token', event_id: accepted.event_id, token });
    agentClient.send({ type: 'reply', event_id: accepted.event_id, content: '', done: true });

    await streaming;
    expect(received).to.deep.equal(fragments);
    expect(await handle.text()).to.equal(fragments.join(''));
    const reply = await handle.reply;
    expect(reply).to.include({ event_id: accepted.event_id, agent_id: agent.agent_id, thread_id: 'lesson-42' });
    expect(reply.payload).to.deep.equal(payload);
    expect(reply.metadata).to.include({ tokens_used: fragments.length, session_key: accepted.session_key });
  });

  it('discovers the agents the app may use', async function () {
    const bridge = await startTestBridge();
    const { agent, client } = await provision(bridge);
    expect(await client.discover()).to.deep.equal([
      { agent_id: agent.agent_id, name: 'Tutor', description: 'Explains things' },
    ]);
  });

  it('pairs the answers of a mixed burst by order', async function () {
    const bridge = await startTestBridge();
    const { agent, client } = await provision(bridge);
    const handles = [
      client.send({ agentId: agent.agent_id, threadId: 'a', payload: {} }),
      client.send({ agentId: 'Not_Valid', threadId: 'b', payload: {} }),
      client.send({ agentId: 'no-such-agent', threadId: 'c', payload: {} }),
      client.send({ agentId: agent.agent_id, threadId: '', payload: {} }),
      client.send({ agentId: agent.agent_id, threadId: 'e', payload: {} }),
    ];
    const outcomes = await Promise.all(
      handles.map((h) =>
        h.accepted.then(
          (a) => a.session_key.split(':').at(-1),
          (e: BridgeError) => e.code,
        ),
      ),
    );
    expect(outcomes).to.deep.equal(['a', 'INVALID_AGENT_ID', 'AGENT_NOT_FOUND', 'INVALID_THREAD_ID', 'e']);
    for (const h of handles.slice(1, 4)) expect((await rejection(h.reply)).eventId).to.be.a('string').that.is.not.empty;
  });

  it('rejects a payload over payloadMaxBytes with PAYLOAD_TOO_LARGE and the event id', async function () {
    const bridge = await startTestBridge();
    const { agent, client, agentClient } = await provision(bridge);
    const wrapper = JSON.stringify({ text: '' }).length;
    const handle = client.send({
      agentId: agent.agent_id,
      threadId: 't',
      payload: { text: 'x'.repeat(LIMITS.payloadMaxBytes - wrapper + 1) },
    });
    const err = await rejection(handle.reply);
    expect(err.code).to.equal('PAYLOAD_TOO_LARGE');
    expect(err.eventId).to.be.a('string').that.is.not.empty;
    expect(err.agentId).to.equal(agent.agent_id);
    expect((await rejection(handle.accepted)).code).to.equal('PAYLOAD_TOO_LARGE');
    await agentClient.expectNothingBeforePong();
  });

  it('rejects with AGENT_OFFLINE when the agent is not connected', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    const client = await appClient(bridge, app.token);
    const handle = client.send({ agentId: agent.agent_id, threadId: 't', payload: {} });
    const err = await rejection(handle.text());
    expect(err.code).to.equal('AGENT_OFFLINE');
    expect(err.eventId).to.be.a('string').that.is.not.empty;
  });

  it('rejects with RATE_LIMIT_EXCEEDED and retryAfterSeconds over the rate limit', async function () {
    const bridge = await startTestBridge({
      rateLimitPerSecond: LIMITS.rateLimitEventsPerSecond,
      rateLimitBurst: LIMITS.rateLimitBurst,
    });
    const { agent, client } = await provision(bridge);
    const handles = Array.from({ length: LIMITS.rateLimitBurst + 1 }, (_, i) =>
      client.send({ agentId: agent.agent_id, threadId: `t${i}`, payload: {} }),
    );
    await Promise.all(handles.slice(0, -1).map((h) => h.accepted));
    const err = await rejection(handles.at(-1)!.reply);
    expect(err.code).to.equal('RATE_LIMIT_EXCEEDED');
    expect(err.retryAfterSeconds)
      .to.be.greaterThan(0)
      .and.at.most(1 / LIMITS.rateLimitEventsPerSecond + 0.001);
  });

  it('refuses a wrong token with UNAUTHORIZED and an agent token with FORBIDDEN', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    const wrong = app.token.slice(0, -1) + (app.token.endsWith('A') ? 'B' : 'A');
    for (const carrier of ['header', 'query'] as const) {
      const err = await rejection(connectApp({ url: baseUrl(bridge), token: wrong, carrier, clock: bridge.clock }));
      expect(err.code, carrier).to.equal('UNAUTHORIZED');
      expect(err.closeCode).to.equal(4401);
    }
    const forbidden = await rejection(connectApp({ url: baseUrl(bridge), token: agent.token, clock: bridge.clock }));
    expect(forbidden.code).to.equal('FORBIDDEN');
    expect(bridge.bridge.stats().apps).to.equal(0);
  });

  it('connects with the token in the query', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const client = await appClient(bridge, app.token, { carrier: 'query' });
    expect(await client.discover()).to.deep.equal([]);
  });

  it('ends the events in flight with ConnectionLostError when the app is deactivated, and closes for good', async function () {
    const bridge = await startTestBridge();
    const { app, agent, agentClient } = await provision(bridge);
    const client = await appClient(bridge, app.token, { reconnect: { enabled: true } });
    const closed = new Promise<{ code: number; reason: string }>((resolve) => client.once('closed', resolve));
    const handle = client.send({ agentId: agent.agent_id, threadId: 't', payload: {} });
    await handle.accepted;
    await agentClient.expect('event');

    const res = await bridge.http('POST', `/admin/v1/apps/${app.app_id}/deactivate`);
    expect(res.status).to.equal(200);
    const err = await rejection(handle.reply);
    expect(err).to.be.instanceOf(ConnectionLostError);
    expect((err as ConnectionLostError).reason).to.equal('TOKEN_REVOKED');
    expect(await closed).to.deep.equal({ code: 4410, reason: 'TOKEN_REVOKED' });
    expect(client.state).to.equal('closed');
  });
});
