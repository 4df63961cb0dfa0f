// The campaign's attacks on memory through one app token, against a real bridge with small bounds: connections that
// never read, fed by the app's own agent (L19), and connections that each send all but the end of a frame (L20). The
// bridge closes the connection holding the most with the spec'd error, counts it, and an app of another
// organization goes on as if nothing happened.
import type { Socket } from 'node:net';
import { expect } from 'chai';
import { CLOSE_CODES, LIMITS } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { eventually } from '../helpers/eventually.js';
import { sample, scrape } from '../helpers/metrics.js';
import type { AgentClient, AppClient, TestClient } from '../helpers/ws-client.js';

const socketOf = (client: TestClient<any>) => (client.ws as unknown as { _socket: Socket })._socket;
const MiB = 2 ** 20;

/** Two organizations: the hostile app with its own agent, and a canary app with its agent. */
async function twoOrgs(bridge: TestBridge) {
  const hostile = await bridge.pair();
  const canary = await bridge.pair();
  return { hostile, canary };
}

/** An accepted event's id, sent by `app` to `agentId`, seen by the agent. */
async function accepted(app: AppClient, agent: AgentClient, agentId: string): Promise<string> {
  app.send({ type: 'event', agent_id: agentId, thread_id: 't', payload: {} });
  const { event_id } = await app.expect('accepted');
  await agent.expect('event');
  return event_id;
}

