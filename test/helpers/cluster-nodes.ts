// Bridge nodes in this process (startTestBridge: each its own HTTP port, Redis connections and frozen test clock) on
// one PostgreSQL test database and a Redis of the test's own: Redis's pub/sub channels ignore database numbers, so
// nodes sharing a Redis with another test's nodes would hear them.
import type { Config } from '../../src/config.js';
import type { StartOptions } from '../../src/server.js';
import { startTestBridge, stopAll, type TestBridge } from './bridge.js';
import type { TestDatabase } from './databases.js';
import { startTestRedis, type TestRedis } from './redis.js';

/**
 * Registers the suite's hooks (call it before hooks that start nodes): a private Redis before each test, pending
 * without TEST_REDIS_URL; after it, the nodes stopped and then Redis killed. Gives the way to start a node.
 */
export function nodesOnRedis(db: TestDatabase): StartNode {
  let redis: TestRedis | undefined;
  beforeEach(async function () {
    if (!process.env.TEST_REDIS_URL) this.skip(); // pending: Redis not installed here (scripts/services.sh)
    redis = await startTestRedis();
  });
  afterEach(async function () {
    await stopAll(); // the nodes leave while Redis is there to hear them, then Redis goes
    redis?.kill();
    redis = undefined;
  });
  const start = (nodeId: string, overrides: Partial<Config> = {}, options: Pick<StartOptions, 'log'> = {}) =>
    startTestBridge({ databaseUrl: db.url(), redisUrl: redis!.url, nodeId, testClock: true, ...overrides }, options);
  return Object.assign(start, { redisUrl: () => redis!.url });
}

export interface StartNode {
  (nodeId: string, overrides?: Partial<Config>, options?: Pick<StartOptions, 'log'>): Promise<TestBridge>;
  /** The test's private Redis (to reach it another way, through a proxy). */
  redisUrl(): string;
}
