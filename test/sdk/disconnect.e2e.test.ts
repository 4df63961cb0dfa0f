// The app client when an operator disconnects its connection (H8) on a real bridge: the close (4205,
// DISCONNECTED_BY_ADMIN) is one to come back from, so it reconnects with its backoff and resumes its event in flight,
// whose caller reads the whole stream as if nothing happened. The client runs on the bridge's frozen clock.
import { once } from 'node:events';
import { expect } from 'chai';
import { CLOSE_CODES, LIMITS } from '../../generated/index.js';
import { connectApp, type AppClient } from '../../src/sdk/app-client.js';
import { startTestBridge } from '../helpers/bridge.js';

const clients: AppClient[] = [];

describe('app client: an operator disconnects its connection', function () {
  afterEach(async function () {
    for (const client of clients.splice(0)) await client.close();
  });

  it('reconnects after its backoff and resumes the event in flight, the caller reading every fragment and the reply', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    const agentClient = await bridge.connectAgent(agent.token);
    const client = await connectApp({
      url: `${bridge.url.replace(/^http/, 'ws')}/v1`,
      token: app.token,
      clock: bridge.clock,
      random: () => 0,
    });
    clients.push(client);
    const handle = client.send({ agentId: agent.agent_id, threadId: 't', payload: { text: 'Hello' } });
    const { event_id } = await agentClient.expect('event');
    agentClient.send({ type: 'token', event_id, token: 'one ' });
    const tokens = handle.tokens[Symbol.asyncIterator]();
    expect((await tokens.next()).value).to.equal('one ');

    const live = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/live`);
    const [{ connection_id }] = live.body.apps[0].connections;
    const down = once(client, 'disconnected');
    const reconnecting = once(client, 'reconnecting') as Promise<[{ attempt: number; delayMs: number }]>;
    expect((await bridge.http('DELETE', `/admin/v1/connections/${connection_id}`)).status).to.equal(200);
    expect(await down).to.deep.equal([{ code: CLOSE_CODES.DISCONNECTED_BY_ADMIN, reason: 'DISCONNECTED_BY_ADMIN' }]);
    const [{ attempt, delayMs }] = await reconnecting;
    expect({ attempt, delayMs }).to.deep.equal({ attempt: 1, delayMs: LIMITS.reconnectBaseDelayMs });

    agentClient.send({ type: 'token', event_id, token: 'two' }); // while the app is away: kept for its resume (R7)
    const connected = once(client, 'connected');
    bridge.clock.advance(delayMs);
    await connected;
    agentClient.send({ type: 'reply', event_id, content: '', done: true });
    expect((await tokens.next()).value).to.equal('two');
    expect((await tokens.next()).done).to.equal(true);
    expect(await handle.reply).to.include({ event_id, reply: 'one two' });
    expect(client.state).to.equal('open');
  });
});
