// The cancel extension over real WebSockets (S1-S7): the ?cancel=1 handshake on the agent endpoint, an app's cancel
// in the middle of a stream, what the app, the agent, the event log and /metrics then show. Frames are the raw
// protocol (no SDK): the server alone is proved here.
import { expect } from 'chai';
import { startTestBridge } from '../helpers/bridge.js';
import { eventually } from '../helpers/eventually.js';
import { startEvent } from '../helpers/events.js';
import { sample, scrape } from '../helpers/metrics.js';
import { TestClient } from '../helpers/ws-client.js';

describe('cancel over WebSockets (S1-S7)', function () {
  async function setup(agentOptsIn: boolean) {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    const agentClient = await TestClient.connect(bridge.url, 'agent', agent.token, 'header', agent.token, {
      cancel: agentOptsIn,
    });
    await bridge.untilAgentOnline(agent.agent_id, true);
    const appClient = await bridge.connectApp(app.token);
    return { bridge, app, agent, agentClient, appClient };
  }

  for (const agentOptsIn of [true, false]) {
    it(`stops a stream of 1,000 fragments after 100 (agent ${agentOptsIn ? 'with' : 'without'} ?cancel=1)`, async function () {
      const { bridge, agent, agentClient, appClient } = await setup(agentOptsIn);
      const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
      for (let i = 0; i < 100; i++) agentClient.send({ type: 'token', event_id, token: `${i} ` });
      for (let i = 0; i < 100; i++) expect(await appClient.expect('token')).to.include({ token: `${i} ` });
      appClient.send({ type: 'cancel', event_id });
      expect(await appClient.expect('error')).to.deep.equal({
        type: 'error',
        event_id,
        agent_id: agent.agent_id,
        error: `Event ${event_id} was cancelled by the app.`,
        code: 'CANCELLED',
      });
      if (agentOptsIn) expect(await agentClient.expect('cancel')).to.deep.equal({ type: 'cancel', event_id });
      // The agent goes on regardless: nothing reaches the app, and the agent is told nothing.
      for (let i = 100; i < 1000; i++) agentClient.send({ type: 'token', event_id, token: `${i} ` });
      agentClient.send({ type: 'reply', event_id, content: '', done: true });
      await agentClient.expectNothingBeforePong();
      await appClient.expectNothingBeforePong();

      const metrics = await scrape(bridge.url);
      expect(sample(metrics, 'bridge_events_in_flight')).to.equal(0);
      expect(sample(metrics, 'bridge_events_total', { status: 'delivered', outcome: 'cancelled' })).to.equal(1);
      expect(sample(metrics, 'bridge_cancels_total', { outcome: 'cancelled' })).to.equal(1);
      expect(sample(metrics, 'bridge_cancelled_events_remembered'), 'forgotten after its reply').to.equal(0);
      expect(sample(metrics, 'bridge_tokens_forwarded_total')).to.equal(100);
      const row = await eventually(
        'the event log row',
        async () => (await bridge.http('GET', '/admin/v1/events', { schema: 'EventLog' })).body.events[0],
        (e) => e?.outcome !== 'pending',
      );
      expect(row).to.include({ event_id, outcome: 'cancelled', code: 'CANCELLED' });
    });
  }

  it('answers CANCEL_REFUSED for an event not in flight for the connection, and the event goes on', async function () {
    const { bridge, app, agent, agentClient, appClient } = await setup(true);
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
    const other = await bridge.connectApp(app.token);
    other.send({ type: 'cancel', event_id });
    expect(await other.expect('error')).to.deep.equal({
      type: 'error',
      event_id,
      error: `Event ${event_id} cannot be cancelled: it is not in flight for this app.`,
      code: 'CANCEL_REFUSED',
    });
    agentClient.send({ type: 'reply', event_id, content: 'still here', done: true });
    expect(await appClient.expect('reply')).to.include({ reply: 'still here' });
    await agentClient.expectNothingBeforePong(); // no cancel reached the agent
    expect(sample(await scrape(bridge.url), 'bridge_cancels_total', { outcome: 'refused' })).to.equal(1);
  });

  it('ignores ?cancel=1 on the app endpoint', async function () {
    const { bridge, app, agent, agentClient } = await setup(true);
    const appClient = await TestClient.connect(bridge.url, 'app', app.token, 'header', app.token, { cancel: true });
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
    agentClient.send({ type: 'reply', event_id, content: 'ok', done: true });
    expect(await appClient.expect('reply')).to.include({ reply: 'ok' });
  });
});
