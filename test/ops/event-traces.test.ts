// Each event's life as spans exported over OTLP (O17, issue 33), on one node: the event, its delivery, the wait for
// its first fragment and the stream, in one trace, with ids and times but nothing of the payload or the tokens.
import { expect } from 'chai';
import { startTestBridge, stopAll } from '../helpers/bridge.js';
import { startEvent, TIMED_EVENT_SECRETS, timedEvent } from '../helpers/events.js';
import { eventually } from '../helpers/eventually.js';
import { capturedLog } from '../helpers/log.js';
import { sample, scrape } from '../helpers/metrics.js';
import { startOtlpReceiver, tracingTo, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';

describe('event traces (OTLP)', function () {
  let receiver: OtlpReceiver;
  beforeEach(async () => void (receiver = await startOtlpReceiver()));
  afterEach(async () => {
    await stopAll();
    await receiver.close();
  });

  const ofEvent = (eventId: string) => receiver.spans.filter((s) => s.attributes['bridge.event_id'] === eventId);

  it('exports the event, its delivery, the wait for its first fragment and the stream, in one trace under the event', async function () {
    const bridge = await startTestBridge({ nodeId: 'n1', tracing: tracingTo(receiver.url) });
    const { app, agent, appClient, agentClient } = await bridge.pair();
    const event_id = await timedEvent(bridge.clock, appClient, agentClient, agent.agent_id);

    const spans = await eventually(
      'four spans',
      () => ofEvent(event_id),
      (s) => s.length === 4,
    );
    const byName = Object.fromEntries(spans.map((s) => [s.name, s])) as Record<string, ReceivedSpan>;
    const root = byName['bridge.event']!;
    expect(root.parentSpanId).to.equal(undefined);
    expect(root.attributes).to.include({
      'bridge.app_id': app.app_id,
      'bridge.agent_id': agent.agent_id,
      'bridge.outcome': 'replied',
      'bridge.node': 'n1',
    });
    expect(root.endMs - root.startMs).to.equal(100);
    for (const name of ['bridge.deliver', 'bridge.first_fragment', 'bridge.stream']) {
      expect(byName[name], name).to.include({ traceId: root.traceId, parentSpanId: root.spanId, instance: 'n1' });
    }
    expect(byName['bridge.first_fragment']!.endMs - byName['bridge.first_fragment']!.startMs).to.equal(40);
    expect(byName['bridge.stream']!.endMs - byName['bridge.stream']!.startMs).to.equal(60);
    const text = JSON.stringify(receiver.spans);
    for (const secret of [...TIMED_EVENT_SECRETS, app.token, agent.token]) expect(text).not.to.include(secret);
  });

  it('marks an event that ended in error with its code, and counts what it exported', async function () {
    const bridge = await startTestBridge({ tracing: tracingTo(receiver.url) });
    const { agent, appClient, agentClient } = await bridge.pair();
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
    agentClient.send({ type: 'error', event_id, error: 'down', code: 'AGENT_ERROR' });
    await appClient.expect('error');
    const spans = await eventually(
      'two spans',
      () => ofEvent(event_id),
      (s) => s.length === 2,
    );
    const root = spans.find((s) => s.name === 'bridge.event')!;
    expect(root.attributes).to.include({ 'bridge.outcome': 'agent_error', 'bridge.error_code': 'AGENT_ERROR' });
    expect(root.status).to.equal(2); // ERROR
    const exported = await eventually(
      'the count',
      async () => sample(await scrape(bridge.url), 'bridge_trace_spans_total', { result: 'exported' }),
      (n) => n === 2,
    );
    expect(exported).to.equal(2);
  });

  it('traces no event with a ratio of 0: nothing exported, nothing sent on', async function () {
    const bridge = await startTestBridge({ tracing: tracingTo(receiver.url, { sampler: 'traceidratio', ratio: 0 }) });
    const { agent, appClient, agentClient } = await bridge.pair();
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
    agentClient.send({ type: 'reply', event_id, content: 'ok', done: true });
    await appClient.expect('reply');
    await bridge.close();
    expect(receiver.spans).to.deep.equal([]);
  });

  it('holds at most OTEL_BSP_MAX_QUEUE_SIZE spans for a slow collector: drops the others at once, counts and logs them', async function () {
    const { log, lines } = capturedLog('warn');
    const bridge = await startTestBridge({ tracing: tracingTo(receiver.url, { maxQueueSize: 1 }) }, { log });
    const { agent, appClient, agentClient } = await bridge.pair();
    receiver.stall();
    for (let i = 0; i < 3; i++) {
      const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
      agentClient.send({ type: 'reply', event_id, content: 'ok', done: true });
      await appClient.expect('reply');
    }
    // Three events of two spans each: the first span held (its export waits for the collector), five dropped.
    const metrics = await scrape(bridge.url);
    expect(sample(metrics, 'bridge_trace_spans_total', { result: 'dropped' })).to.equal(5);
    expect(lines().filter((l) => l.dropped)).to.have.length.of.at.least(1);
    expect(lines()[0]).to.include({
      msg: 'tracing: 1 spans dropped: OTEL_BSP_MAX_QUEUE_SIZE spans were waiting for the collector',
      max: 1,
    });
    receiver.answer();
    await eventually(
      'the held span exported',
      () => receiver.spans.length,
      (n) => n === 1,
    );
  });
});
