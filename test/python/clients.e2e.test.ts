// The Python package against our bridge (startTestBridge: port 0, in-memory store): a Python agent (the echo
// example on the connector, with its health endpoint) answering a Python app (the app sample) and a TypeScript app
// (our SDK's app client), a Python app taking its stream back after its connection was closed (resume), and a Python
// app stopping a Python agent's long stream (cancel).
import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { connectApp, type AppClient } from '../../src/sdk/app-client.js';
import { eventually } from '../helpers/eventually.js';
import { sample, scrape } from '../helpers/metrics.js';
import { startPython, stopPythonProcesses } from './python-process.js';

const baseUrl = (bridge: TestBridge) => `${bridge.url.replace(/^http/, 'ws')}/v1`;

async function provision(bridge: TestBridge) {
  const org = await bridge.org();
  const app = await bridge.app(org.org_id);
  const agent = await bridge.agent(org.org_id, 'Echo', { description: 'Says it back' });
  return { org, app, agent };
}

/** The echo agent on a configuration file whose token comes from the environment, health endpoint on a free port. */
async function startEchoAgent(bridge: TestBridge, agentId: string, token: string) {
  const dir = mkdtempSync(join(tmpdir(), 'py-agent-'));
  const file = join(dir, 'connector.json');
  writeFileSync(
    file,
    JSON.stringify({
      connection: { url: `${baseUrl(bridge)}/ws/agent` },
      agents: [{ agent_id: agentId, token: '${ECHO_TOKEN}', context: { persona: 'echo' } }],
      health: { port: 0 },
    }),
  );
  const agent = startPython(['python/examples/echo_agent.py', file], { ECHO_TOKEN: token });
  await agent.line(new RegExp(`^connected ${agentId}$`));
  await bridge.untilAgentOnline(agentId, true);
  return agent;
}