/** Sends while the agent's own socket keeps up, yielding to the event loop so that the bridge reads and writes. */
async function stream(agent: AgentClient, frames: () => object | undefined): Promise<void> {
  for (let frame = frames(); frame; frame = frames()) {
    agent.send(frame);
    while (agent.ws.bufferedAmount > 4 * MiB) await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('memory through one app token (L19, L20)', function () {
  it("closes the app's unread connection holding the most with SLOW_CONSUMER once its connections together hold SEND_BUFFER_PER_APP_MAX_BYTES; the canary gets every fragment", async function () {
    this.timeout(60_000);
    const bridge = await startTestBridge({ sendBufferMaxBytes: 2 * MiB, sendBufferPerAppMaxBytes: 3 * MiB });
    const { hostile, canary } = await twoOrgs(bridge);
    const unread = [
      hostile.appClient,
      ...(await Promise.all([1, 2, 3].map(() => bridge.connectApp(hostile.app.token)))),
    ];
    const events: string[] = [];
    for (const app of unread) events.push(await accepted(app, hostile.agentClient, hostile.agent.agent_id));
    const canaryEvent = await accepted(canary.appClient, canary.agentClient, canary.agent.agent_id);
    for (const app of unread) socketOf(app).pause(); // they never read again

    // 8 MB to each, in turn, well past the kernel's buffers; the canary's stream goes on meanwhile.
    const token = 'x'.repeat(4000);
    const rounds = 2000;
    let sent = 0;
    const canaryStream = stream(canary.agentClient, () =>
      sent < rounds ? { type: 'token', event_id: canaryEvent, token: `c${sent++} ` } : undefined,
    );
    let i = 0;
    await stream(hostile.agentClient, () =>
      i < rounds * events.length ? { type: 'token', event_id: events[i++ % events.length], token } : undefined,
    );
    await canaryStream;
    for (let n = 0; n < rounds; n++) expect((await canary.appClient.expect('token', 10_000)).token).to.equal(`c${n} `);

    const counters = bridge.bridge.limitCounters();
    expect(counters.slowConsumers.app, 'closed for the app bound').to.be.at.least(1);
    expect(bridge.bridge.sendBufferBytes(), 'what the bridge still holds').to.be.at.most(
      3 * MiB + LIMITS.frameMaxBytes,
    );
    const metrics = await scrape(bridge.url);
    expect(sample(metrics, 'bridge_slow_consumers_total', { bound: 'app' })).to.equal(counters.slowConsumers.app);

    // Reading again, the first one closed finds SLOW_CONSUMER after what had been queued, naming its app.
    for (const app of unread) socketOf(app).resume();
    const errors: string[] = [];
    for (const app of unread) {
      for (;;) {
        const message = await app.waitForMessage(10_000).catch(() => undefined);
        if (!message || message.type !== 'token') {
          if (message?.type === 'error') errors.push(`${message.code}: ${message.error}`);
          break;
        }
      }
    }
    expect(errors.length, errors.join('\n')).to.be.at.least(1);
    // A connection whose kernel buffers filled first may reach its own bound before the app's sum does.
    const byApp = errors.filter((e) =>
      e.startsWith(
        `SLOW_CONSUMER: More than ${3 * MiB} bytes were waiting for the connections of app ${hostile.app.app_id}`,
      ),
    );
    const byConnection = errors.filter((e) =>
      e.startsWith(`SLOW_CONSUMER: More than ${2 * MiB} bytes were waiting for this connection`),
    );
    expect(byApp.length + byConnection.length, errors.join('\n')).to.equal(errors.length);
    canary.agentClient.send({ type: 'reply', event_id: canaryEvent, content: 'done', done: true });
    expect((await canary.appClient.expect('reply')).reply).to.equal('done');
  });

  it("closes the app's connection holding the most of its messages sent in part with INCOMPLETE_MESSAGE (4413); the canary sends on", async function () {
    const bridge = await startTestBridge({ partialMessagesPerAppMaxBytes: LIMITS.frameMaxBytes });
    const { hostile, canary } = await twoOrgs(bridge);
    const senders = [
      hostile.appClient,
      await bridge.connectApp(hostile.app.token),
      await bridge.connectApp(hostile.app.token),
    ];
    // A text frame of 600,000 bytes (masked, as from a client), of which they send 480,000, 520,000, then 50,000: the
    // last, read at once, takes the app's sum over its bound, and the second holds the most.
    const header = Buffer.from([0x81, 0x80 | 127, 0, 0, 0, 0, 0, 0x09, 0x27, 0xc0, 1, 2, 3, 4]);
    const parts = [480_000, 520_000, 50_000];
    for (const [n, client] of senders.entries()) {
      socketOf(client).write(Buffer.concat([header, Buffer.alloc(parts[n]!, 0x61)]));
      if (n < 2)
        await eventually(
          'the bridge has read it',
          () => bridge.bridge.partialMessageBytes(),
          (held) => held >= parts.slice(0, n + 1).reduce((a, b) => a + b),
        );
    }
    const error = await senders[1]!.expect('error', 5000);
    expect(error.code).to.equal('INCOMPLETE_MESSAGE');
    expect(error.error).to.match(
      new RegExp(
        `^The connections of app ${hostile.app.app_id} hold \\d+ bytes of messages started and not yet whole, over the limit of ${LIMITS.frameMaxBytes}, and this connection held the most of them\\.$`,
      ),
    );
    expect(await senders[1]!.waitForClose()).to.deep.equal({
      code: CLOSE_CODES.INCOMPLETE_MESSAGE,
      reason: 'INCOMPLETE_MESSAGE',
    });
    expect(bridge.bridge.limitCounters().incompleteMessages).to.deep.equal({ app: 1, agent: 0, total: 0, timeout: 0 });
    expect(sample(await scrape(bridge.url), 'bridge_incomplete_messages_total', { bound: 'app' })).to.equal(1);

    const event = await accepted(canary.appClient, canary.agentClient, canary.agent.agent_id);
    canary.agentClient.send({ type: 'reply', event_id: event, content: 'fine', done: true });
    expect((await canary.appClient.expect('reply')).reply).to.equal('fine');
  });

  it('gives a message PARTIAL_MESSAGE_TIMEOUT_MS from its first byte, on the bridge clock, then INCOMPLETE_MESSAGE', async function () {
    // No pings: the client's automatic pong would land in the middle of the frame this test writes by hand.
    const bridge = await startTestBridge({ wsPingAfterMs: 0 });
    const { hostile, canary } = await twoOrgs(bridge);
    // A 1000-byte text frame, all but its last byte.
    const header = Buffer.from([0x81, 0x80 | 126, 0x03, 0xe8, 1, 2, 3, 4]);
    socketOf(hostile.appClient).write(Buffer.concat([header, Buffer.alloc(999, 0x61)]));
    await eventually(
      'the bridge has read it',
      () => bridge.bridge.partialMessageBytes(),
      (held) => held > 999,
    );

    bridge.clock.advance(LIMITS.partialMessageTimeoutMs - 1);
    await canary.appClient.expectNothingBeforePong();
    expect(hostile.appClient.isClosed).to.equal(false);
    bridge.clock.advance(1);
    const error = await hostile.appClient.expect('error');
    expect(error).to.include({
      code: 'INCOMPLETE_MESSAGE',
      error:
        'A message was started 30 s ago and has not arrived whole; every message must arrive within 30 s of its first byte.',
    });
    expect(await hostile.appClient.waitForClose()).to.deep.equal({
      code: CLOSE_CODES.INCOMPLETE_MESSAGE,
      reason: 'INCOMPLETE_MESSAGE',
    });
    expect(bridge.bridge.limitCounters().incompleteMessages.timeout).to.equal(1);
    await eventually(
      'what it held is let go with its socket',
      () => bridge.bridge.partialMessageBytes(),
      (held) => held === 0,
    );
    await canary.appClient.expectNothingBeforePong();
  });
});
