// Fair shares between organizations (F3, R10): what one organization's clients can make a node do is bounded per
// organization, so that one tenant at its bounds leaves the others their latency. Only events had a rate limit
// (per app, L10); an agent's fragments, an app's discovers and resumes, and the bytes a resume sends again had
// none: one app resumed an ended 2 MB stream 1,987 times in 30 s (262 KB in, 3.87 GB out) and another
// organization's p99 went from 23 to 228 ms. Token buckets per organization on each node, on the monotonic clock.
//
// Over a bound nothing is dropped and nothing is silent: an agent's fragment is taken and its socket paused until
// the bucket has refilled (backpressure, as the shared rate limit's round trip pauses an app); a discover or a
// resume is refused with TOO_MANY_REQUESTS and a retry_after_seconds of at most one refill period. Each time is
// counted (bridge_fair_share_limited_total{kind}) and logged a burst at a time, naming the organizations.
import { LIMITS } from '../../generated/index.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { BurstLog, LOG_WINDOW_MS } from './burst-log.js';
import { TokenBuckets } from './rate-limit.js';

/** What an organization's share bounds: the label of bridge_fair_share_limited_total. */
export type ShareKind = 'fragments' | 'discover' | 'resume' | 'replay';
export const SHARE_KINDS: readonly ShareKind[] = ['fragments', 'discover', 'resume', 'replay'];

/** Per organization, each a token bucket (per second, burst); a rate or burst of 0 turns that bound off. */
export interface FairShareLimits {
  fragmentsPerSecond: number;
  fragmentsBurst: number;
  discoversPerSecond: number;
  discoversBurst: number;
  resumesPerSecond: number;
  resumesBurst: number;
  replayBytesPerSecond: number;
  replayBytesBurst: number;
}

export const DEFAULT_FAIR_SHARES: FairShareLimits = {
  fragmentsPerSecond: LIMITS.fragmentsPerOrgPerSecond,
  fragmentsBurst: LIMITS.fragmentsPerOrgBurst,
  discoversPerSecond: LIMITS.discoversPerOrgPerSecond,
  discoversBurst: LIMITS.discoversPerOrgBurst,
  resumesPerSecond: LIMITS.resumesPerOrgPerSecond,
  resumesBurst: LIMITS.resumesPerOrgBurst,
  replayBytesPerSecond: LIMITS.resumeReplayBytesPerOrgPerSecond,
  replayBytesBurst: LIMITS.resumeReplayBytesPerOrgBurst,
};

/** What the shares did since start, for metrics. */
export interface FairShareStats {
  /** Times an organization was over a share: agents paused (fragments), frames refused (the others). */
  limited: Record<ShareKind, number>;
  /** Milliseconds agents' sockets were paused for their organization's fragments, together. */
  pausedMs: number;
}

/** Seconds as retry_after_seconds gives them: rounded up to the millisecond, never 0. */
const retryAfter = (seconds: number) => Math.max(Math.ceil(seconds * 1000) / 1000, 0.001);

export class FairShares {
  readonly stats: FairShareStats = { limited: { fragments: 0, discover: 0, resume: 0, replay: 0 }, pausedMs: 0 };
  private readonly fragments: TokenBuckets;
  private readonly discovers: TokenBuckets;
  private readonly resumes: TokenBuckets;
  private readonly replayBytes: TokenBuckets;
  private readonly limitedLog: BurstLog<string>;

  constructor(
    readonly limits: FairShareLimits,
    private readonly clock: Clock,
    log: Logger,
  ) {
    this.fragments = new TokenBuckets(limits.fragmentsPerSecond, limits.fragmentsBurst);
    this.discovers = new TokenBuckets(limits.discoversPerSecond, limits.discoversBurst);
    this.resumes = new TokenBuckets(limits.resumesPerSecond, limits.resumesBurst);
    this.replayBytes = new TokenBuckets(limits.replayBytesPerSecond, limits.replayBytesBurst);
    this.limitedLog = new BurstLog({
      clock,
      windowMs: LOG_WINDOW_MS,
      report: (byOrg, times) =>
        log.info(
          { times, limited: Object.fromEntries(byOrg) },
          `organizations over their fair share: ${times} time(s)`,
        ),
    });
  }

  /**
   * One `token` frame of an agent of `orgId`, taken whatever the bucket holds: 0, or the milliseconds to pause the
   * agent's socket for (at least fragmentPauseMinMs, so that it then sends a batch rather than one per timer).
   */
  fragment(orgId: string): number {
    const owing = this.fragments.charge(orgId, this.clock.monotonic(), 1);
    if (!owing) return 0;
    const ms = Math.max(Math.ceil(owing * 1000), LIMITS.fragmentPauseMinMs);
    this.stats.pausedMs += ms;
    this.limited('fragments', orgId);
    return ms;
  }

  /** A `discover` of an app of `orgId`: 0 when taken, otherwise its retry_after_seconds (nothing taken). */
  discover(orgId: string): number {
    return this.took('discover', orgId, this.discovers.take(orgId, this.clock.monotonic()));
  }

  /** A `resume` of an app of `orgId`: 0 when taken, otherwise its retry_after_seconds (nothing taken). */
  resume(orgId: string): number {
    return this.took('resume', orgId, this.resumes.take(orgId, this.clock.monotonic()));
  }

  /**
   * A resume's answer of `bytes` (its frames): 0 when it may be sent, and its bytes are taken from the
   * organization's replay bucket, into debt if need be (an answer is sent whole or not at all); otherwise, while
   * the bucket is in debt, its retry_after_seconds. An answer of nothing costs nothing.
   */
  replay(orgId: string, bytes: number): number {
    if (bytes === 0) return 0;
    const now = this.clock.monotonic();
    const owing = this.replayBytes.owing(orgId, now);
    if (owing) return this.took('replay', orgId, owing);
    this.replayBytes.charge(orgId, now, bytes);
    return 0;
  }

  stop(): void {
    this.limitedLog.stop();
  }

  private took(kind: ShareKind, orgId: string, wait: number): number {
    if (!wait) return 0;
    this.limited(kind, orgId);
    return retryAfter(wait);
  }

  private limited(kind: ShareKind, orgId: string): void {
    this.stats.limited[kind]++;
    this.limitedLog.record(`${kind} ${orgId}`);
  }
}
