// Token buckets: per app for events (§7.1, L10; every instance of an app draws from the same bucket), per
// organization for its fair shares (F3, R10). They refill continuously on the monotonic clock; should a time that
// can step be passed in (Redis's, on several nodes), a step back counts as no time (the bucket's time follows the
// clock back, so nobody is locked out until it catches up) and a step forward refills at most a full bucket. A
// rate or burst of 0 turns a limit off.

/** A debt this small is repaid: what a wait rounded to the millisecond may leave of floating-point error. */
const REPAID = 1e-6;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Takes one event from an app's bucket: 0 when admitted, otherwise the seconds until one is available. Where the
 * buckets are shared by several nodes the answer takes a round trip (a promise); the app's connection then waits.
 * `now` is the bridge's monotonic reading.
 */
export interface EventRateLimit {
  take(appId: string, now: number): number | Promise<number>;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly perSecond: number,
    readonly burst: number,
  ) {}

  get enabled(): boolean {
    return this.perSecond > 0 && this.burst >= 1;
  }

  /**
   * Takes `cost` tokens when the bucket holds them: 0. Otherwise takes nothing and returns the seconds until it
   * will hold them (never more than `cost` refill periods: the bucket never owes).
   */
  take(key: string, now: number, cost = 1): number {
    if (!this.enabled) return 0;
    const bucket = this.refilled(key, now);
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      return 0;
    }
    return (cost - bucket.tokens) / this.perSecond;
  }

  /**
   * Takes `cost` tokens whatever the bucket holds, into debt if need be (a cost that is only known once it is
   * spent, or work that must not be dropped); returns the seconds until the bucket is out of debt, 0 if it is not.
   */
  charge(key: string, now: number, cost: number): number {
    if (!this.enabled) return 0;
    const bucket = this.refilled(key, now);
    bucket.tokens -= cost;
    return bucket.tokens < 0 ? -bucket.tokens / this.perSecond : 0;
  }

  /** The seconds until the bucket is out of debt: 0 when it is not in debt (nothing is taken). */
  owing(key: string, now: number): number {
    if (!this.enabled) return 0;
    const bucket = this.refilled(key, now);
    return bucket.tokens > -REPAID ? 0 : -bucket.tokens / this.perSecond;
  }

  private refilled(key: string, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = { tokens: this.burst, at: now }));
    const elapsed = Math.max(now - bucket.at, 0);
    bucket.tokens = Math.min(this.burst, bucket.tokens + (elapsed / 1000) * this.perSecond);
    bucket.at = now;
    return bucket;
  }
}

/** The per-app event bucket of one node (L10). */
export class RateLimiter implements EventRateLimit {
  private readonly buckets: TokenBuckets;

  constructor(perSecond: number, burst: number) {
    this.buckets = new TokenBuckets(perSecond, burst);
  }

  get enabled(): boolean {
    return this.buckets.enabled;
  }

  /** Takes one event from the app's bucket: 0 when admitted, otherwise the seconds until one is available. */
  take(appId: string, now: number): number {
    return this.buckets.take(appId, now);
  }
}
