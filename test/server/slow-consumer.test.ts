// W17: a client that stops reading is closed with SLOW_CONSUMER once SEND_BUFFER_MAX_BYTES are queued for it; the
// bridge neither buffers without limit nor slows the agent down for the other apps it streams to.
import type { Socket } from 'node:net';
import { expect } from 'chai';
import { CLOSE_CODES, LIMITS } from '../../generated/index.js';
import { startTestBridge } from '../helpers/bridge.js';

const socketOf = (client: { ws: unknown }) => (client.ws as { _socket: Socket })._socket;

describe('slow consumers', function () {
  it('closes an app that stops reading with SLOW_CONSUMER (4429) after what was queued, while another app of the same agent gets every frame', async function () {
    const bridge = await startTestBridge({ sendBufferMaxBytes: LIMITS.frameMaxBytes });
    const { org, agent, appClient: slow, agentClient } = await bridge.pair();
    const fast = await bridge.connectApp((await bridge.app(org.org_id, 'Fast')).token);
    slow.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'slow', payload: {} });
    fast.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'fast', payload: {} });
    const slowEvent = (await slow.expect('accepted')).event_id;
    const fastEvent = (await fast.expect('accepted')).event_id;
    await agentClient.expect('event');
    await agentClient.expect('event');

    socketOf(slow).pause();
    // 32 MB: enough to fill the loopback buffers of the paused socket and then the 1 MiB cap many times over.
    const fragment = 'x'.repeat(4000);
    const sent = 8000;
    for (let i = 0; i < sent; i++) agentClient.send({ type: 'token', event_id: slowEvent, token: fragment });
    for (let i = 0; i < 50; i++) agentClient.send({ type: 'token', event_id: fastEvent, token: `f${i} ` });
    for (let i = 0; i < 50; i++) expect((await fast.expect('token', 10_000)).token).to.equal(`f${i} `);

    socketOf(slow).resume();
    let delivered = 0;
    for (;;) {
      const message = await slow.waitForMessage(10_000);
      if (message.type === 'token') {
        delivered++;
        continue;
      }
      expect(message).to.include({ type: 'error', code: 'SLOW_CONSUMER' });
      break;
    }
    expect(delivered).to.be.greaterThan(0).and.lessThan(sent);
    expect(await slow.waitForClose(10_000)).to.deep.equal({ code: CLOSE_CODES.SLOW_CONSUMER, reason: 'SLOW_CONSUMER' });

    // The agent is not held back: it finishes the other app's event as usual.
    agentClient.send({ type: 'reply', event_id: fastEvent, content: 'done', done: true });
    expect((await fast.expect('reply')).reply).to.equal('done');
  });
});
