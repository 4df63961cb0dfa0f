// L7: the idle close (HEARTBEAT_TIMEOUT) of a connection on which nothing arrives; L22: a connection that does not
// answer the bridge's WebSocket ping, noticed sooner.
import { expect } from 'chai';
import { CLOSE_CODES, LIMITS } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { startEvent } from '../helpers/events.js';
import { sample, scrape } from '../helpers/metrics.js';
import { TestClient } from '../helpers/ws-client.js';

type Kind = 'app' | 'agent';

/** One connected client of `kind`, alone on the bridge. */
async function connectOne(bridge: TestBridge, kind: Kind): Promise<TestClient<any>> {
  const org = await bridge.org();
  if (kind === 'app') return bridge.connectApp((await bridge.app(org.org_id)).token);
  return bridge.connectAgent((await bridge.agent(org.org_id)).token);
}

/** How many connections of `kind` the bridge core holds right now (read synchronously, e.g. just after advance). */
function live(bridge: TestBridge, kind: Kind): number {
  const stats = bridge.bridge.stats();
  return kind === 'app' ? stats.apps : stats.agents;
}

async function expectHeartbeatTimeout(client: TestClient<any>): Promise<void> {
  const error = await client.expect('error');
  expect(error.code).to.equal('HEARTBEAT_TIMEOUT');
  expect(error).to.not.have.property('event_id');
  expect(await client.waitForClose()).to.deep.equal({
    code: CLOSE_CODES.HEARTBEAT_TIMEOUT,
    reason: 'HEARTBEAT_TIMEOUT',
  });
}

