// The services of a node among several (test/server/shutdown-order.test.ts has a lone bridge's): the cluster link
// starts before anything routes through it and closes after the event log's last commit and the bridge's shutdown,
// so the other nodes heard each agent leave; the node hears the others once every part that answers them exists.
import { expect } from 'chai';
import { describePostgres } from '../helpers/databases.js';
import { nodesOnRedis } from '../helpers/cluster-nodes.js';
import { serviceLog } from '../helpers/service-log.js';

const START_ORDER = [
  'database lock',
  'database',
  'http connections',
  'cluster link',
  'registrations',
  'event log',
  'sessions',
  'unauthenticated connections',
  'event tracing',
  'lost outcomes',
  'sweeps',
  'bridge',
  'overview sampling',
  'token expiries',
  'cluster control',
  'http listening',
];

describePostgres('the order of the services of a node', function (db) {
  const node = nodesOnRedis(db);

  it('joins the cluster before what routes through it, hears the others last, and closes the link after the event log', async function () {
    const log = serviceLog();
    const n1 = await node('n1', {}, { log });
    expect(log.lines).to.deep.equal(START_ORDER.map((s) => `started ${s}`));
    log.lines.length = 0;
    await n1.close();
    expect(log.lines).to.deep.equal(START_ORDER.toReversed().map((s) => `stopped ${s}`));
  });
});
