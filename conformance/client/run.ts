// Runs one client scenario: starts the mock bridge, spawns the third party's command (through the shell, in its
// own process group) with BRIDGE_URL, BRIDGE_TOKEN and BRIDGE_SCENARIO, lets the scenario's script drive the mock
// and judge what the client sends, then stops the command and the mock. The result is an Outcome like the server
// role's, so `judge()` and the reports work unchanged. Some rules hold for every frame and connection, whatever
// the scenario: a frame valid against the schema of its direction (CLI-001), no token in any frame (CLI-021), and
// for agents one connection at a time (CLI-017); the first break fails the scenario at once. A check whose
// requirements are all outside the profile (our decisions, in the protocol profile) is noted, not failed.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Transcript } from '../actor.js';
import type { Outcome } from '../run.js';
import { inProfile, loadRequirements, type Profile, type Requirement } from '../scenario.js';
import type { ClientKind } from '../../generated/index.js';
import { MockBridge, type ReceivedFrame } from './mock-bridge.js';

/** The requirements every frame or connection is checked against. */
export const VALID_FRAMES = 'CLI-001';
export const NO_TOKEN_IN_FRAMES = 'CLI-021';
export const ONE_AGENT_CONNECTION = 'CLI-017';
/** A connection still open this long after a newer one opened is a second connection, not one being closed. */
const OVERLAP_GRACE_MS = 2_000;

export interface ClientScenario {
  id: string;
  role: ClientKind;
  title: string;
  requirements: string[];
  /** Slow scenarios run only when asked for (`--slow`). */
  optIn?: boolean;
  script: (ctx: ClientContext) => Promise<void>;
}

export interface ClientRunOptions {
  /** A shell command line. */
  command: string;
  cwd?: string;
  /** Extra environment for the command. */
  env?: NodeJS.ProcessEnv;
  /** How long to wait for the client's first connection (its start-up included). Default 30 s. */
  connectTimeoutMs?: number;
  /** Which requirements are judged (default: protocol). */
  profile?: Profile;
}

/**
 * A wait for our decisions alone, in the protocol profile, that did not see what it waited for: the scenario ends
 * there, passed for what it checked before (scripts put such checks last).
 */
export class NotJudged extends Error {}

/** Thrown by a script: the scenario fails with `reason`, failing `requirements` only. */
export class ClientFailure extends Error {
  constructor(
    readonly reason: string,
    readonly requirements: string[],
  ) {
    super(reason);
  }
}

const base62 = (n: number) => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(n)].map((b) => alphabet[b % 62]).join('');
};

/** The ids the mock uses for its pretend registrations. */
export const MOCK_APP_ID = 'conformance-app';
export const MOCK_AGENT_ID = 'conformance-agent';

export function tokenFor(role: ClientKind): string {
  return role === 'app' ? `rlk_${MOCK_APP_ID}_${base62(40)}` : `rla_${MOCK_AGENT_ID}_${base62(40)}`;
}

export class ClientProcess {
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  /** Told of each line the command prints (a scenario may wait for one). */
  onLine: () => void = () => {};
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly exited: Promise<void>;

  constructor(
    private readonly child: ChildProcess,
    transcript: Transcript,
  ) {
    const lines = (into: string[], name: string) => (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        into.push(line);
        if (into.length > 200) into.shift();
        transcript.add(name, 'note', line);
      }
      this.onLine();
    };
    child.stdout?.on('data', lines(this.stdout, 'stdout'));
    child.stderr?.on('data', lines(this.stderr, 'stderr'));
    this.exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        transcript.add('client', 'note', `the command exited (${signal ?? `code ${code}`})`);
        resolve();
      }),
    );
    child.once('error', (err) => transcript.add('client', 'note', `the command could not start: ${err.message}`));
  }

  /** Why the client stopped, for failure messages. */
  describeExit(): string {
    if (!this.exit) return '';
    const tail = this.stderr
      .filter((l) => !l.startsWith('npm warn'))
      .slice(-3)
      .join(' | ');
    return ` (the client had exited with ${this.exit.signal ?? `code ${this.exit.code}`}${tail ? `; stderr: ${tail.slice(0, 500)}` : ''})`;
  }

  /** Stops the command and everything it started (its process group): TERM, then KILL after 2 s. */
  async stop(): Promise<void> {
    if (this.exit || this.child.pid === undefined) return;
    const signal = (s: NodeJS.Signals) => {
      try {
        process.kill(-this.child.pid!, s);
      } catch {
        /* already gone */
      }
    };
    signal('SIGTERM');
    const killed = setTimeout(() => signal('SIGKILL'), 2_000);
    await this.exited;
    clearTimeout(killed);
  }
}

