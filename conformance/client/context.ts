// What a client scenario's script works with: the mock bridge, the client process, the run's settings (profile,
// time scale, answer window), and waits that end the scenario the right way. A scenario ends in one of four ways:
// its checks all held (passed), a check failed (ClientFailure: those requirements are blamed), a check of our
// decisions alone was not met in the protocol profile (NotJudged: it ends, blaming nobody), the client did not opt in
// to the extension the scenario judges (NotApplicable: skipped, blaming nobody), or the client broke the
// harness contract (HarnessBreach: it exited before the suite ended the scenario, or it ignored the time scale;
// nothing left can be judged, and nobody is blamed). Rules of every frame and connection (a valid frame, no token in
// a frame, one agent connection) are judged here as frames arrive; the first break fails the scenario at its next
// wait. What held is recorded (`checked`), so that only requirements really seen to hold can pass.
import type { Profile, Requirement } from '../scenario.js';
import { inProfile, loadRequirements } from '../scenario.js';
import type { Warning } from '../outcome.js';
import type { MockBridge, ReceivedFrame } from './mock-bridge.js';
import type { ClientProcess } from './process.js';
import type { ClientKind } from '../../generated/index.js';

/** The requirements every frame or connection is checked against. */
export const VALID_FRAMES = 'CLI-001';
export const NO_TOKEN_IN_FRAMES = 'CLI-021';
export const ONE_AGENT_CONNECTION = 'CLI-017';
/** A connection still open this long after a newer one opened is a second connection, not one being closed. */
const OVERLAP_GRACE_MS = 2_000;
/**
 * With a time scale above 1, how late a scaled timer may fire beyond its band. Measured on a 2-core machine with a
 * role's scenarios all running at once (≈20 client processes starting in the same seconds): a client's 100 ms
 * timer reached the mock up to ≈120 ms late. 300 ms keeps a correct client green there, and still fails a client
 * that retries at once (the lower bounds have no slack) or ignores the scale (1 s, three times the slack).
 */
export const SCHEDULING_SLACK_MS = 300;

/** Settings of the run that scripts read. */
export interface ClientSettings {
  connectTimeoutMs: number;
  profile: Profile;
  /** BRIDGE_TIME_SCALE: the protocol's heartbeat and backoff run this many times faster. */
  timeScale: number;
  /** An agent's answer after this is "slow": a warning of CLI-007, not a failure. */
  answerWindowMs: number;
  /** No answer by this is "silent": a failure of CLI-007. */
  answerTimeoutMs: number;
}

/** One scenario of the client role: a script that drives the mock bridge and judges the client through its context. */
export interface ClientScenario {
  id: string;
  role: ClientKind;
  title: string;
  requirements: string[];
  /** It waits on the protocol's heartbeat or backoff cap (minutes on real time, seconds with --time-scale). */
  slow?: boolean;
  /** Only in these profiles (an error code of our decisions is sent only in the bridge profile); default: any. */
  profiles?: Profile[];
  script: (ctx: ClientContext) => Promise<void>;
}

/**
 * A wait for our decisions alone, in the protocol profile, that did not see what it waited for: the scenario ends
 * there, passed for what it checked before (scripts put such checks last).
 */
export class NotJudged extends Error {}

/**
 * The scenario does not apply to this client: it did not opt in to the extension the scenario judges (an agent
 * without `?cancel=1`, an app that never cancels). The scenario is skipped with the reason, blaming nobody.
 */
export class NotApplicable extends Error {}

/** Thrown by a script: the scenario fails with `reason`, failing `requirements` only. */
export class ClientFailure extends Error {
  constructor(
    readonly reason: string,
    readonly requirements: string[],
  ) {
    super(reason);
  }
}

/** The client broke the harness contract: the scenario is errored with this reason, no requirement is blamed. */
export class HarnessBreach extends Error {}

export class ClientContext {
  /** Steps passed so far; a failure is reported at the next one. */
  step = 0;
  /** Requirements at least one check of which ran and held. */
  readonly checked = new Set<string>();
  readonly warnings: Warning[] = [];
  private invalid: ClientFailure | undefined;
  private readonly waiters = new Set<() => void>();
  private registry: Map<string, Requirement> | undefined;
  /** Whether the client's honouring of the time scale has been looked at (once per scenario). */
  private scaleChecked = false;