describe('Python package: clients through our bridge', function () {
  this.timeout(60_000);
  const apps: AppClient[] = [];

  afterEach(async function () {
    await Promise.all(apps.splice(0).map((a) => a.close()));
    await stopPythonProcesses();
  });

  it('a Python app gets a Python agent reply, streamed, and the health endpoint shows the agent', async function () {
    const bridge = await startTestBridge();
    const { app, agent } = await provision(bridge);
    const echo = await startEchoAgent(bridge, agent.agent_id, agent.token);
    const healthUrl = (await echo.line(/^health /)).slice('health '.length);
    const health = await fetch(healthUrl);
    expect(health.status).to.equal(200);
    expect(await health.json()).to.deep.include({ status: 'ok' });

    const sample = startPython(['python/examples/app_sample.py', 'What is a prime?'], {
      BRIDGE_URL: baseUrl(bridge),
      APP_TOKEN: app.token,
      AGENT_ID: agent.agent_id,
    });
    expect(await sample.exited, sample.output()).to.equal(0);
    const lines = sample.output().trim().split('\n');
    expect(lines[0]).to.equal(`agents: ${agent.agent_id} (Echo)`);
    expect(lines[1]).to.match(/^accepted \S+$/);
    expect(lines.filter((l) => l.startsWith('token '))).to.deep.equal([
      "token 'You '",
      "token 'said: '",
      "token 'What '",
      "token 'is '",
      "token 'a '",
      "token 'prime?'",
    ]);
    expect(lines.at(-1)).to.match(/^reply 'You said: What is a prime\?' model=echo latency_ms=\d+/);
    await echo.line(/^replied \S+ after 6 fragments$/);
  });

  it('a Python agent answers a TypeScript app, and its handler failure reaches the app as AGENT_ERROR', async function () {
    const bridge = await startTestBridge();
    const { app, agent } = await provision(bridge);
    await startEchoAgent(bridge, agent.agent_id, agent.token);
    const client = await connectApp({ url: baseUrl(bridge), token: app.token, reconnect: { enabled: false } });
    apps.push(client);

    const handle = client.send({ agentId: agent.agent_id, threadId: 'ts-app', payload: { text: 'héllo 😀 world' } });
    const fragments: string[] = [];
    for await (const fragment of handle.tokens) fragments.push(fragment);
    expect(fragments.join('')).to.equal('You said: héllo 😀 world');
    const reply = await handle.reply;
    expect(reply.reply).to.equal('You said: héllo 😀 world');
    expect(reply.metadata).to.include({ model: 'echo', tokens_used: 1 });
    // The same thread is the same session: the agent counts the turns in it.
    const second = await client.send({ agentId: agent.agent_id, threadId: 'ts-app', payload: { text: 'again' } }).reply;
    expect(second.metadata.tokens_used).to.equal(2);

    const failed = client.send({ agentId: agent.agent_id, threadId: 'ts-app', payload: { nothing: true } });
    const error = await failed.reply.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).to.include({ code: 'AGENT_ERROR', message: 'Send a payload with a text field.' });
  });

  it('a stopped Python agent goes offline for the bridge, and a Python app refused a bad token says so', async function () {
    const bridge = await startTestBridge();
    const { agent } = await provision(bridge);
    const echo = await startEchoAgent(bridge, agent.agent_id, agent.token);
    echo.child.kill('SIGTERM');
    expect(await echo.exited).to.equal(0);
    expect(echo.output()).to.match(/stopped, 0 event\(s\) cut short/);
    await bridge.untilAgentOnline(agent.agent_id, false);

    const refused = startPython(['python/examples/app_sample.py'], {
      BRIDGE_URL: baseUrl(bridge),
      APP_TOKEN: 'rlk_nobody_' + 'x'.repeat(32),
      AGENT_ID: agent.agent_id,
    });
    expect(await refused.exited).to.not.equal(0);
    expect(refused.output()).to.match(/UNAUTHORIZED/);
  });
  it('a Python app takes its stream back after the bridge closed its connection (resume, R9)', async function () {
    const bridge = await startTestBridge();
    const { org, app, agent } = await provision(bridge);
    const agentClient = await bridge.connectAgent(agent.token);
    await bridge.untilAgentOnline(agent.agent_id, true);
    const sample = startPython(['python/examples/app_sample.py', 'Count to four'], {
      BRIDGE_URL: baseUrl(bridge),
      APP_TOKEN: app.token,
      AGENT_ID: agent.agent_id,
    });
    const { event_id } = await agentClient.expect('event', 10_000);
    agentClient.send({ type: 'token', event_id, token: 'one ' });
    agentClient.send({ type: 'token', event_id, token: 'two ' });
    await sample.line(/^token 'two '$/);

    // An operator closes the app's connection (H8, retry: true): the rest of the stream is sent while it is away.
    const live = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/live`);
    const [connectionId] = live.body.apps.flatMap((a: any) => a.connections.map((c: any) => c.connection_id));
    expect((await bridge.http('DELETE', `/admin/v1/connections/${connectionId}`)).status).to.equal(200);
    agentClient.send({ type: 'token', event_id, token: 'three ' });
    agentClient.send({ type: 'token', event_id, token: 'four' });
    agentClient.send({ type: 'reply', event_id, content: 'one two three four', done: true });

    expect(await sample.exited, sample.output()).to.equal(0);
    const lines = sample.output().trim().split('\n');
    expect(lines.filter((l) => l.startsWith('token '))).to.deep.equal([
      "token 'one '",
      "token 'two '",
      "token 'three '",
      "token 'four'",
    ]);
    expect(lines.at(-1)).to.match(/^reply 'one two three four' /);
  });

  it('a Python app stops a Python agent streaming 1,000 fragments after 100 (cancel, S1-S8)', async function () {
    const FRAGMENTS = 1000;
    const STOP_AFTER = 100;
    const bridge = await startTestBridge();
    const { app, agent } = await provision(bridge);
    const streamer = startPython(['python/examples/streaming_agent.py'], {
      BRIDGE_URL: baseUrl(bridge),
      AGENT_TOKEN: agent.token,
    });
    await streamer.line(new RegExp(`^connected ${agent.agent_id}$`));
    await bridge.untilAgentOnline(agent.agent_id, true);

    const stopper = startPython(['python/examples/stop_app.py', String(FRAGMENTS), String(STOP_AFTER)], {
      BRIDGE_URL: baseUrl(bridge),
      APP_TOKEN: app.token,
      AGENT_ID: agent.agent_id,
    });
    expect(await stopper.exited, stopper.output()).to.equal(0);
    const lines = stopper.output().trim().split('\n');
    const eventId = /^accepted (\S+)$/.exec(lines[0]!)![1]!;
    // The handle ended at once with EventCancelledError, after exactly the fragments read; the bridge's answer to
    // the cancel did not reach the next send, which got its own reply.
    expect(lines.slice(1)).to.deep.equal([
      `cancelled ${eventId} code=CANCELLED after ${STOP_AFTER} fragments`,
      'reply cancelled too',
      "next reply '0 1 2 '",
    ]);

    // The agent's handler saw its cancellation; it swallowed it and yielded again, which the connector did not send.
    expect(await streamer.line(/^handler cancelled /)).to.equal(
      `handler cancelled ${eventId}: Event ${eventId} was cancelled by the app. (event.cancelled=True)`,
    );
    await streamer.line(new RegExp(`^cancelled ${eventId} in_flight=0$`));
    await streamer.line(new RegExp(`^handler stopped ${eventId} after yielding 1 more$`));
    // Only the 100 fragments before the Stop and the next event's 3 went to the app.
    const metrics = await scrape(bridge.url);
    expect(sample(metrics, 'bridge_tokens_forwarded_total')).to.equal(STOP_AFTER + 3);
    expect(sample(metrics, 'bridge_events_in_flight'), 'events in flight').to.equal(0);
    expect(sample(metrics, 'bridge_events_total', { status: 'delivered', outcome: 'cancelled' })).to.equal(1);
    const row = await eventually(
      'the event log row',
      async () =>
        (await bridge.http('GET', '/admin/v1/events?limit=500', { schema: 'EventLog' })).body.events.find(
          (e: { event_id: string }) => e.event_id === eventId,
        ),
      (e) => e !== undefined && e.outcome !== 'pending',
    );
    expect(row).to.include({ outcome: 'cancelled', code: 'CANCELLED' });
  });
});