describe('heartbeat', function () {
  // Ping/pong itself (one at a time and pipelined, both endpoints) is conformance/scenarios/hb-ping-pong.yaml, run in
  // npm run test:conformance by test/conformance/provision-command.test.ts.
  for (const kind of ['app', 'agent'] as const) {
    describe(`on the ${kind} endpoint`, function () {
      it('closes a silent connection after idleCloseMs with HEARTBEAT_TIMEOUT, not a millisecond earlier', async function () {
        const bridge = await startTestBridge();
        const client = await connectOne(bridge, kind);
        expect(live(bridge, kind)).to.equal(1);

        bridge.clock.advance(LIMITS.idleCloseMs - 1);
        expect(live(bridge, kind), 'open 1 ms before idleCloseMs').to.equal(1);
        bridge.clock.advance(1);
        expect(live(bridge, kind), 'closed at idleCloseMs').to.equal(0);
        await expectHeartbeatTimeout(client);
      });

      it('keeps a client that pings every heartbeatIntervalMs open, and counts silence from its last frame', async function () {
        const bridge = await startTestBridge();
        const client = await connectOne(bridge, kind);
        for (let i = 0; i < 6; i++) {
          bridge.clock.advance(LIMITS.heartbeatIntervalMs);
          client.send({ type: 'ping' });
          await client.expect('pong');
        }
        expect(6 * LIMITS.heartbeatIntervalMs).to.be.greaterThan(LIMITS.idleCloseMs);
        expect(live(bridge, kind)).to.equal(1);
        expect(client.isClosed).to.equal(false);

        bridge.clock.advance(LIMITS.idleCloseMs - 1);
        expect(live(bridge, kind)).to.equal(1);
        bridge.clock.advance(1);
        expect(live(bridge, kind)).to.equal(0);
        await expectHeartbeatTimeout(client);
      });

      it('counts an invalid frame as a sign of life', async function () {
        const bridge = await startTestBridge();
        const client = await connectOne(bridge, kind);

        bridge.clock.advance(LIMITS.idleCloseMs - 1);
        client.send('not json');
        expect((await client.expect('error')).code).to.equal('INVALID_JSON');
        bridge.clock.advance(LIMITS.idleCloseMs - 1);
        expect(live(bridge, kind), 'not json').to.equal(1);

        client.send({ type: 'no-such-message' });
        expect((await client.expect('error')).code).to.equal('INVALID_MESSAGE');
        bridge.clock.advance(LIMITS.idleCloseMs - 1);
        expect(live(bridge, kind), 'invalid message').to.equal(1);

        bridge.clock.advance(1);
        expect(live(bridge, kind)).to.equal(0);
        await expectHeartbeatTimeout(client);
      });
    });
  }

  it('ends an event in flight with AGENT_OFFLINE when its agent is closed for silence and does not come back within the grace', async function () {
    const bridge = await startTestBridge();
    const { agent, appClient, agentClient } = await bridge.pair();
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);

    // The app pings every heartbeat period; the agent stays silent and is closed at idleCloseMs.
    const periods = LIMITS.idleCloseMs / LIMITS.heartbeatIntervalMs;
    for (let i = 0; i < periods; i++) {
      bridge.clock.advance(LIMITS.heartbeatIntervalMs);
      await appClient.expectNothingBeforePong();
    }
    expect(bridge.bridge.stats()).to.deep.equal({ apps: 1, agents: 0, eventsInFlight: 1 });
    await expectHeartbeatTimeout(agentClient);

    // The event waits out the reconnect grace, then ends; nothing reaches the app before.
    bridge.clock.advance(LIMITS.agentReconnectGraceMs - 1);
    await appClient.expectNothingBeforePong();
    bridge.clock.advance(1);
    expect(await appClient.expect('error')).to.deep.include({
      event_id,
      agent_id: agent.agent_id,
      code: 'AGENT_OFFLINE',
    });
    expect(bridge.bridge.stats()).to.deep.equal({ apps: 1, agents: 0, eventsInFlight: 0 });
    await appClient.expectNothingBeforePong();
  });

  describe('a connection that does not answer the WebSocket ping (L22)', function () {
    /** An agent whose client does not answer pings (a half-open connection, as the bridge sees it), with an event in flight. */
    async function halfOpenAgent(bridge: TestBridge) {
      const { agent, appClient } = await bridge.pair(); // its agent's connection is replaced by the one below
      const dead = await TestClient.connect(bridge.url, 'agent', agent.token, 'header', agent.token, {
        autoPong: false,
      });
      await dead.expectNothingBeforePong();
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
      const { event_id } = await appClient.expect('accepted');
      await dead.expect('event');
      const pinged = new Promise<void>((resolve) => dead.ws.once('ping', () => resolve()));
      return { agent, appClient, dead, event_id, pinged, lastFrame: bridge.clock.now() };
    }

    it('closes it with HEARTBEAT_TIMEOUT wsPongTimeoutMs after the ping it got at wsPingAfterMs: 30 s after its last frame, not 90; the app that answers stays', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient, dead, event_id, pinged, lastFrame } = await halfOpenAgent(bridge);
      bridge.clock.advance(LIMITS.wsPingAfterMs);
      await pinged; // it left the bridge (the app, silent too, was pinged and answered by itself)
      bridge.clock.advance(LIMITS.wsPongTimeoutMs - 1);
      await appClient.expectNothingBeforePong();
      expect(dead.isClosed).to.equal(false);
      bridge.clock.advance(1);
      const error = await dead.expect('error');
      expect(error).to.deep.equal({
        type: 'error',
        code: 'HEARTBEAT_TIMEOUT',
        error: 'The WebSocket ping sent 10 s ago was not answered; the connection is taken for dead.',
      });
      expect(await dead.waitForClose()).to.deep.equal({
        code: CLOSE_CODES.HEARTBEAT_TIMEOUT,
        reason: 'HEARTBEAT_TIMEOUT',
      });
      expect(bridge.clock.now() - lastFrame, 'noticed after').to.equal(30_000);
      expect(bridge.bridge.stats().agents).to.equal(0);

      // Its event waits out the reconnect grace, as after any drop (L6); the app was never closed.
      bridge.clock.advance(LIMITS.agentReconnectGraceMs);
      expect(await appClient.expect('error')).to.deep.include({
        event_id,
        agent_id: agent.agent_id,
        code: 'AGENT_OFFLINE',
      });
      const metrics = await scrape(bridge.url);
      expect(sample(metrics, 'bridge_heartbeat_timeouts_total', { reason: 'no_pong' })).to.equal(1);
      expect(sample(metrics, 'bridge_heartbeat_timeouts_total', { reason: 'silent' })).to.equal(0);
    });

    it('without pings (WS_PING_AFTER_MS=0), the same connection is noticed only by the idle close, 90 s after its last frame', async function () {
      const bridge = await startTestBridge({ wsPingAfterMs: 0 });
      const { appClient, dead, lastFrame } = await halfOpenAgent(bridge);
      await bridge.advanceWithHeartbeats(LIMITS.idleCloseMs - LIMITS.heartbeatIntervalMs, [appClient]);
      bridge.clock.advance(LIMITS.heartbeatIntervalMs - 1);
      await appClient.expectNothingBeforePong();
      expect(dead.isClosed).to.equal(false);
      bridge.clock.advance(1);
      expect((await dead.expect('error')).code).to.equal('HEARTBEAT_TIMEOUT');
      expect(bridge.clock.now() - lastFrame, 'noticed after').to.equal(LIMITS.idleCloseMs);
    });
  });
});
