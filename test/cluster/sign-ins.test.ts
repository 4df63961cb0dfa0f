// One dashboard sign-in for every node (D1): three real `bridge serve` processes on one PostgreSQL database and a
// Redis of the test's own, as behind a round-robin proxy. Signed in through one node, the operator uses the others,
// stays signed in when that node restarts, and a sign-out through any node ends the sign-in on all of them.
import { expect } from 'chai';
import { ADMIN_TOKEN } from '../helpers/bridge.js';
import { describePostgres } from '../helpers/databases.js';
import { startBridgeProcess, stopBridgeProcesses, type BridgeProcess } from '../helpers/process.js';
import { startTestRedis, type TestRedis } from '../helpers/redis.js';
import { send, signIn } from '../dashboard/cookie-http.js';

describePostgres('dashboard sign-ins on three nodes', function (db) {
  let redis: TestRedis;
  const env = (id: string) => ({
    DATABASE_URL: db.url(),
    REDIS_URL: redis.url,
    NODE_ID: id,
    ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
  });

  beforeEach(async function () {
    if (!process.env.TEST_REDIS_URL) this.skip(); // pending: Redis not installed here (scripts/services.sh)
    redis = await startTestRedis();
  });

  afterEach(async function () {
    await stopBridgeProcesses();
    redis?.kill();
  });

  it('signs in through node 1, works through nodes 2 and 3, outlives a restart of node 1, and signs out everywhere from node 3', async function () {
    this.timeout(60_000);
    const nodes: BridgeProcess[] = [];
    for (const id of ['n1', 'n2', 'n3']) nodes.push(await startBridgeProcess(env(id)));
    const [n1, n2, n3] = nodes as [BridgeProcess, BridgeProcess, BridgeProcess];

    const { cookie, csrf } = await signIn(n1);
    for (const node of [n2, n3]) {
      expect((await send(node, 'GET', '/dashboard/session', { cookie })).status, node.url).to.equal(200);
      expect((await send(node, 'GET', '/admin/v1/organizations', { cookie })).status, node.url).to.equal(200);
    }
    // A write by cookie through another node: the CSRF token made on node 1, the origin of the node written to.
    const made = await send(n2, 'POST', '/admin/v1/organizations', {
      cookie,
      csrf,
      origin: n2.url,
      body: { name: 'Signed in elsewhere' },
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);

    n1.child.kill('SIGTERM');
    expect((await n1.exited).code).to.equal(0);
    const again = await startBridgeProcess({ ...env('n1'), PORT: String(n1.port) });
    expect((await send(again, 'GET', '/admin/v1/organizations', { cookie })).status).to.equal(200);

    const out = await send(n3, 'DELETE', '/dashboard/session', { cookie, csrf, origin: n3.url });
    expect(out.status).to.equal(204);
    for (const node of [again, n2, n3]) {
      const refused = await send(node, 'GET', '/admin/v1/organizations', { cookie });
      expect(refused.status, node.url).to.equal(401);
      expect(refused.body.code).to.equal('UNAUTHORIZED');
    }
  });
});
