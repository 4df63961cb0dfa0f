// The cluster engine judged by the contract every engine meets (test/helpers/engine-contract.ts): three nodes on
// the memory hub, and three on a real Redis (TEST_REDIS_URL) with the shared buckets production uses. Without
// TEST_REDIS_URL the Redis cases are pending, never silently passed.
import { ClusterEngine } from '../../src/cluster/cluster-engine.js';
import { MemoryHub } from '../../src/cluster/memory-bus.js';
import { RedisBus } from '../../src/cluster/redis-bus.js';
import { RedisRateLimiter } from '../../src/cluster/redis-rate-limit.js';
import { silentLogger } from '../../src/shared/logger.js';
import { engineContract, type EngineNodes } from '../helpers/engine-contract.js';
import { until } from '../helpers/engine-rig.js';

const url = process.env.TEST_REDIS_URL;
const NODE_IDS = ['n1', 'n2', 'n3'];

engineContract('ClusterEngine on a memory hub (3 nodes, a bucket per node)', {
  nodes: 3,
  sharedBuckets: false, // the router's default: each node's own bucket
  start: async () => {
    const hub = new MemoryHub();
    return {
      engines: NODE_IDS.map((id) => new ClusterEngine(hub.join(id))),
      kill: async (i) => hub.kill(NODE_IDS[i]!),
      close: () => hub.settle(),
    };
  },
});

/** Three nodes on Redis under a prefix of their own (so no other test's keys or channels), as node.ts joins one. */
async function redisNodes(): Promise<EngineNodes> {
  const prefix = `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const buses: RedisBus[] = [];
  const close = () => Promise.all(buses.map((bus) => bus.close())).then(() => {});
  try {
    for (const nodeId of NODE_IDS) {
      // A short heartbeat and expiry: a node gone is noticed within a few tenths of a second.
      buses.push(
        await RedisBus.connect({ url: url!, nodeId, prefix, heartbeatMs: 100, expiryMs: 500, log: silentLogger }),
      );
    }
    const engines = buses.map(
      (bus) =>
        new ClusterEngine(
          bus,
          silentLogger,
          (perSecond, burst, shiftMs) =>
            new RedisRateLimiter(bus.commands, perSecond, burst, silentLogger, bus.prefix, shiftMs),
        ),
    );
    await until('every node seeing the others', () => buses.every((bus) => bus.peers().length === buses.length - 1));
    return { engines, kill: (i) => buses[i]!.close(), close };
  } catch (err) {
    await close();
    throw err;
  }
}

describe('on a real Redis (TEST_REDIS_URL)', function () {
  before(function () {
    if (!url) this.skip(); // pending: set TEST_REDIS_URL (eval "$(bash scripts/services.sh start)")
  });
  engineContract('ClusterEngine on RedisBus nodes with the shared RedisRateLimiter buckets (3 nodes)', {
    nodes: 3,
    sharedBuckets: true,
    start: redisNodes,
  });
});
