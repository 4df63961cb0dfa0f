// The hostile-input campaign against a real bridge with small limits (L13-L16): the worst single client gets the
// spec'd error, the bridge keeps serving, and other clients' events keep flowing; /metrics counts what each bound did.
import type { Socket } from 'node:net';
import { expect } from 'chai';
import { CLOSE_CODES, LIMITS } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { sample, scrape } from '../helpers/metrics.js';
import type { AgentClient, AppClient } from '../helpers/ws-client.js';

const socketOf = (client: { ws: unknown }) => (client.ws as { _socket: Socket })._socket;

/** The answer to each of `count` events sent at once: `accepted` or the error's code. */
async function answers(appClient: AppClient, count: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const message = await appClient.waitForMessage(10_000);
    out.push(message.type === 'error' ? message.code : message.type);
  }
  return out;
}

/** An event from `appClient` to `agentId`, accepted and delivered; its event id. */
async function delivered(
  appClient: AppClient,
  agentClient: AgentClient,
  agentId: string,
  payload: object = {},
): Promise<string> {
  appClient.send({ type: 'event', agent_id: agentId, thread_id: 't', payload });
  const { event_id } = await appClient.expect('accepted');
  expect((await agentClient.expect('event')).event_id).to.equal(event_id);
  return event_id;
}

async function stillServing(
  bridge: TestBridge,
  appClient: AppClient,
  agentClient: AgentClient,
  agentId: string,
): Promise<void> {
  expect((await fetch(new URL('/healthz', bridge.url))).status).to.equal(200);
  const eventId = await delivered(appClient, agentClient, agentId);
  agentClient.send({ type: 'token', event_id: eventId, token: 'still ' });
  agentClient.send({ type: 'reply', event_id: eventId, content: '', done: true });
  expect((await appClient.expect('token')).token).to.equal('still ');
  expect((await appClient.expect('reply')).reply).to.equal('still ');
}

