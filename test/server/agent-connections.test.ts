// Agent connections (L6, L8, L9): one connection per agent (the newer wins), events in flight survive a
// replacement or a quick reconnect, AGENT_OFFLINE after the reconnect grace and AGENT_TIMEOUT after the agent
// timeout.
import { expect } from 'chai';
import { CLOSE_CODES, LIMITS } from '../../generated/index.js';
import { startTestBridge } from '../helpers/bridge.js';
import { startEvent } from '../helpers/events.js';

describe('agent connections', function () {
  it('replaces the older connection when the agent connects again: CONNECTION_REPLACED, and the newer one gets the events', async function () {
    const bridge = await startTestBridge();
    const { agent, appClient, agentClient: first } = await bridge.pair();
    const second = await bridge.connectAgent(agent.token);

    const replaced = await first.expect('error');
    expect(replaced).to.deep.equal({ type: 'error', code: 'CONNECTION_REPLACED', error: replaced.error });
    expect(replaced).not.to.have.property('event_id');
    expect(replaced.error).to.be.a('string').that.is.not.empty;
    expect(await first.waitForClose()).to.deep.equal({
      code: CLOSE_CODES.CONNECTION_REPLACED,
      reason: 'CONNECTION_REPLACED',
    });

    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: { n: 1 } });
    const { event_id } = await appClient.expect('accepted');
    const delivered = await second.expect('event');
    expect(delivered).to.include({ event_id });
    expect(delivered.payload).to.deep.equal({ n: 1 });
  });

  it('lets an event in flight finish on the new connection after a replacement', async function () {
    const bridge = await startTestBridge();
    const { agent, appClient, agentClient: first } = await bridge.pair();
    const { event_id } = await startEvent(appClient, first, agent.agent_id, 't', { q: 'why?' });
    first.send({ type: 'token', event_id, token: 'Because ' });
    expect((await appClient.expect('token')).token).to.equal('Because ');

    const second = await bridge.connectAgent(agent.token);
    expect((await first.expect('error')).code).to.equal('CONNECTION_REPLACED');
    await first.waitForClose();

    second.send({ type: 'token', event_id, token: 'it is.' });
    second.send({ type: 'reply', event_id, content: '', done: true });
    expect(await appClient.expect('token')).to.include({ event_id, token: 'it is.' });
    const reply = await appClient.expect('reply');
    expect(reply).to.include({ event_id, agent_id: agent.agent_id, reply: 'Because it is.' });
    expect(reply.payload).to.deep.equal({ q: 'why?' });
    await second.expectNothingBeforePong();
  });

  it('ends the events of an agent that dropped mid-stream with AGENT_OFFLINE once the reconnect grace is over', async function () {
    const bridge = await startTestBridge();
    const { agent, appClient, agentClient } = await bridge.pair();
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
    agentClient.send({ type: 'token', event_id, token: 'Half an ' });
    await appClient.expect('token');

    agentClient.close();
    await bridge.untilAgentOnline(agent.agent_id, false);
    bridge.clock.advance(LIMITS.agentReconnectGraceMs - 1);
    await appClient.expectNothingBeforePong();

    bridge.clock.advance(1);
    const error = await appClient.expect('error');
    expect(error).to.deep.equal({
      type: 'error',
      event_id,
      agent_id: agent.agent_id,
      code: 'AGENT_OFFLINE',
      error: error.error,
    });
    expect(error.error).to.be.a('string').that.is.not.empty;
  });

  it('lets an agent that comes back within the grace finish its event, and sends nothing when the grace would have ended', async function () {
    const bridge = await startTestBridge();
    const { agent, appClient, agentClient } = await bridge.pair();
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id, 't', { x: 1 });
    agentClient.send({ type: 'token', event_id, token: 'one ' });
    await appClient.expect('token');

    agentClient.close();
    await bridge.untilAgentOnline(agent.agent_id, false);
    bridge.clock.advance(LIMITS.agentReconnectGraceMs - 1);
    const back = await bridge.connectAgent(agent.token);
    back.send({ type: 'token', event_id, token: 'two' });
    back.send({ type: 'reply', event_id, content: '', done: true });
    expect((await appClient.expect('token')).token).to.equal('two');
    const reply = await appClient.expect('reply');
    expect(reply).to.include({ event_id, agent_id: agent.agent_id, reply: 'one two' });
    expect(reply.metadata).to.include({ tokens_used: 2, latency_ms: LIMITS.agentReconnectGraceMs - 1 });

    bridge.clock.advance(LIMITS.agentReconnectGraceMs);
    await appClient.expectNothingBeforePong();
    await back.expectNothingBeforePong();
  });

  it('ends an event with AGENT_TIMEOUT after the default agent timeout, and refuses the late reply with INVALID_EVENT_ID', async function () {
    const bridge = await startTestBridge();
    const { agent, appClient, agentClient } = await bridge.pair();
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);

    await bridge.advanceWithHeartbeats(LIMITS.agentTimeoutMs - 1, [appClient, agentClient]);
    bridge.clock.advance(1);
    const error = await appClient.expect('error');
    expect(error).to.deep.equal({
      type: 'error',
      event_id,
      agent_id: agent.agent_id,
      code: 'AGENT_TIMEOUT',
      error: error.error,
    });
    expect(error.error).to.be.a('string').that.is.not.empty;

    agentClient.send({ type: 'reply', event_id, content: 'Sorry, I was thinking.', done: true });
    const refused = await agentClient.expect('error');
    expect(refused).to.deep.equal({ type: 'error', event_id, code: 'INVALID_EVENT_ID', error: refused.error });
    await appClient.expectNothingBeforePong();
  });

  it('uses the configured agent timeout (AGENT_TIMEOUT_MS)', async function () {
    const bridge = await startTestBridge({ agentTimeoutMs: 5000 });
    const { agent, appClient, agentClient } = await bridge.pair();
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);

    bridge.clock.advance(4999);
    await appClient.expectNothingBeforePong();
    bridge.clock.advance(1);
    expect(await appClient.expect('error')).to.include({ event_id, agent_id: agent.agent_id, code: 'AGENT_TIMEOUT' });
  });

  it('answers AGENT_OFFLINE at once to a new event for an agent whose only connection has closed', async function () {
    const bridge = await startTestBridge();
    const { agent, appClient, agentClient } = await bridge.pair();
    agentClient.close();
    await agentClient.waitForClose();
    await bridge.untilAgentOnline(agent.agent_id, false);

    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    const error = await appClient.expect('error');
    expect(error).to.include({ type: 'error', agent_id: agent.agent_id, code: 'AGENT_OFFLINE' });
    expect(error.event_id).to.be.a('string').that.is.not.empty;
  });
});
