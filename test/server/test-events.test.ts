// POST /admin/v1/test-events (D9): an event sent as an instance of the app, over a connection the bridge opens
// inside itself, and what that instance receives streamed back as server-sent events until the reply or error.
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { postEventStream } from '../helpers/sse.js';
import { TestClient } from '../helpers/ws-client.js';

const send = (bridge: TestBridge, body: object) => postEventStream(bridge.url, '/admin/v1/test-events', body);

async function untilAppConnections(bridge: TestBridge, count: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (bridge.bridge.stats().apps === count) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`the bridge holds ${bridge.bridge.stats().apps} app connections, not ${count}`);
}

async function loggedEvent(bridge: TestBridge, agentId: string) {
  const res = await bridge.http('GET', `/admin/v1/events?agent_id=${agentId}`, { schema: 'EventLog' });
  return res.body.events;
}

describe('test events (POST /admin/v1/test-events)', function () {
  it('streams accepted, each token and the reply from a real agent, as an instance of the app counted while it lasts', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    const agentClient = await bridge.connectAgent(agent.token);

    const stream = await send(bridge, {
      app_id: app.app_id,
      agent_id: agent.agent_id,
      payload: { text: 'What is 2 + 2?' },
    });
    expect(stream.status).to.equal(200);
    expect(stream.headers.get('content-type')).to.match(/^text\/event-stream/);
    expect(stream.headers.get('cache-control')).to.equal('no-cache');
    const accepted = await stream.next();
    expect(accepted).to.deep.include({ event: 'accepted' });
    const delivered = await agentClient.expect('event');
    expect(delivered).to.include({
      app_id: app.app_id,
      thread_id: 'dashboard-test',
      event_id: (accepted!.data as { event_id: string }).event_id,
    });
    expect(delivered.payload).to.deep.equal({ text: 'What is 2 + 2?' });
    // Counted as one of the app's connections while the stream lasts.
    expect(bridge.bridge.stats()).to.include({ apps: 1, eventsInFlight: 1 });
    const live = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/live`, { schema: 'OrganizationLive' });
    expect(live.body.apps[0]).to.include({ instances: 1 });

    agentClient.send({ type: 'token', event_id: delivered.event_id, token: 'Fo' });
    agentClient.send({ type: 'token', event_id: delivered.event_id, token: 'ur.' });
    agentClient.send({ type: 'reply', event_id: delivered.event_id, content: '', done: true });
    const rest = await stream.rest();
    expect(rest.map((e) => e.event)).to.deep.equal(['token', 'token', 'reply']);
    expect(rest[2]!.data).to.include({ type: 'reply', reply: 'Four.', event_id: delivered.event_id });
    await untilAppConnections(bridge, 0); // closed once the reply was streamed
    const [logged] = await loggedEvent(bridge, agent.agent_id);
    expect(logged).to.include({
      event_id: delivered.event_id,
      app_id: app.app_id,
      thread_id: 'dashboard-test',
      outcome: 'replied',
    });
    const audit = await bridge.http('GET', '/admin/v1/audit?limit=1', { schema: 'AuditLog' });
    expect(audit.body.entries[0]).to.deep.include({
      action: 'test_event.send',
      target: agent.agent_id,
      actor: { kind: 'admin_token', session: null },
    });
    expect(audit.body.entries[0]!.detail).to.deep.equal({ app_id: app.app_id, thread_id: 'dashboard-test' });
  });

  it('ends with AGENT_TIMEOUT when the agent never answers, the instance pinging meanwhile as an app does', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    const agentClient = await bridge.connectAgent(agent.token);
    const stream = await send(bridge, {
      app_id: app.app_id,
      agent_id: agent.agent_id,
      thread_id: 'my-thread',
      payload: {},
    });
    const accepted = await stream.next();
    expect((await agentClient.expect('event')).thread_id).to.equal('my-thread');
    // Far past idleCloseMs: only its own heartbeat keeps the instance from HEARTBEAT_TIMEOUT.
    expect(LIMITS.agentTimeoutMs).to.be.above(LIMITS.idleCloseMs);
    await bridge.advanceWithHeartbeats(LIMITS.agentTimeoutMs, [agentClient]);
    const rest = await stream.rest();
    expect(rest).to.have.length(1);
    expect(rest[0]!.data).to.include({
      type: 'error',
      code: 'AGENT_TIMEOUT',
      event_id: (accepted!.data as { event_id: string }).event_id,
    });
    await untilAppConnections(bridge, 0);
  });

  it('cancels the event when the request is closed (the Stop button, S2), then closes the instance', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    const agentClient = await TestClient.connect(bridge.url, 'agent', agent.token, 'header', agent.token, {
      cancel: true,
    });
    await bridge.untilAgentOnline(agent.agent_id, true);
    const stream = await send(bridge, { app_id: app.app_id, agent_id: agent.agent_id, payload: {} });
    await stream.next();
    const delivered = await agentClient.expect('event');
    stream.abort();
    expect(await agentClient.expect('cancel')).to.deep.equal({ type: 'cancel', event_id: delivered.event_id });
    await untilAppConnections(bridge, 0);
    agentClient.send({ type: 'reply', event_id: delivered.event_id, content: 'too late', done: true });
    await agentClient.expectNothingBeforePong(); // dropped without a word (S4)
    const [logged] = await loggedEvent(bridge, agent.agent_id);
    expect(logged).to.include({ event_id: delivered.event_id, outcome: 'cancelled', code: 'CANCELLED' });
  });

  it('streams the refusal when the app has all the connections it may have, and nothing else', async function () {
    const bridge = await startTestBridge({ maxConnectionsPerApp: 1 });
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    await bridge.connectApp(app.token);
    const stream = await send(bridge, { app_id: app.app_id, agent_id: agent.agent_id, payload: {} });
    const events = await stream.rest();
    expect(events).to.have.length(1);
    expect(events[0]!.data).to.include({ type: 'error', code: 'TOO_MANY_CONNECTIONS' });
    expect(bridge.bridge.stats().apps).to.equal(1);
  });

  it('streams what a real app would get for an agent that is offline: AGENT_OFFLINE', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    const events = await (await send(bridge, { app_id: app.app_id, agent_id: agent.agent_id, payload: {} })).rest();
    expect(events).to.have.length(1);
    expect(events[0]!.data).to.include({ type: 'error', code: 'AGENT_OFFLINE', agent_id: agent.agent_id });
  });

  it('refuses an unknown app or agent (NOT_FOUND), an app of another organization or deactivated, and a bad body (INVALID_REQUEST)', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    const other = await bridge.org('Other');
    const foreign = await bridge.app(other.org_id, 'Foreign');
    const gone = await bridge.app(org.org_id, 'Gone');
    await bridge.http('POST', `/admin/v1/apps/${gone.app_id}/deactivate`);
    const post = (body: object) => bridge.http('POST', '/admin/v1/test-events', { body });
    expect((await post({ app_id: 'no-app', agent_id: agent.agent_id, payload: {} })).body).to.deep.equal({
      code: 'NOT_FOUND',
      error: 'App no-app does not exist.',
    });
    expect((await post({ app_id: app.app_id, agent_id: 'no-agent', payload: {} })).body).to.deep.equal({
      code: 'NOT_FOUND',
      error: 'Agent no-agent does not exist.',
    });
    const wrongOrg = await post({ app_id: foreign.app_id, agent_id: agent.agent_id, payload: {} });
    expect(wrongOrg.status).to.equal(400);
    expect(wrongOrg.body).to.deep.equal({
      code: 'INVALID_REQUEST',
      error: `Not apps of organization ${org.org_id}: ${foreign.app_id}.`,
    });
    const deactivated = await post({ app_id: gone.app_id, agent_id: agent.agent_id, payload: {} });
    expect(deactivated.status).to.equal(400);
    expect(deactivated.body).to.deep.equal({
      code: 'INVALID_REQUEST',
      error: `App ${gone.app_id} is deactivated; it cannot send events.`,
    });
    const bad = await post({ app_id: app.app_id, agent_id: agent.agent_id, payload: 'text' });
    expect(bad.status).to.equal(400);
    expect(bad.body).to.include({ code: 'INVALID_REQUEST' });
    expect(bridge.bridge.stats().apps).to.equal(0);
  });
});
