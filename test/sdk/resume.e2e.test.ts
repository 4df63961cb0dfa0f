// The app client's resumable streams against a real bridge (startTestBridge, frozen clock) through a TCP proxy that
// resets the app's connection in the middle of a long stream from a real agent connection: what the caller reads
// must be the agent's fragments exactly, once each, in order, and equal the reply. The client runs on the bridge's
// clock, so its reconnect backoff passes when the test moves it.
import { once } from 'node:events';
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import {
  ConnectionLostError,
  StreamGapError,
  connectApp,
  type AppClient,
  type AppClientOptions,
} from '../../src/sdk/app-client.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { nodesOnRedis } from '../helpers/cluster-nodes.js';
import { describePostgres } from '../helpers/databases.js';
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
  const client = await connectApp({
    url: `${proxy.url.replace(/^http/, 'ws').replace(/\/$/, '')}/v1`,
    token: app.token,
    clock: bridge.clock,
    random: () => 0,
    ...options,
  });
  clients.push(client);
  return { agent, agentClient, client };
}

/** Resets the app's connection through the proxy and lets the client's backoff pass; resolves once it is back. */
async function blip(
  clock: AdjustableClock,
  proxy: TcpProxy,
  client: AppClient,
  options: { halfOpen?: boolean; whileAway?: () => unknown } = {},
): Promise<void> {
  const reconnecting = once(client, 'reconnecting') as Promise<[{ delayMs: number }]>;
  proxy.reset(options);
  const [{ delayMs }] = await reconnecting;
  await options.whileAway?.();
  const connected = once(client, 'connected');
  clock.advance(delayMs);
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

/** Resumes taken by these bridge nodes together (each is counted by the event's home node). */
const resumesTaken = (nodes: TestBridge[]) =>
  nodes.reduce((sum, node) => sum + node.bridge.resumeStats().resumes.resumed, 0);

/**
 * The proof of R9: an event whose 730 fragments come from a real agent connection while the app's connection is cut
 * six times (reset or half-open, each time after the app has read part of what came and with more on its way, the
 * agent streaming on while the app is away, the last time with the reply too). What the caller reads must be the
 * agent's fragments exactly and equal the reply. `beforeCut` may send the reconnect elsewhere (another node).
 */
async function cutSixTimes(o: {
  nodes: TestBridge[];
  proxy: TcpProxy;
  clock: AdjustableClock;
  beforeCut?: (cut: number) => void;
}) {
  const [home] = o.nodes;
  const { agent, agentClient, client } = await provision(home!, o.proxy, { clock: o.clock });
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
  const readAtCut: [read: number, sent: number][] = [];
  /** Streams until the app has read some of what came since the last cut, then more, which the cut interrupts. */
  const streamInto = async () => {
    const before = reader.got.length;
    stream(50);
    await eventually(
      'fragments read',
      () => reader.got.length,
      (n) => n > before,
    );
    stream(50);
    readAtCut.push([reader.got.length, sent.length]);
  };
  let disconnects = 0;
  client.on('disconnected', () => disconnects++);
  for (let cut = 1; cut <= 5; cut++) {
    await streamInto();
    o.beforeCut?.(cut);
    await blip(o.clock, o.proxy, client, { halfOpen: cut % 2 === 0, whileAway: () => stream(20) });
    // So that the next cut interrupts a resumed stream.
    await eventually(
      'resumes taken',
      () => resumesTaken(o.nodes),
      (n) => n >= cut,
    );
  }
  // The last cut: the agent finishes while the app is away, so the reply goes into the dead connection.
  await streamInto();
  o.beforeCut?.(6);
  await blip(o.clock, o.proxy, client, {
    whileAway: () => {
      stream(30);
      agentClient.send({ type: 'reply', event_id, content: '', done: true });
    },
  });

  const reply = await handle.reply;
  expect(await reader.done).to.equal(undefined);
  expect(disconnects).to.equal(6);
  for (const [read, total] of readAtCut)
    expect(read, 'each cut in the middle of the stream').to.be.within(1, total - 1);
  expect(sent).to.have.length(730);
  expect(reader.got.length, 'no fragment missing or repeated').to.equal(sent.length);
  expect(reader.got).to.deep.equal(sent);
  expect(reader.got.join('')).to.equal(reply.reply);
  expect(resumesTaken(o.nodes)).to.equal(6);
}

describe('app client: resumable streams against a real bridge', function () {
  afterEach(async function () {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await closeTcpProxies();
  });

  it('reads a long stream cut six times, half-open or reset, whole: every fragment once, in order, equal to the reply', async function () {
    const bridge = await startTestBridge();
    await cutSixTimes({ nodes: [bridge], proxy: await startTcpProxy(bridge.url), clock: bridge.clock });
    expect(bridge.bridge.resumeStats().resumes).to.include({ gap: 0, refused: 0 });
  });

  it('ends the event with StreamGapError when it is back after the resume window of an event that ended', async function () {
    const bridge = await startTestBridge();
    const proxy = await startTcpProxy(bridge.url);
    const away = LIMITS.resumeWindowMs + 1000;
    const { agent, agentClient, client } = await provision(bridge, proxy, {
      reconnect: { baseDelayMs: away, maxDelayMs: away },
    });
    const handle = client.send({ agentId: agent.agent_id, threadId: 'late', payload: {} });
    const { event_id } = await handle.accepted;
    await agentClient.expect('event');
    agentClient.send({ type: 'token', event_id, token: 'first ' });
    const reader = reading(handle.tokens);
    await blip(bridge.clock, proxy, client, {
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
    await blip(bridge.clock, proxy, client);
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

describePostgres('app client: resumable streams on two nodes (R8)', function (db) {
  afterEach(async function () {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await closeTcpProxies();
  });
  const node = nodesOnRedis(db); // its afterEach, registered after the one above, stops the nodes once the clients are gone

  it('reads a long stream whole when its reconnects land on the other node and back, as a load balancer may send them', async function () {
    const [home, other] = [await node('n1'), await node('n2')];
    const proxy = await startTcpProxy(home.url);
    // The client's own clock: moving it runs the backoff and leaves the nodes' clocks where they are.
    const clock = new AdjustableClock({ frozen: true, start: home.clock.now() });
    const beforeCut = (cut: number) => {
      // After an even cut the app came back on the other node; the odd cuts take it home again.
      if (cut > 1) expect(other.bridge.stats().apps, `the app's connection on n2 before cut ${cut}`).to.equal(cut % 2);
      proxy.retarget((cut % 2 === 0 ? other : home).url);
    };
    await cutSixTimes({ nodes: [home, other], proxy, clock, beforeCut });
    expect(other.bridge.resumeStats().resumes, 'judged by the home node').to.include({
      resumed: 0,
      gap: 0,
      refused: 0,
    });
  });
});
