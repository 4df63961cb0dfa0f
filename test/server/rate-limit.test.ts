// The per-app rate limit (L10, W7): a token bucket per app, shared by all its connections, refilled on the
// bridge's clock; over it RATE_LIMIT_EXCEEDED with retry_after_seconds, logged as rejected, never delivered. It is
// checked after the shape and size of an event and before any lookup; a rate or burst of 0 turns it off.
import { expect } from 'chai';
import { LIMITS, type ServiceToAppMessage } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import type { AgentClient, AppClient } from '../helpers/ws-client.js';

const RATE = LIMITS.rateLimitEventsPerSecond;
const BURST = LIMITS.rateLimitBurst;
/** retry_after_seconds is rounded up to the millisecond. */
const ROUNDING_S = 0.001;

const limited = () => startTestBridge({ rateLimitPerSecond: RATE, rateLimitBurst: BURST });

/** Sends `count` events to `agentId` and returns the answers, in order. */
async function burst(
  client: AppClient,
  agentId: string,
  count: number,
  frame: object = {},
): Promise<ServiceToAppMessage[]> {
  for (let i = 0; i < count; i++)
    client.send({ type: 'event', agent_id: agentId, thread_id: `t${i}`, payload: { i }, ...frame });
  const answers: ServiceToAppMessage[] = [];
  for (let i = 0; i < count; i++) answers.push(await client.waitForMessage());
  return answers;
}

const types = (answers: ServiceToAppMessage[]) => answers.map((a) => (a.type === 'error' ? a.code : a.type));

/** The agent got exactly `count` events and nothing else. */
async function agentReceived(agentClient: AgentClient, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await agentClient.expect('event')).event_id);
  await agentClient.expectNothingBeforePong();
  return ids;
}

async function oneEvent(client: AppClient, agentId: string, frame: object = {}): Promise<ServiceToAppMessage> {
  client.send({ type: 'event', agent_id: agentId, thread_id: 't', payload: {}, ...frame });
  return client.waitForMessage();
}

