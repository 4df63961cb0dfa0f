// L7: the idle close (HEARTBEAT_TIMEOUT) of a connection on which nothing arrives.
import { expect } from 'chai';
import { CLOSE_CODES, LIMITS } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { startEvent } from '../helpers/events.js';
import type { TestClient } from '../helpers/ws-client.js';

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
  expect(await client.waitForClose()).to.deep.equal({ code: CLOSE_CODES.HEARTBEAT_TIMEOUT, reason: 'HEARTBEAT_TIMEOUT' });
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

  it("ends an event in flight with AGENT_OFFLINE when its agent is closed for silence and does not come back within the grace", async function () {
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
    expect(await appClient.expect('error')).to.deep.include({ event_id, agent_id: agent.agent_id, code: 'AGENT_OFFLINE' });
    expect(bridge.bridge.stats()).to.deep.equal({ apps: 1, agents: 0, eventsInFlight: 0 });
    await appClient.expectNothingBeforePong();
  });
});
