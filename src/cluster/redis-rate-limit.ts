// The per-app token bucket (§7.1, L10) shared by every node: one Lua script takes a token atomically in Redis,
// on the bridge's clock (so the test clock refills it as on one node). When Redis does not answer, this node's
// own bucket decides meanwhile (each node then admits up to the whole rate: counted and logged, never blocking).
import type { Redis } from 'ioredis';
import { RateLimiter, type EventRateLimit } from '../core/rate-limit.js';
import type { Logger } from '../shared/logger.js';
import { QUESTION_TIMEOUT_MS, withTimeout } from './redis-bus.js';

// KEYS[1] the bucket; ARGV rate per second, burst, now (ms). Returns the seconds to wait, as text (a Lua number
// would reach the client truncated to an integer).
const TAKE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[2]) or now
if now > at then
  tokens = math.min(burst, tokens + (now - at) / 1000 * rate)
  at = now
end
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 60000)
return tostring(wait)`;

/** The script as a command of the client (ioredis sends it by its SHA, and the text once when Redis lacks it). */
type WithTake = Redis & { bridgeTakeToken(key: string, perSecond: number, burst: number, now: number): Promise<string> };

export class RedisRateLimiter implements EventRateLimit {
  /** Events decided by this node's own bucket because Redis did not answer. */
  fallbacks = 0;
  private readonly local: RateLimiter;
  private readonly redis: WithTake;

  constructor(
    redis: Redis,
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly log: Logger,
    private readonly prefix = 'bridge',
  ) {
    this.local = new RateLimiter(perSecond, burst);
    redis.defineCommand('bridgeTakeToken', { numberOfKeys: 1, lua: TAKE });
    this.redis = redis as WithTake; // defineCommand added the method; its type cannot say so
  }

  take(appId: string, now: number): number | Promise<number> {
    if (!this.local.enabled) return 0;
    return withTimeout(this.redis.bridgeTakeToken(`${this.prefix}:rate:${appId}`, this.perSecond, this.burst, now), QUESTION_TIMEOUT_MS).then(
      (wait) => Number(wait),
      (err: Error) => {
        if (this.fallbacks++ % 1000 === 0) this.log.warn({ err: err.message, fallbacks: this.fallbacks }, 'the shared rate limit did not answer: this node\'s own bucket decides');
        return this.local.take(appId, now);
      },
    );
  }
}
