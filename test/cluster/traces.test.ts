// One event's trace across two nodes (O17, issue 33): the app on one node, the agent on another. The agent's node
// continues the trace from the `traceparent` the event's home sent with it on the bus, so the four spans are one
// trace under the home's event span, each exported by the node that made it.
import { expect } from 'chai';
import { describePostgres } from '../helpers/databases.js';
import { nodesOnRedis } from '../helpers/cluster-nodes.js';
import { eventually } from '../helpers/eventually.js';
import { startOtlpReceiver, tracingTo, type OtlpReceiver } from '../helpers/otlp-receiver.js';

describePostgres('an event traced across two nodes', function (db) {
  const node = nodesOnRedis(db);
  let receiver: OtlpReceiver;
  beforeEach(async () => void (receiver = await startOtlpReceiver()));
  afterEach(async () => receiver.close());

  it("has its delivery span on the agent's node, child of the event span of its home, beside the home's two", async function () {
    const n1 = await node('n1', { tracing: tracingTo(receiver.url) });
    const n2 = await node('n2', { tracing: tracingTo(receiver.url) });
    const org = await n1.org();
    const app = await n1.app(org.org_id);
    const agent = await n1.agent(org.org_id);
    const agentClient = await n2.connectAgent(agent.token);
    const appClient = await n1.connectApp(app.token);
    await eventually(
      'the agent online on n1',
      async () => (await n1.http('GET', `/admin/v1/agents/${agent.agent_id}`)).body.online,
      Boolean,
    );

    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    const { event_id } = await appClient.expect('accepted');
    await agentClient.expect('event');
    agentClient.send({ type: 'token', event_id, token: 'A' });
    await appClient.expect('token');
    agentClient.send({ type: 'reply', event_id, content: 'A', done: true });
    await appClient.expect('reply');

    const spans = await eventually(
      'four spans',
      () => receiver.spans.filter((s) => s.attributes['bridge.event_id'] === event_id),
      (s) => s.length === 4,
    );
    const root = spans.find((s) => s.name === 'bridge.event')!;
    expect(root).to.include({ parentSpanId: undefined, instance: 'n1' });
    const children = spans.filter((s) => s !== root).map((s) => [s.name, s.instance, s.traceId, s.parentSpanId]);
    expect(children).to.have.deep.members([
      ['bridge.deliver', 'n2', root.traceId, root.spanId],
      ['bridge.first_fragment', 'n1', root.traceId, root.spanId],
      ['bridge.stream', 'n1', root.traceId, root.spanId],
    ]);
  });
});
