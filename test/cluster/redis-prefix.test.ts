// Two bridges on one Redis (REDIS_PREFIX): each bridge's keys and channels start with its own prefix, so two clusters
// sharing a Redis server neither take each other's node ids nor hear each other's nodes.
import { expect } from 'chai';
import { describePostgres } from '../helpers/databases.js';
import { nodesOnRedis } from '../helpers/cluster-nodes.js';
import { sample, scrape } from '../helpers/metrics.js';
import { until } from '../helpers/redis.js';

describePostgres('two bridges on one Redis', function (db) {
  const node = nodesOnRedis(db);

  it('refuses a second node with the same NODE_ID under one prefix', async function () {
    await node('n1');
    let refused: Error | undefined;
    await node('n1').catch((err: Error) => (refused = err));
    expect(refused?.message).to.match(/NODE_ID|n1/);
  });

  it('keeps two bridges apart by REDIS_PREFIX: the same NODE_ID in each, and each a cluster of its own nodes', async function () {
    const a1 = await node('n1', { redisPrefix: 'bridge-a' });
    const b1 = await node('n1', { redisPrefix: 'bridge-b' });
    const a2 = await node('n2', { redisPrefix: 'bridge-a' });
    const peers = async (url: string) => sample(await scrape(url), 'bridge_cluster_peers');
    await until('bridge a to see its second node', async () => ((await peers(a1.url)) === 1 ? true : undefined));
    expect(await peers(a2.url)).to.equal(1);
    expect(await peers(b1.url)).to.equal(0);
  });
});
