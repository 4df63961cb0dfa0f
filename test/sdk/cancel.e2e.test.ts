// The cancel extension end to end over real sockets (S1-S8): the SDK's app client stops an event whose agent, run by
// the connector, streams 1,000 fragments, after it has read 100 of them. The app's handle ends with
// EventCancelledError, the handler's signal fires, the handler's later frames are not forwarded (it ignores the
// signal on purpose), the event log row says `cancelled` and nothing is in flight any more: on one node, and with
// the app and the agent on two nodes.
import { expect } from 'chai';
import { EventCancelledError, connectApp, type AppClient } from '../../src/sdk/app-client.js';
import { resolveConnectorConfig } from '../../src/sdk/connector/config.js';
import { Connector } from '../../src/sdk/connector/connector.js';
import { CancelledEventError } from '../../src/sdk/connector/event-run.js';
import type { AgentHandler } from '../../src/sdk/connector/handler.js';
import type { Logger } from '../../src/shared/logger.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { nodesOnRedis } from '../helpers/cluster-nodes.js';
import { describePostgres } from '../helpers/databases.js';
import { deferred } from '../../src/sdk/deferred.js';
import { eventually } from '../helpers/eventually.js';
import { sample, scrape } from '../helpers/metrics.js';

const FRAGMENTS = 1000;
const READ_BEFORE_STOP = 100;
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;
const running: { clients: AppClient[]; connectors: Connector[] } = { clients: [], connectors: [] };

/**
 * An agent run by the connector that streams FRAGMENTS fragments, READ_BEFORE_STOP of them before it waits for the
 * app's Stop; then it sends the rest regardless of its signal, as a handler that ignores it would.
 */
function streamingAgent() {
  const stopped = deferred<void>();
  const signalled = deferred<unknown>();
  const done = deferred<void>();
  let sentAfterStop = 0;
  const handler: AgentHandler = async (_event, ctx) => {
    ctx.signal.addEventListener('abort', () => signalled.resolve(ctx.signal.reason), { once: true });
    for (let i = 0; i < READ_BEFORE_STOP; i++) ctx.token(`${i} `);
    await stopped.promise;
    for (let i = READ_BEFORE_STOP; i < FRAGMENTS; i++) {
      sentAfterStop += ctx.token(`${i} `);
      await new Promise((resolve) => setImmediate(resolve));
    }
    done.resolve();
  };
  return { handler, stopped, signalled, done, sentAfterStop: () => sentAfterStop };
}

async function startConnector(
  agentNode: TestBridge,
  agent: { agent_id: string; token: string },
  handler: AgentHandler,
) {
  const config = resolveConnectorConfig(
    {
      connection: { url: '${URL}' },
      agents: [{ agent_id: agent.agent_id, token: '${TOKEN}' }],
    },
    { env: { URL: `${agentNode.url.replace(/^http/, 'ws')}/v1/ws/agent`, TOKEN: agent.token } },
  );
  const connector = new Connector(config, { handler, logger: quiet });
  running.connectors.push(connector);
  await connector.start();
  await agentNode.untilAgentOnline(agent.agent_id, true);
  return connector;
}

/** The app on `appNode` (the event's home), the agent's connector on `agentNode`: one event stopped after 100. */
async function stopAfterHundred(appNode: TestBridge, agentNode: TestBridge) {
  const org = await appNode.org();
  const app = await appNode.app(org.org_id);
  const agent = await appNode.agent(org.org_id);
  const agentRun = streamingAgent();
  const connector = await startConnector(agentNode, agent, agentRun.handler);
  const cancelled: string[] = [];
  connector.on('event-cancelled', ({ eventId }) => cancelled.push(eventId));
  const client = await connectApp({ url: `${appNode.url.replace(/^http/, 'ws')}/v1`, token: app.token });
  running.clients.push(client);

  const handle = client.send({ agentId: agent.agent_id, threadId: 'stop-button', payload: { q: 'long' } });
  const { event_id } = await handle.accepted;
  const read: string[] = [];
  let ended: unknown;
  try {
    for await (const fragment of handle.tokens) {
      read.push(fragment);
      if (read.length === READ_BEFORE_STOP) handle.cancel();
    }
  } catch (err) {
    ended = err;
  }
  agentRun.stopped.resolve();

  expect(ended).to.be.instanceOf(EventCancelledError);
  expect(ended).to.include({ code: 'CANCELLED', eventId: event_id });
  expect(await handle.reply.catch((err: unknown) => err)).to.equal(ended);
  expect(read).to.have.length(READ_BEFORE_STOP);
  const reason = await agentRun.signalled.promise;
  expect(reason).to.be.instanceOf(CancelledEventError);
  expect(cancelled).to.deep.equal([event_id]);
  // The handler ignores its signal: the few fragments it sent before the cancel reached the connector went to the
  // bridge, which dropped them (S4); the rest the connector did not send. Only the first 100 were forwarded.
  await agentRun.done.promise;
  expect(agentRun.sentAfterStop()).to.be.lessThan(FRAGMENTS - READ_BEFORE_STOP);
  const forwarded = async () =>
    sample(await scrape(agentNode.url), 'bridge_tokens_forwarded_total')! +
    (appNode === agentNode ? 0 : sample(await scrape(appNode.url), 'bridge_tokens_forwarded_total')!);
  expect(await forwarded()).to.equal(READ_BEFORE_STOP);

  const row = await eventually(
    'the event log row',
    async () =>
      (await appNode.http('GET', '/admin/v1/events?limit=500', { schema: 'EventLog' })).body.events.find(
        (e: { event_id: string }) => e.event_id === event_id,
      ),
    (e) => e !== undefined && e.outcome !== 'pending',
  );
  expect(row).to.include({ outcome: 'cancelled', code: 'CANCELLED' });
  for (const node of new Set([appNode, agentNode])) {
    const metrics = await scrape(node.url);
    expect(sample(metrics, 'bridge_events_in_flight'), 'events in flight').to.equal(0);
  }
  expect(
    sample(await scrape(appNode.url), 'bridge_events_total', { status: 'delivered', outcome: 'cancelled' }),
  ).to.equal(1);
}

async function stopAll() {
  await Promise.all(running.clients.splice(0).map((c) => c.close()));
  await Promise.all(running.connectors.splice(0).map((c) => c.close()));
}

describe('cancel end to end: the SDK app client and the connector (S1-S8)', function () {
  afterEach(stopAll);

  it('stops a stream of 1,000 fragments after 100, on one node', async function () {
    const bridge = await startTestBridge();
    await stopAfterHundred(bridge, bridge);
  });
});

describePostgres('cancel end to end on two nodes (S5)', function (db) {
  afterEach(stopAll);
  const node = nodesOnRedis(db); // its afterEach, registered after the one above, stops the nodes once the clients are gone

  it('stops a stream of 1,000 fragments after 100 with the app on one node and the agent on the other', async function () {
    const [home, agentNode] = [await node('n1'), await node('n2')];
    await stopAfterHundred(home, agentNode);
  });
});
