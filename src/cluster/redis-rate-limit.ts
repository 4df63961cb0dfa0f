// The per-app token bucket (§7.1, L10) shared by every node: one Lua script takes a token atomically in Redis.
// Its time is Redis's own (TIME), the one clock every node agrees on: the nodes' monotonic clocks have no common
// origin, and their wall clocks drift apart and step on their own. Redis's clock is a wall clock too, so a step
// back counts as no time (as on one node, core/rate-limit.ts): it refills nothing for one take and locks nobody
// out (the bucket's time follows the clock back); a step forward refills at most a full bucket; and a wait is
// never more than one refill period. When Redis does not answer, this node's own bucket decides meanwhile (each
// node then admits up to the whole rate: counted and logged, never blocking). For an event to an agent on another
// node the script also reads the agent's claim, so that the event asks Redis once (O20).
import type { Redis } from 'ioredis';
import { RateLimiter } from '../core/rate-limit.js';
import type { Logger } from '../shared/logger.js';
import type { ClaimReadingLimit, TakenWithClaim } from './cluster-engine.js';
import { claimsKey, QUESTION_TIMEOUT_MS, withTimeout } from './redis-bus.js';

// KEYS[1] the bucket; ARGV rate per second, burst, shift (ms added to Redis's time: the test clock's advance, 0 in
// production). Leaves in `wait` the seconds to wait, returned as text (a Lua number would reach the client truncated
// to an integer). TIME in a script needs effects replication: the default from Redis 5 on, the only mode from 7.
const TAKE_BODY = `
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
`;
const TAKE = `${TAKE_BODY}return tostring(wait)`;
// The same, and the claim of agent ARGV[4] in the record KEYS[2] (false: none): an event's two questions to the
// shared state in one round trip (O20). A script rather than MULTI: the bucket is a script already (it needs TIME),
// one command is one reply to parse, and a pipeline would resend both on NOSCRIPT.
const TAKE_READING_CLAIM = `${TAKE_BODY}return {tostring(wait), redis.call('HGET', KEYS[2], ARGV[4])}`;

/** The scripts as commands of the client (ioredis sends each by its SHA, and the text once when Redis lacks it). */
type WithTake = Redis & {
  bridgeTakeToken(key: string, perSecond: number, burst: number, shiftMs: number): Promise<string>;
  bridgeTakeTokenReadingClaim(
    key: string,
    claims: string,
    perSecond: number,
    burst: number,
    shiftMs: number,
    agentId: string,
  ): Promise<[string, string | null]>;
};

export class RedisRateLimiter implements ClaimReadingLimit {
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
    redis.defineCommand('bridgeTakeTokenReadingClaim', { numberOfKeys: 2, lua: TAKE_READING_CLAIM });
    this.redis = redis as WithTake; // defineCommand added the methods; its type cannot say so
  }

  /**
   * Takes a token and reads the agent's claim in the record (redis-bus.ts's) in one round trip (O20). Undefined while the limit is
   * off: no round trip is needed for the token, and the claim is asked alone.
   */
  takeReadingClaim(appId: string, now: number, agentId: string): Promise<TakenWithClaim> | undefined {
    if (!this.local.enabled) return undefined;
    const asked = this.redis.bridgeTakeTokenReadingClaim(
      this.bucketOf(appId),
      claimsKey(this.prefix),
      this.perSecond,
      this.burst,
      Math.round(this.shiftMs()),
      agentId,
    );
    return withTimeout(asked, QUESTION_TIMEOUT_MS).then(
      ([wait, claim]) => ({ wait: Number(wait), claim: claim ?? undefined, read: true }),
      (err: Error) => ({ wait: this.fallBack(appId, now, err), claim: undefined, read: false }),
    );
  }

  private bucketOf(appId: string): string {
    return `${this.prefix}:rate:${appId}`;
  }

  /** Redis did not answer: this node's own bucket decides (counted, logged now and then). */
  private fallBack(appId: string, now: number, err: Error): number {
    if (this.fallbacks++ % 1000 === 0)
      this.log.warn(
        { err: err.message, fallbacks: this.fallbacks },
        "the shared rate limit did not answer: this node's own bucket decides",
      );
    return this.local.take(appId, now);
  }

  /** `now`, the node's monotonic reading, serves its own bucket only (Redis keeps the shared one's time). */
  take(appId: string, now: number): number | Promise<number> {
    if (!this.local.enabled) return 0;
    return withTimeout(
      this.redis.bridgeTakeToken(this.bucketOf(appId), this.perSecond, this.burst, Math.round(this.shiftMs())),
      QUESTION_TIMEOUT_MS,
    ).then(
      (wait) => Number(wait),
      (err: Error) => this.fallBack(appId, now, err),
    );
  }
}