describe('bounds against hostile clients (L13-L16)', function () {
  it('refuses an app over MAX_EVENTS_IN_FLIGHT_PER_APP with TOO_MANY_EVENTS, in order, at an agent that reads and never replies', async function () {
    const bridge = await startTestBridge({ maxEventsInFlightPerApp: 5 });
    const { org, agent, appClient: hostile, agentClient } = await bridge.pair();
    const other = await bridge.connectApp((await bridge.app(org.org_id, 'Other')).token);
    const payload = { text: 'x'.repeat(60_000) };
    for (let i = 0; i < 50; i++) hostile.send({ type: 'event', agent_id: agent.agent_id, thread_id: `t${i}`, payload });
    expect(await answers(hostile, 50)).to.deep.equal([
      ...Array(5).fill('accepted'),
      ...Array(45).fill('TOO_MANY_EVENTS'),
    ]);
    for (let i = 0; i < 5; i++) await agentClient.expect('event'); // and nothing more: the agent reads only the accepted ones

    await stillServing(bridge, other, agentClient, agent.agent_id);
    expect(bridge.bridge.stats().eventsInFlight).to.equal(5);
    const metrics = await scrape(bridge.url);
    expect(sample(metrics, 'bridge_events_refused_total', { limit: 'app' })).to.equal(45);
    expect(sample(metrics, 'bridge_events_refused_total', { limit: 'agent' })).to.equal(0);
    const log = await bridge.http('GET', '/admin/v1/events?code=TOO_MANY_EVENTS&limit=100', { schema: 'EventLog' });
    expect(log.body.events).to.have.length(45);
    expect(log.body.events[0]).to.include({ status: 'rejected', outcome: 'rejected', code: 'TOO_MANY_EVENTS' });
  });

  it('refuses events for an agent over MAX_EVENTS_IN_FLIGHT_PER_AGENT from every app, while another agent keeps serving', async function () {
    const bridge = await startTestBridge({ maxEventsInFlightPerAgent: 5 });
    const { org, agent, appClient } = await bridge.pair();
    const second = await bridge.connectApp((await bridge.app(org.org_id, 'Second')).token);
    const otherAgent = await bridge.agent(org.org_id, 'Other Agent');
    const otherAgentClient = await bridge.connectAgent(otherAgent.token);
    await bridge.untilAgentOnline(otherAgent.agent_id, true);
    for (let i = 0; i < 3; i++)
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    expect(await answers(appClient, 3)).to.deep.equal(['accepted', 'accepted', 'accepted']);
    for (let i = 0; i < 3; i++) second.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    expect(await answers(second, 3)).to.deep.equal(['accepted', 'accepted', 'TOO_MANY_EVENTS']);

    await stillServing(bridge, second, otherAgentClient, otherAgent.agent_id);
    expect(sample(await scrape(bridge.url), 'bridge_events_refused_total', { limit: 'agent' })).to.equal(1);
  });

  it('ends an empty-content reply after a stream over STREAMED_TEXT_MAX_BYTES with REPLY_TOO_LARGE; with content the reply goes out', async function () {
    const bridge = await startTestBridge({ streamedTextMaxBytes: 10_000 });
    const { agent, appClient, agentClient } = await bridge.pair();
    const fragment = 'f'.repeat(1000);
    const stream = async (eventId: string) => {
      for (let i = 0; i < 20; i++) agentClient.send({ type: 'token', event_id: eventId, token: fragment });
      for (let i = 0; i < 20; i++) expect((await appClient.expect('token')).token).to.equal(fragment); // every fragment still reaches the app
    };

    const empty = await delivered(appClient, agentClient, agent.agent_id);
    await stream(empty);
    agentClient.send({ type: 'reply', event_id: empty, content: '', done: true });
    expect(await agentClient.expect('error')).to.include({ code: 'REPLY_TOO_LARGE', event_id: empty });
    expect(await appClient.expect('error')).to.include({
      code: 'REPLY_TOO_LARGE',
      event_id: empty,
      agent_id: agent.agent_id,
    });

    const withContent = await delivered(appClient, agentClient, agent.agent_id);
    await stream(withContent);
    agentClient.send({ type: 'reply', event_id: withContent, content: 'the whole answer', done: true });
    expect((await appClient.expect('reply')).reply).to.equal('the whole answer');

    const metrics = await scrape(bridge.url);
    expect(sample(metrics, 'bridge_streamed_text_discarded_total', { reason: 'event_limit' })).to.equal(2);
    expect(sample(metrics, 'bridge_replies_refused_total', { reason: 'text_not_kept' })).to.equal(1);
    expect(sample(metrics, 'bridge_streamed_text_bytes')).to.equal(0);
    const log = await bridge.http('GET', '/admin/v1/events?code=REPLY_TOO_LARGE', { schema: 'EventLog' });
    expect(log.body.events.map((e: any) => [e.event_id, e.outcome])).to.deep.equal([[empty, 'agent_error']]);
  });

  it('stops keeping the text of an app closed as a slow consumer, and ends its events quietly when the agent replies', async function () {
    const bridge = await startTestBridge({ sendBufferMaxBytes: LIMITS.frameMaxBytes });
    const { org, agent, appClient: slow, agentClient } = await bridge.pair();
    const other = await bridge.connectApp((await bridge.app(org.org_id, 'Other')).token);
    const answering = await delivered(slow, agentClient, agent.agent_id);
    const flooding = await delivered(slow, agentClient, agent.agent_id);
    for (let i = 0; i < 5; i++)
      agentClient.send({ type: 'token', event_id: answering, token: `word${i} `.repeat(100) });
    for (let i = 0; i < 5; i++) await slow.expect('token');
    expect(bridge.bridge.streamedTextBytes()).to.equal(4096);

    socketOf(slow).pause();
    const fragment = 'x'.repeat(4000);
    for (let i = 0; i < 8000; i++) agentClient.send({ type: 'token', event_id: flooding, token: fragment }); // 32 MB
    socketOf(slow).resume();
    expect(await slow.waitForClose(10_000)).to.deep.equal({ code: CLOSE_CODES.SLOW_CONSUMER, reason: 'SLOW_CONSUMER' });

    await stillServing(bridge, other, agentClient, agent.agent_id); // also proves the 8000 fragments were all handled
    for (let i = 0; i < 100; i++) agentClient.send({ type: 'token', event_id: answering, token: 'nobody reads this ' });
    await agentClient.expectNothingBeforePong();
    expect(bridge.bridge.streamedTextBytes()).to.equal(0);
    agentClient.send({ type: 'reply', event_id: answering, content: '', done: true });
    agentClient.send({ type: 'reply', event_id: flooding, content: '', done: true });
    await agentClient.expectNothingBeforePong(); // the agent did nothing wrong: no error for it
    expect(bridge.bridge.stats().eventsInFlight).to.equal(0);
    const metrics = await scrape(bridge.url);
    // The flooding event's text may have crossed streamedTextMaxBytes before the close (kernel buffers decide).
    const appGone = sample(metrics, 'bridge_streamed_text_discarded_total', { reason: 'app_gone' })!;
    expect(appGone).to.be.within(1, 2);
    expect(appGone + sample(metrics, 'bridge_streamed_text_discarded_total', { reason: 'event_limit' })!).to.equal(2);
    expect(sample(metrics, 'bridge_replies_refused_total', { reason: 'text_not_kept' })).to.equal(0);
  });

  it('refuses a reply that cannot fit one frame at the agent, with REPLY_TOO_LARGE to the app that read every token, never SLOW_CONSUMER', async function () {
    const bridge = await startTestBridge();
    const { agent, appClient, agentClient } = await bridge.pair();

    // Content over replyContentMaxBytes (the agent's own frame is still under frameMaxBytes).
    const big = await delivered(appClient, agentClient, agent.agent_id);
    agentClient.send({
      type: 'reply',
      event_id: big,
      content: 'c'.repeat(LIMITS.replyContentMaxBytes + 1),
      done: true,
    });
    expect(await agentClient.expect('error')).to.include({ code: 'REPLY_TOO_LARGE', event_id: big });
    expect(await appClient.expect('error')).to.include({ code: 'REPLY_TOO_LARGE', event_id: big });

    // 9 MB streamed and read, then an empty content: the reply frame alone would be over SEND_BUFFER_MAX_BYTES.
    const streamed = await delivered(appClient, agentClient, agent.agent_id);
    const fragment = 's'.repeat(4000);
    for (let i = 0; i < 2250; i++) agentClient.send({ type: 'token', event_id: streamed, token: fragment });
    for (let i = 0; i < 2250; i++) await appClient.expect('token', 10_000);
    agentClient.send({ type: 'reply', event_id: streamed, content: '', done: true });
    expect(await agentClient.expect('error')).to.include({ code: 'REPLY_TOO_LARGE', event_id: streamed });
    expect(await appClient.expect('error')).to.include({ code: 'REPLY_TOO_LARGE', event_id: streamed });
    expect(appClient.isClosed).to.equal(false);
    await stillServing(bridge, appClient, agentClient, agent.agent_id);
  });

  it('delivers the largest reply (streamed text at its bound, largest payload) to an app that reads, with the smallest send buffer', async function () {
    const bridge = await startTestBridge({ sendBufferMaxBytes: LIMITS.frameMaxBytes });
    const { agent, appClient, agentClient } = await bridge.pair();
    const payload = { d: 'p'.repeat(LIMITS.payloadMaxBytes - '{"d":""}'.length) };
    const eventId = await delivered(appClient, agentClient, agent.agent_id, payload);
    const fragment = 'r'.repeat(4000);
    const count = LIMITS.streamedTextMaxBytes / fragment.length; // 244 fragments, exactly the bound
    for (let i = 0; i < count; i++) agentClient.send({ type: 'token', event_id: eventId, token: fragment });
    for (let i = 0; i < count; i++) await appClient.expect('token', 10_000);
    agentClient.send({ type: 'reply', event_id: eventId, content: '', done: true });
    const reply = await appClient.expect('reply', 10_000);
    expect(reply.reply).to.have.length(LIMITS.streamedTextMaxBytes);
    expect(reply.payload).to.deep.equal(payload);
    expect(Buffer.byteLength(JSON.stringify(reply)))
      .to.be.greaterThan(LIMITS.frameMaxBytes - 10_000)
      .and.at.most(LIMITS.frameMaxBytes);
  });
});
