// Faults of a bridge of three nodes, each a real `bridge serve` process on a PostgreSQL database of its own test and
// a Redis this test starts (so that it can kill it): a node killed with SIGKILL, Redis killed and restarted. The
// app is never left waiting: every event that depended on what failed ends with AGENT_OFFLINE, and traffic flows
// again once the failure is over. The times measured are printed (the issue asks for them), not asserted closely.
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import { describePostgres } from '../helpers/databases.js';
import { startBridgeProcess, stopBridgeProcesses, type BridgeProcess } from '../helpers/process.js';
import { TestClient } from '../helpers/ws-client.js';
import { startTestRedis, until, type TestRedis } from '../helpers/redis.js';

const ADMIN = 'faults-test-admin-token-0123456789';

describePostgres('a bridge of three nodes under faults', function (db) {
  let redis: TestRedis;
  let nodes: BridgeProcess[];
  const clients: TestClient<any>[] = [];

  beforeEach(async function () {
    if (!process.env.TEST_REDIS_URL) this.skip(); // pending: Redis not installed here (scripts/services.sh)
    this.timeout(60_000);
    redis = await startTestRedis();
    nodes = [];
    for (const id of ['n1', 'n2', 'n3']) {
      const env = {
        DATABASE_URL: db.url(),
        REDIS_URL: redis.url,
        NODE_ID: id,
        ADMIN_TOKEN: ADMIN,
        BRIDGE_TEST_CLOCK: '1',
        LOG_LEVEL: 'warn',
      };
      nodes.push(await startBridgeProcess(env));
    }
    // Every node sees the others (one heartbeat) before the test begins.
    await until('the nodes to see each other', async () =>
      (await metric(nodes[0]!, 'bridge_cluster_peers')) === 2 ? true : undefined,
    );
  });

  afterEach(async function () {
    for (const c of clients.splice(0)) c.close();
    await stopBridgeProcesses();
    redis?.kill();
  });

  async function metric(node: BridgeProcess, name: string): Promise<number | undefined> {
    const text = await fetch(`${node.url}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.split(' ')[1]) : undefined;
  }

  async function provision() {
    const n1 = nodes[0]!;
    const org = (await n1.http('POST', '/admin/v1/organizations', { body: { name: 'Faults' } })).body;
    const app = (await n1.http('POST', `/admin/v1/organizations/${org.org_id}/apps`, { body: { name: 'App' } })).body;
    const agent = (await n1.http('POST', `/admin/v1/organizations/${org.org_id}/agents`, { body: { name: 'Agent' } }))
      .body;
    return { org, app, agent };
  }

  async function connect(node: BridgeProcess, kind: 'app' | 'agent', token: string) {
    const client = await TestClient.connect(node.url, kind, token);
    clients.push(client);
    return client;
  }

  const event = (agentId: string, thread: string) => ({
    type: 'event',
    agent_id: agentId,
    thread_id: thread,
    payload: { q: thread },
  });

  /** The agent on n2, the app on n1, and one event of the app accepted and delivered across them. */
  async function eventAcrossNodes() {
    const { org, app, agent } = await provision();
    const [n1, n2] = nodes as [BridgeProcess, BridgeProcess];
    const agentOnN2 = await connect(n2, 'agent', agent.token);
    const appOnN1 = await connect(n1, 'app', app.token);
    appOnN1.send(event(agent.agent_id, 'before'));
    const accepted = await appOnN1.expect('accepted');
    await agentOnN2.expect('event');
    return { org, app, agent, agentOnN2, appOnN1, accepted };
  }

  it('ends the events at an agent on a killed node with AGENT_OFFLINE within the node expiry plus the grace, and the agent is reachable again on another node', async function () {
    this.timeout(60_000);
    const [n1, n2, n3] = nodes as [BridgeProcess, BridgeProcess, BridgeProcess];
    const { org, app, agent, appOnN1, accepted } = await eventAcrossNodes();

    const killedAt = Date.now();
    n2.child.kill('SIGKILL');
    // n1 counts the agent gone once n2's heartbeat has expired; its event then waits the grace (moved, not waited).
    await until('n1 to count n2 gone', async () =>
      (await metric(n1, 'bridge_cluster_peers')) === 1 ? true : undefined,
    );
    const noticedMs = Date.now() - killedAt;
    await n1.http('POST', '/admin/v1/test/clock', { body: { advance_ms: LIMITS.agentReconnectGraceMs } });
    const offline = await appOnN1.expect('error');
    const offlineMs = Date.now() - killedAt;
    expect(offline).to.include({ code: 'AGENT_OFFLINE', event_id: accepted.event_id });
    expect(noticedMs).to.be.below(LIMITS.nodeExpiryMs + LIMITS.nodeHeartbeatMs + 2_000);

    const reconnectedAt = Date.now();
    const agentOnN3 = await connect(n3, 'agent', agent.token);
    // As an app would: once the directory (which asks the record, as an event does) shows it online on n1.
    await until("the agent online again in n1's directory", async () => {
      const directory = await n1.http('GET', `/v1/organizations/${org.org_id}/agents`, { token: app.token });
      return directory.body.agents?.[0]?.status === 'online' ? true : undefined;
    });
    appOnN1.send(event(agent.agent_id, 'after'));
    expect(await appOnN1.expect('accepted')).to.include({ agent_id: agent.agent_id });
    expect(await agentOnN3.expect('event')).to.deep.include({ payload: { q: 'after' } });
    console.log(
      `      SIGKILL: n1 counted n2 gone after ${noticedMs} ms (expiry ${LIMITS.nodeExpiryMs} ms + heartbeat ${LIMITS.nodeHeartbeatMs} ms); AGENT_OFFLINE ${offlineMs} ms after the kill with the ${LIMITS.agentReconnectGraceMs / 1000} s grace moved on the test clock (${noticedMs + LIMITS.agentReconnectGraceMs} ms in real time); reachable again on n3 ${Date.now() - reconnectedAt} ms after reconnecting`,
    );
  });

  it('ends the events that crossed nodes when Redis dies, says not ready meanwhile, and carries traffic again once Redis is back', async function () {
    this.timeout(60_000);
    const n1 = nodes[0]!;
    const { agent, agentOnN2, appOnN1, accepted } = await eventAcrossNodes();

    const killedAt = Date.now();
    redis.kill();
    const cut = await appOnN1.expect('error', 10_000);
    const cutMs = Date.now() - killedAt;
    expect(cut).to.include({ code: 'AGENT_OFFLINE', event_id: accepted.event_id });
    expect(cut.error).to.match(/link between the nodes was cut/);
    const notReady = await n1.http('GET', '/readyz', { token: null });
    expect(notReady.status).to.equal(500);
    expect(notReady.body).to.include({ code: 'INTERNAL_ERROR' });
    appOnN1.send(event(agent.agent_id, 'while-cut'));
    expect(await appOnN1.expect('error')).to.include({ code: 'AGENT_OFFLINE' });

    const restartedAt = Date.now();
    await redis.start();
    await until('n1 ready again', async () =>
      (await n1.http('GET', '/readyz', { token: null })).status === 200 ? true : undefined,
    );
    const readyMs = Date.now() - restartedAt;
    // The agent stayed connected to n2 all along; once the nodes have told each other again, it is reachable.
    let last: unknown;
    const delivered = await until('an event across nodes again', async () => {
      appOnN1.send(event(agent.agent_id, 'after'));
      const answer = await appOnN1.waitForMessage(5_000);
      last = answer;
      return answer.type === 'accepted' ? answer : undefined;
    }).catch((err: Error) => {
      throw new Error(`${err.message}; the last answer: ${JSON.stringify(last)}`);
    });
    expect(delivered).to.include({ agent_id: agent.agent_id });
    expect(await agentOnN2.expect('event')).to.deep.include({ payload: { q: 'after' } });
    await agentOnN2.expectNothingBeforePong(); // nothing of the cut-off event reached the agent again
    console.log(
      `      Redis killed: the event across nodes ended ${cutMs} ms later (AGENT_OFFLINE); Redis restarted: n1 ready after ${readyMs} ms, an event across nodes accepted and delivered ${Date.now() - restartedAt} ms after the restart`,
    );
  });
});
