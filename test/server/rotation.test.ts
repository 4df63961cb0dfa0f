// Token rotation (H5, openapi rotate-token): the new token works at once, the previous one keeps working for
// LIMITS.rotationGraceMs and then gets UNAUTHORIZED, on new connections and on the live ones opened with it; a
// token already in its grace keeps its own end; rotation survives a restart; deactivated owners cannot rotate.
import { expect } from 'chai';
import { CLOSE_CODES, LIMITS } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { describeEachDatabase } from '../helpers/databases.js';
import type { TestClient } from '../helpers/ws-client.js';

type Kind = 'app' | 'agent';
const KINDS: Kind[] = ['app', 'agent'];
const MINUTE = 60_000;
const GRACE = LIMITS.rotationGraceMs;

const adminPath = (kind: Kind, id: string, action: 'rotate-token' | 'deactivate') =>
  `/admin/v1/${kind}s/${id}/${action}`;
const rotatedSchema = (kind: Kind) => (kind === 'app' ? 'AppTokenRotated' : 'AgentTokenRotated');
const ownerOf = (token: string) => token.split('_')[1]!;

/** A fresh organization with one app or agent, nothing connected. */
async function register(bridge: TestBridge, kind: Kind): Promise<{ orgId: string; id: string; token: string }> {
  const org = await bridge.org();
  if (kind === 'app') {
    const app = await bridge.app(org.org_id);
    return { orgId: org.org_id, id: app.app_id, token: app.token };
  }
  const agent = await bridge.agent(org.org_id);
  return { orgId: org.org_id, id: agent.agent_id, token: agent.token };
}

async function rotate(
  bridge: TestBridge,
  kind: Kind,
  id: string,
): Promise<{ token: string; previous_token_expires_at: string }> {
  const res = await bridge.http('POST', adminPath(kind, id, 'rotate-token'), { schema: rotatedSchema(kind) });
  expect(res.status, `rotate ${kind} ${id}`).to.equal(200);
  return res.body;
}

function connect(bridge: TestBridge, kind: Kind, token: string): Promise<TestClient<any>> {
  return kind === 'app' ? bridge.connectApp(token) : bridge.connectAgent(token);
}

/** The token authenticates: a new connection answers a ping with a pong. The probe is closed again. */
async function expectAccepted(bridge: TestBridge, kind: Kind, token: string, when: string): Promise<void> {
  const client = await connect(bridge, kind, token);
  try {
    await client.expectNothingBeforePong();
  } catch (err) {
    throw new Error(`${when}: the ${kind} token should still connect: ${(err as Error).message}`, { cause: err });
  }
  client.close();
  await client.waitForClose();
  if (kind === 'agent') await bridge.untilAgentOnline(ownerOf(token), false);
}

/** A connection error: one `error` without event_id, then the code's close code with the code as reason. */
async function expectConnectionError(
  client: TestClient<any>,
  code: 'UNAUTHORIZED' | 'TOKEN_REVOKED',
  when: string,
): Promise<void> {
  const error = await client.expect('error');
  expect(error, when).to.deep.equal({ type: 'error', code, error: error.error });
  expect(error.error).to.be.a('string').that.is.not.empty;
  expect(await client.waitForClose(), when).to.deep.equal({ code: CLOSE_CODES[code], reason: code });
}

/** The token is refused on connect with UNAUTHORIZED. */
async function expectUnauthorized(bridge: TestBridge, kind: Kind, token: string, when: string): Promise<void> {
  await expectConnectionError(await connect(bridge, kind, token), 'UNAUTHORIZED', when);
}

