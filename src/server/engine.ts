// Where events go and how fast an app may send them: on this node alone, or across the nodes over Redis
// (REDIS_URL, O14). The one place that chooses between the two.
import type { Config } from '../config.js';
import type { ClusterNode } from '../cluster/node.js';
import { RedisRateLimiter } from '../cluster/redis-rate-limit.js';
import { RateLimiter, type EventRateLimit } from '../core/rate-limit.js';
import { LocalRouter, type Router } from '../core/router.js';
import type { AdjustableClock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';

export interface Engine {
  router: Router;
  rateLimiter: EventRateLimit;
  /** Events let through while Redis did not answer the shared rate limit (always 0 on one node). */
  rateLimitFallbacks(): number;
}

export function chooseEngine(
  config: Config,
  cluster: ClusterNode | undefined,
  deps: { testClock: AdjustableClock | undefined; log: Logger },
): Engine {
  if (!cluster) {
    const rateLimiter = new RateLimiter(config.rateLimitPerSecond, config.rateLimitBurst);
    return { router: new LocalRouter(), rateLimiter, rateLimitFallbacks: () => 0 };
  }
  const { testClock } = deps;
  const rateLimiter = new RedisRateLimiter(
    cluster.bus.commands,
    config.rateLimitPerSecond,
    config.rateLimitBurst,
    deps.log,
    cluster.bus.prefix,
    // The test clock moves the shared bucket's time (Redis's own) as it moves this node's.
    testClock && (() => testClock.advanced),
  );
  return { router: cluster.router, rateLimiter, rateLimitFallbacks: () => rateLimiter.fallbacks };
}
