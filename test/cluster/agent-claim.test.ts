// An agent's handshake on one node is answered only once its claim is in Redis (O14): an app that hears of the agent
// then reaches it through any node. Node n1 reaches Redis through a proxy that makes the claim's write slow, so the
// window between the handshake and the claim is wide and certain rather than a race; n2 reaches Redis directly.
import { expect } from 'chai';
import { CLOSE_CODES, ERROR_MESSAGES } from '../../generated/index.js';
import { describePostgres } from '../helpers/databases.js';
import { nodesOnRedis } from '../helpers/cluster-nodes.js';
import { closeTcpProxies, startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import type { TestBridge } from '../helpers/bridge.js';

/** Much longer than n2's own round trip to Redis for the record: before the claim lands, n2 would find nothing. */
const SLOW_WRITE_MS = 400;

describePostgres("an agent's claim before its handshake is answered", function (db) {
  const node = nodesOnRedis(db);
  let n1: TestBridge, n2: TestBridge, toRedis: TcpProxy;

  beforeEach(async function () {
    n2 = await node('n2');
    toRedis = await startTcpProxy(node.redisUrl());
    n1 = await node('n1', { redisUrl: toRedis.url });
  });
  afterEach(async () => {
    await toRedis?.restore();
    await closeTcpProxies();
  });

  async function setup() {
    const org = await n2.org();
    const app = await n2.app(org.org_id);
    const agent = await n2.agent(org.org_id);
    return { app, agent, appOnN2: await n2.connectApp(app.token) };
  }

  it('delivers an event sent through another node right after the handshake, however slow the claim', async function () {
    const { agent, appOnN2 } = await setup();
    toRedis.delay(SLOW_WRITE_MS);
    const opening = Date.now();
    const agentOnN1 = await n1.connectAgent(agent.token);
    const answeredMs = Date.now() - opening;
    appOnN2.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: { q: 'at once' } });
    expect(await appOnN2.expect('accepted')).to.include({ agent_id: agent.agent_id });
    expect(await agentOnN1.expect('event')).to.deep.include({ payload: { q: 'at once' } });
    expect(answeredMs, 'the handshake waited for the claim').to.be.at.least(SLOW_WRITE_MS - 50);
  });

  it('refuses the agent with INTERNAL_ERROR when Redis does not take its claim, rather than leaving it hanging', async function () {
    const { agent } = await setup();
    toRedis.stall();
    const agentOnN1 = await n1.connectAgent(agent.token);
    const refused = await agentOnN1.expect('error', 3_000);
    expect(refused).to.include({ code: 'INTERNAL_ERROR' });
    expect(refused.error).to.equal(ERROR_MESSAGES.INTERNAL_ERROR.cluster_link);
    expect(await agentOnN1.waitForClose()).to.deep.equal({
      code: CLOSE_CODES.INTERNAL_ERROR,
      reason: 'INTERNAL_ERROR',
    });
  });
});