describe('token rotation', function () {
  for (const kind of KINDS) {
    describe(`${kind} tokens`, function () {
      it(`issues a new ${kind} token that works at once and says the previous one ends after the rotation grace`, async function () {
        const bridge = await startTestBridge();
        const owner = await register(bridge, kind);
        bridge.clock.advance(5 * MINUTE); // the grace counts from the rotation, not from the token's creation
        const rotatedAt = bridge.clock.now();

        const rotated = await rotate(bridge, kind, owner.id);
        expect(rotated.token).to.not.equal(owner.token);
        expect(rotated.token.startsWith(`${kind === 'app' ? 'rlk' : 'rla'}_${owner.id}_`)).to.equal(true);
        expect(Date.parse(rotated.previous_token_expires_at)).to.equal(rotatedAt + GRACE);
        expect(new Date(rotated.previous_token_expires_at).toISOString()).to.equal(rotated.previous_token_expires_at);

        await expectAccepted(bridge, kind, rotated.token, 'right after the rotation');
        await expectAccepted(bridge, kind, owner.token, 'right after the rotation (old token)');
      });

      it(`keeps the old ${kind} token working until the grace ends, then answers UNAUTHORIZED`, async function () {
        const bridge = await startTestBridge();
        const owner = await register(bridge, kind);
        const rotatedAt = bridge.clock.now();
        const { token: fresh } = await rotate(bridge, kind, owner.id);
        const at = (ms: number) => bridge.clock.advance(rotatedAt + ms - bridge.clock.now());

        at(59 * MINUTE);
        await expectAccepted(bridge, kind, owner.token, 'at 59 min');
        at(GRACE - 1);
        await expectAccepted(bridge, kind, owner.token, 'at 59:59.999');
        await expectAccepted(bridge, kind, fresh, 'new token at 59:59.999');
        at(GRACE);
        await expectUnauthorized(bridge, kind, owner.token, 'at exactly the grace end');
        await expectAccepted(bridge, kind, fresh, 'new token at the grace end');
        at(61 * MINUTE);
        await expectUnauthorized(bridge, kind, owner.token, 'at 61 min');
        await expectAccepted(bridge, kind, fresh, 'new token at 61 min');
      });

      it(`keeps each ${kind} token's own end when it is rotated again inside the grace (H5)`, async function () {
        const bridge = await startTestBridge();
        const owner = await register(bridge, kind);
        const t0 = bridge.clock.now();
        const at = (ms: number) => bridge.clock.advance(t0 + ms - bridge.clock.now());
        const token1 = owner.token;

        const first = await rotate(bridge, kind, owner.id);
        expect(Date.parse(first.previous_token_expires_at)).to.equal(t0 + GRACE);
        at(20 * MINUTE);
        const second = await rotate(bridge, kind, owner.id);
        expect(Date.parse(second.previous_token_expires_at)).to.equal(t0 + 20 * MINUTE + GRACE);
        const token2 = first.token;
        const token3 = second.token;

        await expectAccepted(bridge, kind, token1, 'token 1 at 20 min');
        await expectAccepted(bridge, kind, token2, 'token 2 at 20 min');
        await expectAccepted(bridge, kind, token3, 'token 3 at 20 min');

        at(GRACE - 1);
        await expectAccepted(bridge, kind, token1, 'token 1 just before t0 + grace');
        at(GRACE);
        await expectUnauthorized(bridge, kind, token1, 'token 1 at t0 + grace');
        await expectAccepted(bridge, kind, token2, 'token 2 at t0 + grace');

        at(20 * MINUTE + GRACE - 1);
        await expectAccepted(bridge, kind, token2, 'token 2 just before t0 + 20 min + grace');
        at(20 * MINUTE + GRACE);
        await expectUnauthorized(bridge, kind, token2, 'token 2 at t0 + 20 min + grace');
        await expectUnauthorized(bridge, kind, token1, 'token 1 at t0 + 20 min + grace');
        await expectAccepted(bridge, kind, token3, 'token 3 at t0 + 20 min + grace');

        at(20 * MINUTE + 2 * GRACE);
        await expectAccepted(bridge, kind, token3, 'token 3 long after');
      });

      it(`answers 404 NOT_FOUND for an unknown ${kind} and 400 INVALID_REQUEST for a deactivated one`, async function () {
        const bridge = await startTestBridge();
        const missing = await bridge.http('POST', adminPath(kind, `no-such-${kind}`, 'rotate-token'));
        expect(missing.status).to.equal(404);
        expect(missing.body.code).to.equal('NOT_FOUND');

        const owner = await register(bridge, kind);
        const deactivated = await bridge.http('POST', adminPath(kind, owner.id, 'deactivate'), {
          schema: kind === 'app' ? 'App' : 'Agent',
        });
        expect(deactivated.status).to.equal(200);
        const refused = await bridge.http('POST', adminPath(kind, owner.id, 'rotate-token'));
        expect(refused.status).to.equal(400);
        expect(refused.body.code).to.equal('INVALID_REQUEST');
        expect(refused.body.error).to.be.a('string').that.is.not.empty;
        // No token was issued: the owner's token is still revoked, not replaced.
        await expectConnectionError(
          await connect(bridge, kind, owner.token),
          'TOKEN_REVOKED',
          'after the refused rotation',
        );
      });
    });
  }

  it('accepts the old app token on the HTTP directory during the grace and answers 401 UNAUTHORIZED after it', async function () {
    const bridge = await startTestBridge();
    const owner = await register(bridge, 'app');
    const { token: fresh } = await rotate(bridge, 'app', owner.id);
    const path = `/v1/organizations/${owner.orgId}/agents`;

    bridge.clock.advance(GRACE - 1);
    expect((await bridge.http('GET', path, { token: owner.token, schema: 'AgentDirectory' })).status).to.equal(200);
    bridge.clock.advance(1);
    const refused = await bridge.http('GET', path, { token: owner.token });
    expect(refused.status).to.equal(401);
    expect(refused.body.code).to.equal('UNAUTHORIZED');
    expect((await bridge.http('GET', path, { token: fresh, schema: 'AgentDirectory' })).status).to.equal(200);
  });

  describe('live connections', function () {
    it("closes app connections opened with the old token, before or after the rotation, exactly when the grace ends; the new token's stays open", async function () {
      const bridge = await startTestBridge();
      const owner = await register(bridge, 'app');
      const before = await bridge.connectApp(owner.token);
      const { token: fresh } = await rotate(bridge, 'app', owner.id);
      const after = await bridge.connectApp(owner.token);
      const renewed = await bridge.connectApp(fresh);

      await bridge.advanceWithHeartbeats(GRACE - 1, [before, after, renewed]);
      bridge.clock.advance(1);
      await expectConnectionError(before, 'UNAUTHORIZED', 'opened before the rotation');
      await expectConnectionError(after, 'UNAUTHORIZED', 'opened after the rotation');
      await renewed.expectNothingBeforePong();
      await bridge.advanceWithHeartbeats(2 * LIMITS.idleCloseMs, [renewed]);
    });

    it("closes each app connection at the end of its own token's grace after two rotations", async function () {
      const bridge = await startTestBridge();
      const owner = await register(bridge, 'app');
      const c1 = await bridge.connectApp(owner.token);
      const { token: token2 } = await rotate(bridge, 'app', owner.id);
      const c2 = await bridge.connectApp(token2);
      await bridge.advanceWithHeartbeats(20 * MINUTE, [c1, c2]);
      const { token: token3 } = await rotate(bridge, 'app', owner.id);
      const c3 = await bridge.connectApp(token3);

      await bridge.advanceWithHeartbeats(GRACE - 20 * MINUTE - 1, [c1, c2, c3]);
      bridge.clock.advance(1);
      await expectConnectionError(c1, 'UNAUTHORIZED', 'token 1 at t0 + grace');
      await bridge.advanceWithHeartbeats(20 * MINUTE - 1, [c2, c3]);
      bridge.clock.advance(1);
      await expectConnectionError(c2, 'UNAUTHORIZED', 'token 2 at t0 + 20 min + grace');
      await c3.expectNothingBeforePong();
    });

    it('closes an agent connection opened with the old token before the rotation when the grace ends, not a millisecond before', async function () {
      const bridge = await startTestBridge();
      const owner = await register(bridge, 'agent');
      const agentClient = await bridge.connectAgent(owner.token);
      const { token: fresh } = await rotate(bridge, 'agent', owner.id);

      await bridge.advanceWithHeartbeats(GRACE - 1, [agentClient]);
      bridge.clock.advance(1);
      await expectConnectionError(agentClient, 'UNAUTHORIZED', 'at the grace end');
      await bridge.untilAgentOnline(owner.id, false);
      const renewed = await bridge.connectAgent(fresh);
      await renewed.expectNothingBeforePong();
    });

    it('closes an agent connection opened with the old token after the rotation when the grace ends', async function () {
      const bridge = await startTestBridge();
      const owner = await register(bridge, 'agent');
      await rotate(bridge, 'agent', owner.id);
      bridge.clock.advance(30 * MINUTE);
      const agentClient = await bridge.connectAgent(owner.token);

      await bridge.advanceWithHeartbeats(GRACE - 30 * MINUTE - 1, [agentClient]);
      bridge.clock.advance(1);
      await expectConnectionError(agentClient, 'UNAUTHORIZED', 'at the grace end');
    });

    it('leaves an agent that moved to the new token during the grace connected when the grace ends', async function () {
      const bridge = await startTestBridge();
      const owner = await register(bridge, 'agent');
      const old = await bridge.connectAgent(owner.token);
      const { token: fresh } = await rotate(bridge, 'agent', owner.id);
      await bridge.advanceWithHeartbeats(10 * MINUTE, [old]);

      const renewed = await bridge.connectAgent(fresh);
      expect((await old.expect('error')).code).to.equal('CONNECTION_REPLACED');
      expect((await old.waitForClose()).code).to.equal(CLOSE_CODES.CONNECTION_REPLACED);
      await bridge.advanceWithHeartbeats(GRACE - 10 * MINUTE + LIMITS.idleCloseMs, [renewed]);
      await bridge.untilAgentOnline(owner.id, true);
    });
  });

  describe('an agent with events in flight', function () {
    /** App and agent connected, the agent's token rotated; an event delivered during the grace is answered. */
    async function rotatedPair(bridge: TestBridge) {
      const { org, app, agent, appClient, agentClient } = await bridge.pair();
      const rotatedAt = bridge.clock.now();
      const { token: fresh } = await rotate(bridge, 'agent', agent.agent_id);

      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'early', payload: { n: 1 } });
      const early = await appClient.expect('accepted');
      expect((await agentClient.expect('event')).event_id).to.equal(early.event_id);
      agentClient.send({ type: 'reply', event_id: early.event_id, content: 'still here', done: true });
      expect(await appClient.expect('reply')).to.include({ event_id: early.event_id, reply: 'still here' });

      // Close to the grace end, one more event reaches the agent on its old-token connection.
      await bridge.advanceWithHeartbeats(GRACE - MINUTE, [appClient, agentClient]);
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'late', payload: { n: 2 } });
      const { event_id } = await appClient.expect('accepted');
      const delivered = await agentClient.expect('event');
      expect(delivered).to.include({ event_id, app_id: app.app_id, thread_id: 'late' });
      agentClient.send({ type: 'token', event_id, token: 'Half ' });
      expect(await appClient.expect('token')).to.include({ event_id, token: 'Half ' });

      await bridge.advanceWithHeartbeats(rotatedAt + GRACE - 1 - bridge.clock.now(), [appClient, agentClient]);
      bridge.clock.advance(1);
      await expectConnectionError(agentClient, 'UNAUTHORIZED', "the agent's old-token connection at the grace end");
      await bridge.untilAgentOnline(agent.agent_id, false);
      return { org, app, agent, appClient, fresh, event_id };
    }

    it('delivers events during the grace, and lets the agent reconnect with the new token and finish the event in flight', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient, fresh, event_id } = await rotatedPair(bridge);

      bridge.clock.advance(LIMITS.agentReconnectGraceMs - 1);
      const back = await bridge.connectAgent(fresh);
      back.send({ type: 'token', event_id, token: 'done' });
      back.send({ type: 'reply', event_id, content: '', done: true });
      expect(await appClient.expect('token')).to.include({ event_id, token: 'done' });
      const reply = await appClient.expect('reply');
      expect(reply).to.include({ event_id, agent_id: agent.agent_id, thread_id: 'late', reply: 'Half done' });
      expect(reply.payload).to.deep.equal({ n: 2 });

      bridge.clock.advance(LIMITS.agentReconnectGraceMs);
      await appClient.expectNothingBeforePong();
      await back.expectNothingBeforePong();
    });

    it('ends the event in flight with AGENT_OFFLINE after the reconnect grace when the agent only has its old token', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient, event_id } = await rotatedPair(bridge);

      bridge.clock.advance(1000);
      await expectUnauthorized(bridge, 'agent', agent.token, "the agent's old token after the grace");
      bridge.clock.advance(LIMITS.agentReconnectGraceMs - 1000 - 1);
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
    });
  });

  describeEachDatabase('across a restart', function (db) {
    it('keeps the rotated tokens and their grace end, and closes old-token connections when the grace ends after the restart', async function () {
      const databaseUrl = db.url();
      const first = await startTestBridge({ databaseUrl });
      const org = await first.org();
      const app = await first.app(org.org_id);
      const agent = await first.agent(org.org_id);
      first.clock.advance(10 * MINUTE);
      const appRotated = await rotate(first, 'app', app.app_id);
      const agentRotated = await rotate(first, 'agent', agent.agent_id);
      const graceEnd = Date.parse(appRotated.previous_token_expires_at);
      expect(Date.parse(agentRotated.previous_token_expires_at)).to.equal(graceEnd);
      await first.close();

      const second = await startTestBridge({ databaseUrl });
      expect(second.clock.now()).to.be.below(graceEnd);
      const oldApp = await second.connectApp(app.token);
      const oldAgent = await second.connectAgent(agent.token);
      const newApp = await second.connectApp(appRotated.token);
      await oldApp.expectNothingBeforePong();
      await oldAgent.expectNothingBeforePong();

      await second.advanceWithHeartbeats(graceEnd - 1 - second.clock.now(), [oldApp, oldAgent, newApp]);
      second.clock.advance(1);
      await expectConnectionError(oldApp, 'UNAUTHORIZED', 'old app connection at the grace end after the restart');
      await expectConnectionError(oldAgent, 'UNAUTHORIZED', 'old agent connection at the grace end after the restart');
      await newApp.expectNothingBeforePong();
      await second.untilAgentOnline(agent.agent_id, false);

      second.clock.advance(MINUTE);
      await expectUnauthorized(second, 'app', app.token, 'old app token after the restart');
      await expectUnauthorized(second, 'agent', agent.token, 'old agent token after the restart');
      await expectAccepted(second, 'app', appRotated.token, 'new app token after the restart');
      await expectAccepted(second, 'agent', agentRotated.token, 'new agent token after the restart');
    });
  });
});
