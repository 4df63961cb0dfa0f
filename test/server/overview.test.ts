// GET /admin/v1/overview (D8): a node's numbers now and its samples, one every overviewSampleMs on the bridge's
// clock; the numbers move as apps and agents connect and events flow, and agree with /metrics.
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import { ADMIN_TOKEN, startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { startEvent } from '../helpers/events.js';
import { sample, scrape } from '../helpers/metrics.js';
import type { AgentClient, AppClient } from '../helpers/ws-client.js';

const SAMPLE = LIMITS.overviewSampleMs;

async function overview(bridge: TestBridge, query = '') {
  const res = await bridge.http('GET', `/admin/v1/overview${query}`, { schema: 'Overview' });
  expect(res.status).to.equal(200);
  return res.body;
}

/** One event replied with `tokens` fragments. */
async function replied(appClient: AppClient, agentClient: AgentClient, agentId: string, tokens: string[]) {
  const { event_id } = await startEvent(appClient, agentClient, agentId);
  for (const token of tokens) {
    agentClient.send({ type: 'token', event_id, token });
    await appClient.expect('token');
  }
  agentClient.send({ type: 'reply', event_id, content: '', done: true });
  return appClient.expect('reply');
}

describe('the overview (GET /admin/v1/overview)', function () {
  it("shows the node's connections and events now, and a sample each interval counting what happened in it, as /metrics counts it", async function () {
    const bridge = await startTestBridge({ nodeId: 'solo' });
    const empty = await overview(bridge);
    expect(empty).to.deep.include({
      at: bridge.clock.now(),
      sample_ms: SAMPLE,
      window_ms: LIMITS.overviewWindowMs,
      missing_nodes: [],
    });
    expect(empty.nodes).to.deep.equal([
      {
        node_id: 'solo',
        now: { app_connections: 0, agent_connections: 0, apps_online: 0, agents_online: 0, events_in_flight: 0 },
        samples: [],
      },
    ]);

    const { agent, appClient, agentClient, app } = await bridge.pair();
    const second = await bridge.connectApp(app.token); // a second instance of the same app
    const first = await replied(appClient, agentClient, agent.agent_id, ['a', 'b', 'c']);
    appClient.send({ type: 'event', agent_id: 'nobody-here', thread_id: 't', payload: {} });
    expect(await appClient.expect('error')).to.include({ code: 'AGENT_NOT_FOUND' });
    second.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    await second.expect('accepted'); // left in flight

    const now = (await overview(bridge)).nodes[0].now;
    expect(now).to.deep.equal({
      app_connections: 2,
      agent_connections: 1,
      apps_online: 1,
      agents_online: 1,
      events_in_flight: 1,
    });
    expect((await overview(bridge)).nodes[0].samples).to.deep.equal([]); // no interval has ended yet

    bridge.clock.advance(SAMPLE);
    const [taken] = (await overview(bridge)).nodes[0].samples;
    expect(taken).to.deep.equal({
      at: bridge.clock.now(),
      app_connections: 2,
      agent_connections: 1,
      events_in_flight: 1,
      accepted: 2,
      rejected: 1,
      fragments: 3,
      replied: 1,
      errors: { AGENT_NOT_FOUND: 1 },
      latency_p50_ms: first.metadata.latency_ms,
      latency_p99_ms: first.metadata.latency_ms,
    });
    const metrics = await scrape(bridge.url);
    expect(sample(metrics, 'bridge_connections', { kind: 'app' })).to.equal(now.app_connections);
    expect(sample(metrics, 'bridge_connections', { kind: 'agent' })).to.equal(now.agent_connections);
    expect(sample(metrics, 'bridge_events_in_flight')).to.equal(now.events_in_flight);
    expect(sample(metrics, 'bridge_tokens_forwarded_total')).to.equal(taken.fragments);
    expect(sample(metrics, 'bridge_events_total', { status: 'rejected', outcome: 'rejected' })).to.equal(
      taken.rejected,
    );
    expect(sample(metrics, 'bridge_events_total', { status: 'delivered', outcome: 'replied' })).to.equal(taken.replied);

    second.close();
    await second.waitForClose();
    for (let i = 0; i < 200 && bridge.bridge.stats().apps > 1; i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    bridge.clock.advance(SAMPLE);
    const later = await overview(bridge, `?after=${taken.at}`);
    expect(later.nodes[0].samples).to.deep.equal([
      {
        at: taken.at + SAMPLE,
        app_connections: 1,
        agent_connections: 1,
        events_in_flight: 1,
        accepted: 0,
        rejected: 0,
        fragments: 0,
        replied: 0,
        errors: {},
        latency_p50_ms: null,
        latency_p99_ms: null,
      },
    ]);
    expect(later.nodes[0].now).to.include({ app_connections: 1, apps_online: 1 });
  });

  it('refuses an `after` that is not epoch milliseconds with INVALID_REQUEST', async function () {
    const bridge = await startTestBridge();
    for (const after of ['soon', '-1', '1.5', '9007199254740992']) {
      const res = await bridge.http('GET', `/admin/v1/overview?after=${after}`);
      expect(res.status, after).to.equal(400);
      expect(res.body).to.include({ code: 'INVALID_REQUEST' });
    }
  });

  it('names a bridge of one node without NODE_ID all the same, with one id for its whole life', async function () {
    const bridge = await startTestBridge(); // NODE_ID unset, as by default
    const [node] = (await overview(bridge)).nodes;
    expect(node.node_id).to.match(/^[a-z0-9]{1,16}$/);
    expect((await overview(bridge)).nodes[0].node_id).to.equal(node.node_id);
  });

  it('keeps an hour of samples, under 200 KB as JSON, and sends only the newer ones with `after` (what one poll costs, D8)', async function () {
    const bridge = await startTestBridge();
    bridge.clock.advance(LIMITS.overviewWindowMs + 3 * SAMPLE);
    const read = async (query: string) =>
      (
        await fetch(new URL(`/admin/v1/overview${query}`, bridge.url), {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        })
      ).text();
    const full = await read('');
    const { nodes } = JSON.parse(full);
    expect(nodes[0].samples).to.have.length(LIMITS.overviewWindowMs / SAMPLE);
    const newest = nodes[0].samples.at(-1).at;
    bridge.clock.advance(SAMPLE);
    const polled = await read(`?after=${newest}`);
    expect(JSON.parse(polled).nodes[0].samples).to.have.length(1);
    expect(Buffer.byteLength(full)).to.be.below(200_000);
    expect(Buffer.byteLength(polled)).to.be.below(1_000);
  });
});
