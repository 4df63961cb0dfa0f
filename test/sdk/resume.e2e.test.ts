// The app client's resumable streams against a real bridge (startTestBridge, frozen clock) through a TCP proxy that
// resets the app's connection in the middle of a long stream from a real agent connection: what the caller reads
// must be the agent's fragments exactly, once each, in order, and equal the reply. The client runs on the bridge's
// clock, so its reconnect backoff passes when the test moves it.
import { once } from 'node:events';
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import { ConnectionLostError, StreamGapError, connectApp, type AppClient, type AppClientOptions } from '../../src/sdk/app-client.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { eventually } from '../helpers/eventually.js';
import { rejection } from '../helpers/rejection.js';
import { closeTcpProxies, startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const clients: AppClient[] = [];

/** An app (through the proxy, by the SDK) and an agent (directly, as a raw test client) of one organization. */
async function provision(bridge: TestBridge, proxy: TcpProxy, options: Partial<AppClientOptions> = {}) {
  const org = await bridge.org();
  const app = await bridge.app(org.org_id);
  const agent = await bridge.agent(org.org_id);
  const agentClient = await bridge.connectAgent(agent.token);
  const client = await connectApp({ url: `${proxy.url.replace(/^http/, 'ws').replace(/\/$/, '')}/v1`, token: app.token, clock: bridge.clock, random: () => 0, ...options });
  clients.push(client);
  return { agent, agentClient, client };
}

/** Resets the app's connection through the proxy and lets the client's backoff pass; resolves once it is back. */
async function blip(bridge: TestBridge, proxy: TcpProxy, client: AppClient, options: { halfOpen?: boolean; whileAway?: () => unknown } = {}): Promise<void> {
  const reconnecting = once(client, 'reconnecting') as Promise<[{ delayMs: number }]>;
  proxy.reset(options);
  const [{ delayMs }] = await reconnecting;
  await options.whileAway?.();
  const connected = once(client, 'connected');
  bridge.clock.advance(delayMs);
  await connected;
}

/** Reads a handle's fragments as a caller would, from the first to the end; `done` gives the error that ended them, if any. */
function reading(tokens: AsyncIterable<string>): { got: string[]; done: Promise<unknown> } {
  const got: string[] = [];
  const done = (async () => {
    for await (const t of tokens) got.push(t);
  })().then(
    () => undefined,
    (err: unknown) => err,
  );
  return { got, done };
}

/** Waits until the bridge has taken `n` resumes in all (the resume frame travels while the test goes on). */
const resumed = (bridge: TestBridge, n: number) => eventually('resumes taken', () => bridge.bridge.resumeStats().resumes.resumed, (count) => count >= n);

describe('app client: resumable streams against a real bridge', function () {
  afterEach(async function () {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await closeTcpProxies();
  });

  it('reads a long stream cut six times, half-open or reset, whole: every fragment once, in order, equal to the reply', async function () {
    const bridge = await startTestBridge();
    const proxy = await startTcpProxy(bridge.url);
    const { agent, agentClient, client } = await provision(bridge, proxy);
    const handle = client.send({ agentId: agent.agent_id, threadId: 'long', payload: { text: 'tell me everything' } });
    const { event_id } = await handle.accepted;
    expect((await agentClient.expect('event')).event_id).to.equal(event_id);
    const reader = reading(handle.tokens);

    const sent: string[] = [];
    const stream = (n: number) => {
      for (let i = 0; i < n; i++) {
        const fragment = `w${sent.length + 1} `;
        sent.push(fragment);
        agentClient.send({ type: 'token', event_id, token: fragment });
      }
    };
    /** Streams until the app has read some of what came since the last cut, then more, which the cut interrupts. */
    const streamInto = async () => {
      const before = reader.got.length;
      stream(50);
      await eventually('fragments read', () => reader.got.length, (n) => n > before);
      stream(50);
      readAtCut.push([reader.got.length, sent.length]);
    };
    const readAtCut: [read: number, sent: number][] = [];
    let disconnects = 0;
    client.on('disconnected', () => disconnects++);
    for (let cut = 1; cut <= 5; cut++) {
      await streamInto();
      await blip(bridge, proxy, client, { halfOpen: cut % 2 === 0, whileAway: () => stream(20) });
      await resumed(bridge, cut); // so that the next cut interrupts a resumed stream
    }
    // The last cut: the agent finishes while the app is away, so the reply goes into the dead connection.
    await streamInto();
    await blip(bridge, proxy, client, {
      whileAway: () => {
        stream(30);
        agentClient.send({ type: 'reply', event_id, content: '', done: true });
      },
    });

    const reply = await handle.reply;
    expect(await reader.done).to.equal(undefined);
    expect(disconnects).to.equal(6);
    for (const [read, total] of readAtCut) expect(read, 'each cut in the middle of the stream').to.be.within(1, total - 1);
    expect(sent).to.have.length(730);
    expect(reader.got.length, 'no fragment missing or repeated').to.equal(sent.length);
    expect(reader.got).to.deep.equal(sent);
    expect(reader.got.join('')).to.equal(reply.reply);
    expect(bridge.bridge.resumeStats().resumes).to.include({ resumed: 6, gap: 0, refused: 0 });
  });

  it('ends the event with StreamGapError when it is back after the resume window of an event that ended', async function () {
    const bridge = await startTestBridge();
    const proxy = await startTcpProxy(bridge.url);
    const away = LIMITS.resumeWindowMs + 1000;
    const { agent, agentClient, client } = await provision(bridge, proxy, { reconnect: { baseDelayMs: away, maxDelayMs: away } });
    const handle = client.send({ agentId: agent.agent_id, threadId: 'late', payload: {} });
    const { event_id } = await handle.accepted;
    await agentClient.expect('event');
    agentClient.send({ type: 'token', event_id, token: 'first ' });
    const reader = reading(handle.tokens);
    await blip(bridge, proxy, client, {
      whileAway: async () => {
        agentClient.send({ type: 'token', event_id, token: 'lost' });
        agentClient.send({ type: 'reply', event_id, content: '', done: true });
        await agentClient.expectNothingBeforePong(); // the bridge has taken the reply: the window runs from now
      },
    });
    const err = await rejection(handle.reply);
    expect(err).to.be.instanceOf(StreamGapError);
    expect(err).to.include({ code: 'RESUME_GAP', eventId: event_id });
    expect(await reader.done).to.equal(err);
    expect(reader.got).to.not.include('lost');
  });

  it('ends the event with ConnectionLostError on a cut with resume: false, and serves the next event on the new connection', async function () {
    const bridge = await startTestBridge();
    const proxy = await startTcpProxy(bridge.url);
    const { agent, agentClient, client } = await provision(bridge, proxy, { resume: false });
    const handle = client.send({ agentId: agent.agent_id, threadId: 'plain', payload: {} });
    const { event_id } = await handle.accepted;
    await agentClient.expect('event');
    await blip(bridge, proxy, client);
    expect(await rejection(handle.reply)).to.be.instanceOf(ConnectionLostError);
    agentClient.send({ type: 'reply', event_id, content: 'too late', done: true });

    const next = client.send({ agentId: agent.agent_id, threadId: 'plain', payload: {} });
    const accepted = await next.accepted;
    await agentClient.expect('event');
    agentClient.send({ type: 'reply', event_id: accepted.event_id, content: 'fine', done: true });
    expect(await next.text()).to.equal('fine');
    expect(bridge.bridge.resumeStats().resumes).to.include({ resumed: 0 });
  });
});
