// Where events go and how fast an app may send them: the engine of this node alone, or the cluster's across the
// nodes over Redis (REDIS_URL, O14). The one place that chooses between the two; the core never asks which it got.
import type { Config } from '../config.js';
import type { ClusterNode } from '../cluster/node.js';
import { RedisRateLimiter } from '../cluster/redis-rate-limit.js';
import type { Engine } from '../core/engine.js';
import { MemoryEngine } from '../core/memory-engine.js';
import type { EventRateLimit } from '../core/rate-limit.js';
import type { AdjustableClock } from '../shared/clock.js';

export interface ChosenEngine {
  engine: Engine;
  /** The per-app rate limit, its buckets where the engine shares them. */
  rateLimiter: EventRateLimit;
  /** Events let through while Redis did not answer the shared rate limit (always 0 on one node). */
  rateLimitFallbacks(): number;
}

export function chooseEngine(
  config: Config,
  cluster: ClusterNode | undefined,
  deps: { testClock: AdjustableClock | undefined },
): ChosenEngine {
  const engine: Engine = cluster?.engine ?? new MemoryEngine();
  const { testClock } = deps;
  // The test clock moves the shared buckets' time (Redis's own) as it moves this node's.
  const shiftMs = testClock && (() => testClock.advanced);
  const rateLimiter = engine.eventRateLimit(config.rateLimitPerSecond, config.rateLimitBurst, shiftMs);
  const fallbacks = () => (rateLimiter instanceof RedisRateLimiter ? rateLimiter.fallbacks : 0);
  return { engine, rateLimiter, rateLimitFallbacks: fallbacks };
}
