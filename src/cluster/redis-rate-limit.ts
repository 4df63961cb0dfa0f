// The per-app token bucket (§7.1, L10) shared by every node: one Lua script takes a token atomically in Redis.
// Its time is Redis's own (TIME), the one clock every node agrees on: the nodes' monotonic clocks have no common
// origin, and their wall clocks drift apart and step on their own. Redis's clock is a wall clock too, so a step
// back counts as no time (as on one node, core/rate-limit.ts): it refills nothing for one take and locks nobody
// out (the bucket's time follows the clock back); a step forward refills at most a full bucket; and a wait is
// never more than one refill period. When Redis does not
// answer, this node's own bucket decides meanwhile (each node then admits up to the whole rate: counted and
// logged, never blocking).
import type { Redis } from 'ioredis';
import { RateLimiter, type EventRateLimit } from '../core/rate-limit.js';
import type { Logger } from '../shared/logger.js';
import { QUESTION_TIMEOUT_MS, withTimeout } from './redis-bus.js';

// KEYS[1] the bucket; ARGV rate per second, burst, shift (ms added to Redis's time: the test clock's advance, 0 in
// production). Returns the seconds to wait, as text (a Lua number would reach the client truncated to an
// integer). TIME in a script needs effects replication: the default from Redis 5 on, the only mode from 7.
const TAKE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[2]) or now
local elapsed = math.max(now - at, 0)
tokens = math.min(burst, tokens + elapsed / 1000 * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 60000)
return tostring(wait)`;

/** The script as a command of the client (ioredis sends it by its SHA, and the text once when Redis lacks it). */
type WithTake = Redis & {
  bridgeTakeToken(key: string, perSecond: number, burst: number, shiftMs: number): Promise<string>;
};

export class RedisRateLimiter implements EventRateLimit {
  /** Events decided by this node's own bucket because Redis did not answer. */
  fallbacks = 0;
  private readonly local: RateLimiter;
  private readonly redis: WithTake;

  /** `shiftMs`: added to Redis's time (the test clock's advance, so that it refills the bucket as on one node). */
  constructor(
    redis: Redis,
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly log: Logger,
    private readonly prefix = 'bridge',
    private readonly shiftMs: () => number = () => 0,
  ) {
    this.local = new RateLimiter(perSecond, burst);
    redis.defineCommand('bridgeTakeToken', { numberOfKeys: 1, lua: TAKE });
    this.redis = redis as WithTake; // defineCommand added the method; its type cannot say so
  }

  /** `now`, the node's monotonic reading, serves its own bucket only (Redis keeps the shared one's time). */
  take(appId: string, now: number): number | Promise<number> {
    if (!this.local.enabled) return 0;
    return withTimeout(
      this.redis.bridgeTakeToken(
        `${this.prefix}:rate:${appId}`,
        this.perSecond,
        this.burst,
        Math.round(this.shiftMs()),
      ),
      QUESTION_TIMEOUT_MS,
    ).then(
      (wait) => Number(wait),
      (err: Error) => {
        if (this.fallbacks++ % 1000 === 0)
          this.log.warn(
            { err: err.message, fallbacks: this.fallbacks },
            "the shared rate limit did not answer: this node's own bucket decides",
          );
        return this.local.take(appId, now);
      },
    );
  }
}
