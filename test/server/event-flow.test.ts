// §3: event -> accepted -> delivered -> tokens -> reply, with the payload untouched and the metadata complete.
import { expect } from 'chai';
import { startTestBridge } from '../helpers/bridge.js';

const PAYLOAD = { kind: 'question', text: 'What is a prime?', nested: { list: [1, 'two', null], ü: '✓' } };

describe('event flow', function () {
  it('answers accepted with the stored session key, then delivers the event with the agent form', async function () {
    const bridge = await startTestBridge();
    const { app, agent, appClient, agentClient } = await bridge.pair();
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'lesson-42', payload: PAYLOAD });

    const accepted = await appClient.expect('accepted');
    expect(accepted).to.include({ agent_id: agent.agent_id, status: 'accepted' });
    expect(accepted.session_key).to.equal(`svc:${agent.agent_id}:${app.app_id}:lesson-42`);

    const delivered = await agentClient.expect('event');
    expect(delivered).to.deep.equal({
      type: 'event',
      event_id: accepted.event_id,
      app_id: app.app_id,
      thread_id: 'lesson-42',
      session_key: `svc:${app.app_id}:lesson-42`,
      payload: PAYLOAD,
    });
  });

  it('forwards each token at once with agent_id, then the reply with the payload echoed and the metadata', async function () {
    const bridge = await startTestBridge();
    const { agent, appClient, agentClient } = await bridge.pair();
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't1', payload: PAYLOAD });
    const { event_id, session_key } = await appClient.expect('accepted');
    await agentClient.expect('event');

    agentClient.send({ type: 'token', event_id, token: 'A prime ' });
    expect(await appClient.expect('token')).to.deep.equal({
      type: 'token',
      event_id,
      agent_id: agent.agent_id,
      token: 'A prime ',
    });
    agentClient.send({ type: 'token', event_id, token: 'has two divisors.' });
    expect((await appClient.expect('token')).token).to.equal('has two divisors.');

    bridge.clock.advance(1234);
    agentClient.send({
      type: 'reply',
      event_id,
      content: 'A prime has exactly two divisors.',
      done: true,
      metadata: { tokens_used: 17, model: 'tutor-large' },
    });
    const reply = await appClient.expect('reply');
    expect(reply).to.deep.equal({
      type: 'reply',
      event_id,
      agent_id: agent.agent_id,
      thread_id: 't1',
      reply: 'A prime has exactly two divisors.',
      payload: PAYLOAD,
      metadata: { tokens_used: 17, model: 'tutor-large', latency_ms: 1234, session_key },
    });
  });

  it('joins the streamed tokens when the reply content is empty, and counts them when the agent gives no metadata', async function () {
    const bridge = await startTestBridge();
    const { agent, appClient, agentClient } = await bridge.pair();
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    const { event_id } = await appClient.expect('accepted');
    await agentClient.expect('event');
    for (const token of ['Hel', 'lo, ', 'world', '!']) agentClient.send({ type: 'token', event_id, token });
    agentClient.send({ type: 'reply', event_id, content: '', done: true });
    for (let i = 0; i < 4; i++) await appClient.expect('token');
    const reply = await appClient.expect('reply');
    expect(reply.reply).to.equal('Hello, world!');
    expect(reply.metadata).to.include({ tokens_used: 4, model: 'unknown', latency_ms: 0 });
  });

  it("passes the agent's error to the app as AGENT_ERROR, and the agent's AGENT_TIMEOUT as AGENT_TIMEOUT", async function () {
    const bridge = await startTestBridge();
    const { agent, appClient, agentClient } = await bridge.pair();
    for (const [agentCode, appCode] of [
      ['MODEL_DOWN', 'AGENT_ERROR'],
      ['AGENT_ERROR', 'AGENT_ERROR'],
      ['AGENT_TIMEOUT', 'AGENT_TIMEOUT'],
    ]) {
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
      const { event_id } = await appClient.expect('accepted');
      await agentClient.expect('event');
      agentClient.send({ type: 'error', event_id, error: 'backend unavailable', code: agentCode });
      expect(await appClient.expect('error')).to.deep.equal({
        type: 'error',
        event_id,
        agent_id: agent.agent_id,
        error: 'backend unavailable',
        code: appCode,
      });
    }
  });

  it('sends tokens and the reply only to the app instance that sent the event', async function () {
    const bridge = await startTestBridge();
    const { app, agent, appClient, agentClient } = await bridge.pair();
    const other = await bridge.connectApp(app.token);
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: { from: 'first' } });
    other.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: { from: 'second' } });
    const first = await appClient.expect('accepted');
    const second = await other.expect('accepted');
    const deliveries = [await agentClient.expect('event'), await agentClient.expect('event')];
    for (const d of deliveries) {
      agentClient.send({ type: 'token', event_id: d.event_id, token: `for ${(d.payload as any).from}` });
      agentClient.send({ type: 'reply', event_id: d.event_id, content: '', done: true });
    }
    expect((await appClient.expect('token')).event_id).to.equal(first.event_id);
    expect((await appClient.expect('reply')).payload).to.deep.equal({ from: 'first' });
    expect((await other.expect('token')).event_id).to.equal(second.event_id);
    expect((await other.expect('reply')).payload).to.deep.equal({ from: 'second' });
    await appClient.expectNothingBeforePong();
    await other.expectNothingBeforePong();
  });

  it('generates unique event ids that sort in the order the events were accepted', async function () {
    const bridge = await startTestBridge();
    const { agent, appClient } = await bridge.pair();
    for (let i = 0; i < 20; i++)
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: `t${i}`, payload: { i } });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await appClient.expect('accepted')).event_id);
    expect(new Set(ids).size).to.equal(20);
    expect([...ids].sort()).to.deep.equal(ids);
  });
});