  constructor(
    readonly scenario: ClientScenario,
    readonly mock: MockBridge,
    readonly client: ClientProcess,
    readonly settings: ClientSettings,
  ) {
    const secret = mock.token.slice(mock.token.lastIndexOf('_') + 1);
    mock.on('frame', (f) => {
      if (f.invalid)
        this.broken(
          `the client sent an invalid ${typeof f.frame?.type === 'string' ? f.frame.type : 'frame'}: ${f.invalid}: ${f.text.slice(0, 300)}`,
          VALID_FRAMES,
        );
      // The token's secret alone is enough to impersonate the client: it must stay in the handshake (§5).
      if (f.text.includes(secret))
        this.broken(
          `the client sent its token in a ${typeof f.frame?.type === 'string' ? f.frame.type : 'frame'} (tokens travel only in the handshake)`,
          NO_TOKEN_IN_FRAMES,
        );
      this.wake();
    });
    mock.on('connection', (id) => {
      if (mock.role === 'agent') {
        setTimeout(() => mock.isOpen(id) && this.judgeOverlap(), OVERLAP_GRACE_MS).unref();
      }
      this.wake();
    });
    mock.on('attempt', () => this.wake());
    mock.on('disconnect', () => this.wake());
    void client.exited.then(() => this.wake());
    client.onLine = () => this.wake();
  }

  get profile(): Profile {
    return this.settings.profile;
  }

  get connectTimeoutMs(): number {
    return this.settings.connectTimeoutMs;
  }

  /** Moves to the next step (named in the failure report). */
  next(): void {
    this.step++;
  }

  /** Whether a check of these requirements counts in this run's profile (decisions only with --profile bridge). */
  judges(requirements: string[]): boolean {
    return requirements.some((id) => this.inProfile(id));
  }

  private inProfile(id: string): boolean {
    const r = (this.registry ??= loadRequirements()).get(id);
    return r !== undefined && inProfile(r, this.profile);
  }

  /** A check of these requirements ran and held (those of the profile are recorded). */
  held(requirements: string[]): void {
    for (const id of requirements) if (this.inProfile(id)) this.checked.add(id);
  }

  /** Allowed, but not what the requirement recommends: recorded, never a failure. */
  warn(requirement: string, reason: string): void {
    this.mock.note(`warning (${requirement}): ${reason}`);
    this.warnings.push({ requirement, reason });
  }

  /**
   * Fails the scenario on `requirements`. A check of decisions alone, in the protocol profile, is written in the
   * transcript instead and the script goes on.
   */
  fail(reason: string, requirements: string[]): void {
    if (!this.judges(requirements)) {
      this.mock.note(`not judged in the ${this.profile} profile (${requirements.join(', ')}): ${reason}`);
      return;
    }
    throw new ClientFailure(reason, requirements);
  }

  /** A failure already decided by the mock (an invalid frame, a token, a second connection), checked at every wait. */
  pendingFailure(): ClientFailure | undefined {
    return this.invalid;
  }

  /** The harness contract, checked at every wait: a client that ended on its own can be judged no further. */
  breach(): HarnessBreach | undefined {
    if (!this.client.exitedEarly) return undefined;
    return new HarnessBreach(
      `the client exited (${this.client.describeExit()}) before the scenario ended: the harness contract asks it to run until stopped (SIGTERM)`,
    );
  }

  /** The rules of every frame and connection that held up to now (none broke, and there was something to judge). */
  everyFrameRulesHeld(ended: boolean): void {
    if (this.mock.frames.length) this.held([VALID_FRAMES, NO_TOKEN_IN_FRAMES]);
    // Before the end, a second connection may be younger than the grace: only one open connection is sure to hold.
    if (this.mock.role === 'agent' && this.mock.openedAt.size && (ended || this.mock.openConnections <= 1))
      this.held([ONE_AGENT_CONNECTION]);
  }

  /** A wait that was not met: a failure of its requirements, or, when none is judged in this profile, the end. */
  private unmet(reason: string, requirements: string[]): Error {
    if (this.judges(requirements)) return new ClientFailure(reason, requirements);
    this.mock.note(
      `not judged in the ${this.profile} profile (${requirements.join(', ')}): ${reason}; the scenario ends here`,
    );
    return new NotJudged(reason);
  }

  /**
   * Judges what is still open when the script ends: an agent's second connection opened less than the grace ago is
   * watched until the grace has passed, so a short scenario cannot miss it.
   */
  async settle(): Promise<void> {
    if (this.mock.role !== 'agent' || this.mock.openConnections < 2) return;
    const newest = Math.max(
      ...[...this.mock.openedAt.entries()].filter(([id]) => this.mock.isOpen(id)).map(([, at]) => at),
    );
    await new Promise((r) => setTimeout(r, Math.max(0, newest + OVERLAP_GRACE_MS - this.mock.now()) + 50));
    this.judgeOverlap();
  }

  /** CLI-017: an agent with more than one connection open once the grace has passed. */
  private judgeOverlap(): void {
    const open = this.mock.openConnections;
    if (open > 1)
      this.broken(
        `the agent had ${open} connections open at once for ${OVERLAP_GRACE_MS / 1000} s (one connection per agent)`,
        ONE_AGENT_CONNECTION,
      );
  }

