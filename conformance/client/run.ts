// Runs one client scenario: starts the mock bridge, spawns the third party's command (through the shell, in its
// own process group) with BRIDGE_URL, BRIDGE_TOKEN and BRIDGE_SCENARIO, lets the scenario's script drive the mock
// and judge what the client sends, then stops the command and the mock. The result is an Outcome like the server
// role's, so `judge()` and the reports work unchanged. Every frame the client sends must be valid against the
// schema of its direction: the first invalid one fails the scenario at once with CLI-001.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Transcript } from '../actor.js';
import type { Outcome } from '../run.js';
import { MockBridge, type ClientRole, type ReceivedFrame } from './mock-bridge.js';

/** The requirement every frame is checked against. */
export const VALID_FRAMES = 'CLI-001';

export interface ClientScenario {
  id: string;
  role: ClientRole;
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
}

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

export function tokenFor(role: ClientRole): string {
  return role === 'app' ? `rlk_${MOCK_APP_ID}_${base62(40)}` : `rla_${MOCK_AGENT_ID}_${base62(40)}`;
}

export class ClientProcess {
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
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
    const tail = this.stderr.filter((l) => !l.startsWith('npm warn')).slice(-3).join(' | ');
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

  constructor(
    readonly scenario: ClientScenario,
    readonly mock: MockBridge,
    readonly client: ClientProcess,
    readonly connectTimeoutMs: number,
  ) {
    mock.on('frame', (f) => {
      if (f.invalid && !this.invalid) {
        this.invalid = new ClientFailure(`the client sent an invalid ${typeof f.frame?.type === 'string' ? f.frame.type : 'frame'}: ${f.invalid}: ${f.text.slice(0, 300)}`, [VALID_FRAMES]);
      }
      this.wake();
    });
    mock.on('connection', () => this.wake());
    mock.on('attempt', () => this.wake());
    mock.on('disconnect', () => this.wake());
    void client.exited.then(() => this.wake());
  }

  /** Moves to the next step (named in the failure report). */
  next(): void {
    this.step++;
  }

  fail(reason: string, requirements: string[]): never {
    throw new ClientFailure(reason, requirements);
  }

  /** A failure already decided by the mock (an invalid frame), checked at every wait. */
  pendingFailure(): ClientFailure | undefined {
    return this.invalid;
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
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
          resolve(value);
        }
      };
      timer = setTimeout(() => {
        done();
        reject(new ClientFailure(`${what} within ${(timeoutMs / 1000).toFixed(1)} s${this.client.describeExit()}`, requirements));
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
  const ctx = new ClientContext(scenario, mock, client, options.connectTimeoutMs ?? 30_000);
  let outcome: Omit<Outcome, 'durationMs' | 'transcript'>;
  try {
    await scenario.script(ctx);
    const late = ctx.pendingFailure();
    if (late) throw late;
    outcome = { status: 'passed' };
  } catch (err) {
    if (err instanceof ClientFailure) {
      outcome = { status: 'failed', reason: err.reason, failedStep: ctx.step + 1, failedRequirements: err.requirements };
    } else {
      outcome = { status: 'errored', reason: `the scenario broke: ${err instanceof Error ? err.message : String(err)}`, failedStep: ctx.step + 1 };
    }
  } finally {
    await client.stop();
    await mock.stop();
  }
  return { ...outcome, durationMs: Math.round(performance.now() - started), transcript: transcript.lines };
}
