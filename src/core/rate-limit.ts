// Per-app token buckets (§7.1, L10): every instance of an app draws from the same bucket, refilled continuously on
// the bridge's clock. A rate or burst of 0 turns the limit off.

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Takes one event from an app's bucket: 0 when admitted, otherwise the seconds until one is available. Where the
 * buckets are shared by several nodes the answer takes a round trip (a promise); the app's connection then waits.
 */
export interface EventRateLimit {
  take(appId: string, now: number): number | Promise<number>;
}

export class RateLimiter implements EventRateLimit {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {}

  get enabled(): boolean {
    return this.perSecond > 0 && this.burst >= 1;
  }

  /** Takes one event from the app's bucket: 0 when admitted, otherwise the seconds until one is available. */
  take(appId: string, now: number): number {
    if (!this.enabled) return 0;
    let bucket = this.buckets.get(appId);
    if (!bucket) this.buckets.set(appId, (bucket = { tokens: this.burst, at: now }));
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return (1 - bucket.tokens) / this.perSecond;
  }
}