/** What a script works with. */
export class ClientContext {
  /** Steps passed so far; a failure is reported at the next one. */
  step = 0;
  private invalid: ClientFailure | undefined;
  private readonly waiters = new Set<() => void>();
  private registry: Map<string, Requirement> | undefined;

  constructor(
    readonly scenario: ClientScenario,
    readonly mock: MockBridge,
    readonly client: ClientProcess,
    readonly connectTimeoutMs: number,
    readonly profile: Profile = 'protocol',
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

  /** Moves to the next step (named in the failure report). */
  next(): void {
    this.step++;
  }

  /** Whether a check of these requirements counts in this run's profile (decisions only with --profile bridge). */
  judges(requirements: string[]): boolean {
    const registry = (this.registry ??= loadRequirements());
    return requirements.some((id) => {
      const r = registry.get(id);
      return r !== undefined && inProfile(r, this.profile);
    });
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
   * `what` after `timeoutMs`. An invalid frame fails at once with CLI-001.
   */
  waitFor<T>(check: () => T | undefined, timeoutMs: number, what: string, requirements: string[]): Promise<T> {
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
          return resolve(value);
        }
        // A client that has exited will not do what is awaited: say so now, not after the timeout.
        if (this.client.exit) {
          done();
          reject(this.unmet(`${what}${this.client.describeExit()}`, requirements));
        }
      };
      timer = setTimeout(() => {
        done();
        reject(
          this.unmet(`${what} within ${(timeoutMs / 1000).toFixed(1)} s${this.client.describeExit()}`, requirements),
        );
      }, timeoutMs);
      this.waiters.add(evaluate);
      evaluate();
    });
  }

  /** Waits `ms`, failing early on an invalid frame. */
  async pause(ms: number): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    if (this.invalid) throw this.invalid;
  }

  /** Frames received so far (valid ones), optionally after an index. */
  framesSince(index: number): ReceivedFrame[] {
    return this.mock.frames.slice(index);
  }
}

/** How long a client under test may take to start and connect, unless --connect-timeout-ms says otherwise. */
export const CONNECT_TIMEOUT_MS = 30_000;

export async function runClientScenario(scenario: ClientScenario, options: ClientRunOptions): Promise<Outcome> {
  const transcript = new Transcript();
  const started = performance.now();
  const token = tokenFor(scenario.role);
  const mock = await MockBridge.start({ role: scenario.role, token, transcript });
  transcript.add('mock', 'note', `mock bridge at ${mock.url}; running: ${options.command}`);
  const child = spawn(options.command, {
    shell: true,
    detached: true,
    cwd: options.cwd ?? process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env, BRIDGE_URL: mock.url, BRIDGE_TOKEN: token, BRIDGE_SCENARIO: scenario.id },
  });
  const client = new ClientProcess(child, transcript);
  const ctx = new ClientContext(
    scenario,
    mock,
    client,
    options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    options.profile,
  );
  let outcome: Omit<Outcome, 'durationMs' | 'transcript'>;
  try {
    try {
      await scenario.script(ctx);
    } catch (err) {
      if (!(err instanceof NotJudged)) throw err;
    }
    await ctx.settle();
    const late = ctx.pendingFailure();
    if (late) throw late;
    outcome = { status: 'passed' };
  } catch (err) {
    if (err instanceof ClientFailure) {
      outcome = {
        status: 'failed',
        reason: err.reason,
        failedStep: ctx.step + 1,
        failedRequirements: err.requirements,
      };
    } else {
      outcome = {
        status: 'errored',
        reason: `the scenario broke: ${err instanceof Error ? err.message : String(err)}`,
        failedStep: ctx.step + 1,
      };
    }
  } finally {
    await client.stop();
    await mock.stop();
  }
  return { ...outcome, durationMs: Math.round(performance.now() - started), transcript: transcript.lines };
}