  /** A rule of every frame or connection broken: the scenario fails at its next wait (the first break only). */
  private broken(reason: string, requirement: string): void {
    if (this.invalid || !this.judges([requirement])) return;
    this.invalid = new ClientFailure(reason, [requirement]);
    this.wake();
  }

  /** Re-evaluates the waits once every listener of what just happened has run (a scenario's own included). */
  private wake(): void {
    queueMicrotask(() => {
      for (const w of [...this.waiters]) w();
    });
  }

  /**
   * Waits until `check` returns a value (re-evaluated at every frame, handshake, close and exit), or fails with
   * `what` after `timeoutMs`. An invalid frame fails at once with CLI-001; a client that exits ends the scenario at
   * once (the harness contract), not after the timeout. Met, the wait is a check of `requirements` that held,
   * unless it is only a precondition (`marks: false`).
   */
  waitFor<T>(
    check: () => T | undefined,
    timeoutMs: number,
    what: string,
    requirements: string[],
    marks = true,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        this.waiters.delete(evaluate);
        clearTimeout(timer);
      };
      const evaluate = () => {
        if (this.invalid) {
          done();
          return reject(this.invalid);
        }
        let value: T | undefined;
        try {
          value = check();
        } catch (err) {
          done();
          return reject(err);
        }
        if (value !== undefined) {
          done();
          if (marks) this.held(requirements);
          return resolve(value);
        }
        const breach = this.breach();
        if (breach) {
          done();
          reject(breach);
        }
      };
      timer = setTimeout(() => {
        done();
        reject(this.breach() ?? this.unmet(`${what} within ${(timeoutMs / 1000).toFixed(1)} s`, requirements));
      }, timeoutMs);
      this.waiters.add(evaluate);
      evaluate();
    });
  }

  /** Waits `ms`, ending early on an invalid frame or the client's exit. */
  pause(ms: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(evaluate);
        resolve();
      }, ms);
      const evaluate = () => {
        const stop = this.invalid ?? this.breach();
        if (!stop) return;
        clearTimeout(timer);
        this.waiters.delete(evaluate);
        reject(stop);
      };
      this.waiters.add(evaluate);
      evaluate();
    });
  }

  /** Frames received so far (valid ones), optionally after an index. */
  framesSince(index: number): ReceivedFrame[] {
    return this.mock.frames.slice(index);
  }

  // ---- the time scale ------------------------------------------------------------------------------------------

  /** A duration of the protocol (heartbeat, pong timeout, backoff) on the scaled clock. */
  scaled(ms: number): number {
    return ms / this.settings.timeScale;
  }

  /**
   * The band a scaled duration of the protocol is judged in: ±`tolerance` of it, and with a scale above 1 an upper
   * bound at least SCHEDULING_SLACK_MS over it (a short timer's lateness is the machine's, not the client's).
   * With scale 1 it is exactly ±`tolerance`.
   */
  band(unscaledMs: number, tolerance: number): [number, number] {
    const want = this.scaled(unscaledMs);
    const hi = want * (1 + tolerance);
    return [want * (1 - tolerance), this.settings.timeScale > 1 ? Math.max(hi, want + SCHEDULING_SLACK_MS) : hi];
  }

  /**
   * How long to wait for the first timed observation of the scenario: long enough, while the scale is not yet
   * checked, to see a client that ignores it do the same thing on the unscaled clock.
   */
  firstTimeout(scaledTimeoutMs: number, unscaledTimeoutMs: number): number {
    return this.settings.timeScale > 1 && !this.scaleChecked
      ? Math.max(scaledTimeoutMs, unscaledTimeoutMs)
      : scaledTimeoutMs;
  }

  /**
   * Once per scenario, with a scale above 1: the first timing of the protocol that the client shows (`measuredMs`,
   * expected `unscaledMs` / scale) tells whether it honours BRIDGE_TIME_SCALE. Near the unscaled value (within its
   * ±25 %) it does not: that is the harness's finding, not a failure of the rule timed.
   */
  checkScale(measuredMs: number, unscaledMs: number, what: string): void {
    if (this.settings.timeScale <= 1 || this.scaleChecked) return;
    this.scaleChecked = true;
    const k = this.settings.timeScale;
    if (measuredMs >= unscaledMs * 0.75 && measuredMs <= unscaledMs * 1.25 + SCHEDULING_SLACK_MS)
      throw new HarnessBreach(
        `the client does not honour BRIDGE_TIME_SCALE=${k}: ${what} came after ${Math.round(measuredMs)} ms, the unscaled ${unscaledMs} ms, not ${Math.round(unscaledMs / k)} ms; the harness contract asks a client to run the protocol's heartbeat and backoff ${k} times faster (or run the suite with --time-scale 1)`,
      );
  }
}