describe('the rate limit', function () {
  it('accepts a burst of rateLimitBurst events, refuses the next with RATE_LIMIT_EXCEEDED and retry_after_seconds, and accepts one again after that wait', async function () {
    const bridge = await limited();
    const { agent, appClient } = await bridge.pair();

    const answers = await burst(appClient, agent.agent_id, BURST + 1);
    expect(types(answers.slice(0, BURST))).to.deep.equal(Array(BURST).fill('accepted'));
    const refused = answers[BURST]!;
    if (refused.type !== 'error') throw new Error(`expected an error, got ${JSON.stringify(refused)}`);
    expect(refused).to.deep.equal({
      type: 'error',
      code: 'RATE_LIMIT_EXCEEDED',
      error: refused.error,
      event_id: refused.event_id,
      agent_id: agent.agent_id,
      metadata: { retry_after_seconds: refused.metadata!.retry_after_seconds },
    });
    expect(refused.error).to.be.a('string').that.is.not.empty;
    expect(refused.event_id).to.be.a('string').that.is.not.empty;
    const retryAfter = refused.metadata!.retry_after_seconds;
    expect(retryAfter)
      .to.be.greaterThan(0)
      .and.at.most(1 / RATE + ROUNDING_S);

    // Not a moment before: the bucket refills on the bridge clock.
    bridge.clock.advance(Math.ceil(retryAfter * 1000) - 1);
    expect(await oneEvent(appClient, agent.agent_id)).to.include({ type: 'error', code: 'RATE_LIMIT_EXCEEDED' });
    bridge.clock.advance(1);
    expect(await oneEvent(appClient, agent.agent_id)).to.include({ type: 'accepted', agent_id: agent.agent_id });
    expect(await oneEvent(appClient, agent.agent_id)).to.include({ type: 'error', code: 'RATE_LIMIT_EXCEEDED' });

    // A full second refills the rate, never more than the burst.
    bridge.clock.advance(1000);
    expect(types(await burst(appClient, agent.agent_id, RATE + 1))).to.deep.equal([
      ...Array(RATE).fill('accepted'),
      'RATE_LIMIT_EXCEEDED',
    ]);
    bridge.clock.advance(10 * (BURST / RATE) * 1000); // well past a full refill; clients stay well within idleCloseMs
    expect(types(await burst(appClient, agent.agent_id, BURST + 1))).to.deep.equal([
      ...Array(BURST).fill('accepted'),
      'RATE_LIMIT_EXCEEDED',
    ]);
  });

  it('shares one bucket among all connections of an app; another app has its own', async function () {
    const bridge = await limited();
    const { org, app, agent, appClient: first } = await bridge.pair();
    const second = await bridge.connectApp(app.token);
    const otherApp = await bridge.app(org.org_id, 'Other App');
    const other = await bridge.connectApp(otherApp.token);

    const firstShare = BURST / 2 + 5;
    expect(types(await burst(first, agent.agent_id, firstShare))).to.deep.equal(Array(firstShare).fill('accepted'));
    const rest = BURST - firstShare;
    expect(types(await burst(second, agent.agent_id, rest + 5))).to.deep.equal([
      ...Array(rest).fill('accepted'),
      ...Array(5).fill('RATE_LIMIT_EXCEEDED'),
    ]);
    expect(await oneEvent(first, agent.agent_id)).to.include({ code: 'RATE_LIMIT_EXCEEDED' });

    expect(types(await burst(other, agent.agent_id, BURST + 1))).to.deep.equal([
      ...Array(BURST).fill('accepted'),
      'RATE_LIMIT_EXCEEDED',
    ]);
  });

  it('counts rate-limited events without logging them (O1), and never delivers them to the agent', async function () {
    const bridge = await limited();
    const { agent, appClient, agentClient } = await bridge.pair();
    const answers = await burst(appClient, agent.agent_id, BURST + 3);
    const refusedIds = answers.filter((a) => a.type === 'error').map((a) => (a as { event_id: string }).event_id);
    expect(refusedIds).to.have.length(3);
    const acceptedIds = answers.filter((a) => a.type === 'accepted').map((a) => (a as { event_id: string }).event_id);
    expect(await agentReceived(agentClient, BURST)).to.deep.equal(acceptedIds);

    const res = await bridge.http('GET', '/admin/v1/events?code=RATE_LIMIT_EXCEEDED', { schema: 'EventLog' });
    expect(res.body.events, 'an app over its rate writes no rows').to.deep.equal([]);
    expect(await (await fetch(new URL('/metrics', bridge.url))).text()).to.include(
      'bridge_events_not_logged_total{code="RATE_LIMIT_EXCEEDED"} 3',
    );
    const delivered = await bridge.http('GET', '/admin/v1/events?status=delivered&limit=500', { schema: 'EventLog' });
    expect(delivered.body.events).to.have.length(BURST);
  });

  it('checks shape and size before the rate (those events cost nothing) and the rate before any lookup', async function () {
    const bridge = await limited();
    const { org, agent, appClient, agentClient } = await bridge.pair();
    const forbidden = await bridge.agent(org.org_id, 'Private');
    await bridge.http('PUT', `/admin/v1/agents/${forbidden.agent_id}/allowlist`, {
      body: { app_ids: [] },
      schema: 'Agent',
    });
    const offline = await bridge.agent(org.org_id, 'Sleeper');
    const oversized = { payload: { s: 'a'.repeat(LIMITS.payloadMaxBytes) } };

    // Invalid and oversized events are answered with their own codes and leave the bucket full.
    const invalid = BURST + 5;
    expect(types(await burst(appClient, 'Not_An_Agent', invalid))).to.deep.equal(
      Array(invalid).fill('INVALID_AGENT_ID'),
    );
    expect(types(await burst(appClient, agent.agent_id, 5, { thread_id: '' }))).to.deep.equal(
      Array(5).fill('INVALID_THREAD_ID'),
    );
    expect(types(await burst(appClient, agent.agent_id, 5, { payload: [] }))).to.deep.equal(
      Array(5).fill('INVALID_MESSAGE'),
    );
    expect(types(await burst(appClient, agent.agent_id, 5, oversized))).to.deep.equal(
      Array(5).fill('PAYLOAD_TOO_LARGE'),
    );
    expect(types(await burst(appClient, agent.agent_id, BURST))).to.deep.equal(Array(BURST).fill('accepted'));
    await agentReceived(agentClient, BURST);

    // The bucket is empty now: they still get their own codes ...
    expect(await oneEvent(appClient, 'Not_An_Agent')).to.include({ code: 'INVALID_AGENT_ID' });
    expect(await oneEvent(appClient, agent.agent_id, { thread_id: '' })).to.include({ code: 'INVALID_THREAD_ID' });
    expect(await oneEvent(appClient, agent.agent_id, oversized)).to.include({ code: 'PAYLOAD_TOO_LARGE' });
    // ... and the rate comes before existence, permission and presence.
    for (const agentId of ['no-such-agent', forbidden.agent_id, offline.agent_id, agent.agent_id]) {
      const answer = await oneEvent(appClient, agentId);
      expect(answer, agentId).to.include({ type: 'error', code: 'RATE_LIMIT_EXCEEDED', agent_id: agentId });
      expect(answer).to.have.nested.property('metadata.retry_after_seconds').that.is.greaterThan(0);
    }
    await agentClient.expectNothingBeforePong();
  });

  it('is off when the rate or the burst is 0', async function () {
    for (const overrides of [
      { rateLimitPerSecond: 0, rateLimitBurst: BURST },
      { rateLimitPerSecond: RATE, rateLimitBurst: 0 },
    ]) {
      const bridge: TestBridge = await startTestBridge(overrides);
      const { agent, appClient, agentClient } = await bridge.pair();
      const count = 200;
      expect(types(await burst(appClient, agent.agent_id, count)), JSON.stringify(overrides)).to.deep.equal(
        Array(count).fill('accepted'),
      );
      await agentReceived(agentClient, count);
      await bridge.close();
    }
  });
});
