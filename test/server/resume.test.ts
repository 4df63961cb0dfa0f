// Resumable streams over real WebSockets (R1-R7): the ?resume=1 handshake, a stream taken back on a new
// connection after the old one was cut, the bounds with small settings and /metrics. Frames are the raw protocol
// (no SDK): the server alone is proved here.
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import { startTestBridge } from '../helpers/bridge.js';
import { startEvent } from '../helpers/events.js';
import { sample, scrape } from '../helpers/metrics.js';
import { closeTcpProxies, startTcpProxy } from '../helpers/tcp-proxy.js';
import { TestClient, type AppClient } from '../helpers/ws-client.js';

/** The raw text of every frame a client receives from now on. */
function rawFrames(client: AppClient): string[] {
  const texts: string[] = [];
  client.ws.on('message', (data) => texts.push(data.toString()));
  return texts;
}

/** Every frame already received by a client whose connection is gone. */
async function drain(client: AppClient): Promise<any[]> {
  const frames: any[] = [];
  for (;;) {
    try {
      frames.push(await client.waitForMessage(2000));
    } catch {
      return frames;
    }
  }
}

describe('resumable streams over WebSockets (R1-R7)', function () {
  afterEach(closeTcpProxies);

  async function setup(overrides: Parameters<typeof startTestBridge>[0] = {}) {
    const bridge = await startTestBridge(overrides);
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    const agentClient = await bridge.connectAgent(agent.token);
    return { bridge, org, app, agent, agentClient };
  }

  it('sends a connection without ?resume=1 exactly the frames it got before the extension, and ignores ?resume=1 on the agent endpoint', async function () {
    const { bridge, app, agent } = await setup();
    // A second connection of the agent (it replaces the first), with ?resume=1: the agent endpoint ignores it.
    const agentClient = await TestClient.connect(bridge.url, 'agent', agent.token, 'header', agent.token, {
      resume: true,
    });
    await bridge.untilAgentOnline(agent.agent_id, true);
    const plain = await bridge.connectApp(app.token);
    const texts = rawFrames(plain);
    const accepted = await startEvent(plain, agentClient, agent.agent_id);
    agentClient.send({ type: 'token', event_id: accepted.event_id, token: 'Hello' });
    agentClient.send({ type: 'reply', event_id: accepted.event_id, content: '', done: true });
    await plain.expect('token');
    await plain.expect('reply');
    plain.send({ type: 'resume', event_id: accepted.event_id, resume_token: 'A'.repeat(43), after_seq: 0 });
    await plain.expect('error');
    const id = accepted.event_id;
    expect(texts.slice(0, 2)).to.deep.equal([
      `{"type":"accepted","event_id":"${id}","agent_id":"${agent.agent_id}","session_key":"${accepted.session_key}","status":"accepted"}`,
      `{"type":"token","event_id":"${id}","agent_id":"${agent.agent_id}","token":"Hello"}`,
    ]);
    expect(texts[2])
      .to.match(/^\{"type":"reply",/)
      .and.not.match(/seq|resume_token/);
    expect(texts[3]).to.equal(
      '{"type":"error","error":"Invalid resume: type: \\"resume\\" is not a message type of this endpoint.","code":"INVALID_MESSAGE"}',
    );
  });

  it('gives a stream cut mid-way back on a new connection: the missed fragments, the live ones, the reply', async function () {
    const { bridge, app, agent, agentClient } = await setup();
    const first = await bridge.connectResumableApp(app.token);
    const accepted = await startEvent(first, agentClient, agent.agent_id);
    expect(accepted.resume_token).to.match(/^[A-Za-z0-9_-]{43}$/);
    agentClient.send({ type: 'token', event_id: accepted.event_id, token: 'one ' });
    expect(await first.expect('token')).to.include({ token: 'one ', seq: 1 });
    first.ws.terminate();
    await first.waitForClose();
    agentClient.send({ type: 'token', event_id: accepted.event_id, token: 'two ' });
    await agentClient.expectNothingBeforePong(); // the bridge has read it
    const second = await bridge.connectResumableApp(app.token);
    second.send({ type: 'resume', event_id: accepted.event_id, resume_token: accepted.resume_token, after_seq: 1 });
    expect(await second.expect('token')).to.include({ token: 'two ', seq: 2 });
    agentClient.send({ type: 'token', event_id: accepted.event_id, token: 'three' });
    agentClient.send({ type: 'reply', event_id: accepted.event_id, content: '', done: true });
    expect(await second.expect('token')).to.include({ token: 'three', seq: 3 });
    expect((await second.expect('reply')).reply).to.equal('one two three');

    const metrics = await scrape(bridge.url);
    expect(sample(metrics, 'bridge_resumes_total', { outcome: 'resumed' })).to.equal(1);
    expect(sample(metrics, 'bridge_resumes_total', { outcome: 'gap' })).to.equal(0);
    expect(sample(metrics, 'bridge_resumes_total', { outcome: 'refused' })).to.equal(0);
    expect(sample(metrics, 'bridge_resume_events')).to.equal(1); // ended, kept for the window
    expect(sample(metrics, 'bridge_resume_buffer_bytes')).to.be.greaterThan('one two three'.length);
    for (const reason of ['event_limit', 'app_limit', 'node_limit'])
      expect(sample(metrics, 'bridge_resume_dropped_bytes_total', { reason })).to.equal(0);
  });

  it('forgets an ended event resumeWindowMs after its end on the bridge clock: RESUME_GAP', async function () {
    const { bridge, app, agent, agentClient } = await setup();
    const first = await bridge.connectResumableApp(app.token);
    const accepted = await startEvent(first, agentClient, agent.agent_id);
    first.ws.terminate();
    agentClient.send({ type: 'reply', event_id: accepted.event_id, content: 'done', done: true });
    await agentClient.expectNothingBeforePong();
    const second = await bridge.connectResumableApp(app.token);
    await bridge.advanceWithHeartbeats(60_000, [agentClient, second]);
    second.send({ type: 'resume', event_id: accepted.event_id, resume_token: accepted.resume_token, after_seq: 0 });
    expect(await second.expect('error')).to.include({ code: 'RESUME_GAP', event_id: accepted.event_id });
    expect(sample(await scrape(bridge.url), 'bridge_resume_events')).to.equal(0);
  });

  it('keeps one app within RESUME_BUFFER_PER_APP_MAX_BYTES and the node within RESUME_BUFFER_MAX_BYTES, counting what each dropped', async function () {
    // Over 1024 characters a fragment fills a batch of its own: each counts its JSON, its index and its buffer (R7).
    const fragment = 'x'.repeat(1100);
    const F = fragment.length + 2 + LIMITS.resumeFragmentIndexBytes + LIMITS.resumeBufferOverheadBytes;
    const { bridge, org, app, agent, agentClient } = await setup({
      resumeBufferPerAppMaxBytes: 20 * F,
      resumeBufferMaxBytes: 30 * F,
    });
    const other = await bridge.app(org.org_id, 'Other');
    const streams: { client: AppClient; accepted: any }[] = [];
    for (const token of [app.token, other.token]) {
      const client = await bridge.connectResumableApp(token);
      const accepted = await startEvent(client, agentClient, agent.agent_id);
      streams.push({ client, accepted });
      for (let i = 0; i < 25; i++) agentClient.send({ type: 'token', event_id: accepted.event_id, token: fragment });
      for (let i = 0; i < 25; i++) await client.expect('token');
    }
    const metrics = await scrape(bridge.url);
    expect(sample(metrics, 'bridge_resume_dropped_bytes_total', { reason: 'app_limit' })).to.equal(10 * F); // 5 of each app's 25
    expect(sample(metrics, 'bridge_resume_dropped_bytes_total', { reason: 'node_limit' })).to.equal(10 * F); // then 10 more for the node
    expect(sample(metrics, 'bridge_resume_buffer_bytes')).to.equal(30 * F);
    const [a] = streams;
    const again = await bridge.connectResumableApp(app.token);
    again.send({
      type: 'resume',
      event_id: a!.accepted.event_id,
      resume_token: a!.accepted.resume_token,
      after_seq: 0,
    });
    expect(await again.expect('error')).to.include({ code: 'RESUME_GAP' });
  });

  it("reassembles exactly the reply's text across a stream whose TCP connection is cut several times, resuming with raw frames", async function () {
    const { bridge, app, agent, agentClient } = await setup();
    const proxy = await startTcpProxy(bridge.url);
    const connect = () => TestClient.connect(proxy.url, 'app', app.token, 'header', app.token, { resume: true });
    let client = await connect();
    const accepted = await startEvent(client, agentClient, agent.agent_id);
    const words = Array.from({ length: 1000 }, (_, i) => `w${i}·${'é'.repeat(i % 7)} `);
    const received: string[] = [];
    let lastSeq = 0;
    /** Per cut, the fragments sent that had not reached the app: what the resume has to give back. */
    const missed: number[] = [];
    const take = (frame: any) => {
      expect(frame.type, JSON.stringify(frame)).to.equal('token');
      expect(frame.seq, 'no fragment lost or repeated').to.equal(lastSeq + 1);
      lastSeq = frame.seq;
      received.push(frame.token);
    };
    for (let round = 0; round < 5; round++) {
      const batch = words.slice(round * 200, (round + 1) * 200);
      for (const token of batch.slice(0, 100)) agentClient.send({ type: 'token', event_id: accepted.event_id, token });
      take(await client.waitForMessage()); // mid-stream: some of this round arrived, the rest is on its way...
      proxy.stall(); // ...into a network that swallows it, as a train enters a tunnel
      for (const token of batch.slice(100)) agentClient.send({ type: 'token', event_id: accepted.event_id, token });
      await agentClient.expectNothingBeforePong(); // the bridge has read them and written them toward the app
      await proxy.cut();
      for (const frame of await drain(client)) take(frame);
      missed.push((round + 1) * 200 - lastSeq);
      await proxy.restore();
      client = await connect();
      client.send({
        type: 'resume',
        event_id: accepted.event_id,
        resume_token: accepted.resume_token,
        after_seq: lastSeq,
      });
    }
    agentClient.send({ type: 'reply', event_id: accepted.event_id, content: '', done: true });
    for (;;) {
      const frame = await client.waitForMessage();
      if (frame.type === 'reply') {
        expect(frame.reply).to.equal(words.join(''));
        break;
      }
      take(frame);
    }
    expect(received.join('')).to.equal(words.join(''));
    expect(
      missed.filter((n) => n > 0),
      `fragments missed at each cut: ${missed}`,
    ).to.not.be.empty;
    expect(sample(await scrape(bridge.url), 'bridge_resumes_total', { outcome: 'resumed' })).to.equal(5);
  });
});
