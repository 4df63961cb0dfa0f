// The client command under test, as the harness sees it: a shell command in its own process group whose stdout and
// stderr lines go to the transcript, whose exit is noticed at once (the harness contract asks it to run until it is
// stopped), and which is stopped with its whole group.
import type { ChildProcess } from 'node:child_process';
import type { Transcript } from '../actor.js';

export class ClientProcess {
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  /** Told of each line the command prints (a scenario may wait for one). */
  onLine: () => void = () => {};
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly exited: Promise<void>;
  /** Set once the harness has begun stopping it: an exit after that is the one asked for. */
  private stopping = false;

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

  /** Whether it ended on its own, before the harness stopped it: a break of the harness contract. */
  get exitedEarly(): boolean {
    return this.exit !== undefined && !this.stopping;
  }

  /** Its exit code or signal and its last stderr lines, for a reason. */
  describeExit(): string {
    if (!this.exit) return '';
    const tail = this.stderr
      .filter((l) => !l.startsWith('npm warn'))
      .slice(-3)
      .join(' | ');
    return `${this.exit.signal ?? `code ${this.exit.code}`}${tail ? `; stderr: ${tail.slice(0, 500)}` : ''}`;
  }

  /** Stops the command and everything it started (its process group): TERM, then KILL after 2 s. */
  async stop(): Promise<void> {
    this.stopping = true;
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
