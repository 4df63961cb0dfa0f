// A provisioning command kept up for the whole run (lines mode, spec/conformance.yaml ProvisionLinesHello): one
// request line on its stdin, one answer line on its stdout, one request at a time. One process start instead of one
// per request, which is what made a --provision run slow (a clock move of an hour was ~120 starts).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { validateProvisionLinesHello } from '../../generated/index.js';
import { LINES_ENV } from './command-once.js';
import { lastLine, replyOfLine, seconds, type Reply } from './command-reply.js';
import { ProvisionError } from './provisioner.js';

interface Refable {
  ref(): unknown;
  unref(): unknown;
}

interface Pending {
  seq: number;
  action: string;
  resolve: (reply: Reply) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class LinesSession {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffered = '';
  private stderr = '';
  private helloSeen = false;
  private pending: Pending | undefined;
  private lastAction = '';
  private seq = 0;
  /** The action of each request sent, by seq: an answer out of turn is named by the request it answers. */
  private readonly actions = new Map<number, string>();
  /** Why the session cannot go on (a new one is started for the next request). */
  broken: string | undefined;
  /** The reason, when no request was waiting to fail with it: the next request fails with it instead. */
  unreported: string | undefined;
  exited = false;

  constructor(
    command: string,
    private readonly timeoutMs: number,
  ) {
    this.child = spawn(command, {
      shell: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, [LINES_ENV]: '1' },
    });
    this.child.stdout.setEncoding('utf8').on('data', (d: string) => this.take(d));
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => (this.stderr = (this.stderr + d).slice(-4000)));
    this.child.stdin.on('error', () => undefined); // a dead command: its exit is reported instead
    this.child.on('error', (err) => this.fail(`could not be started: ${err.message}`));
    this.child.on('close', (code, signal) => {
      this.exited = true;
      const why = lastLine(this.stderr);
      this.fail(`exited (${signal ?? `exit ${code}`})${why ? `: ${why}` : ''}`);
    });
    this.idle(true);
  }

  /** Sends one request line (the request with its `seq`) and waits for its answer line. */
  request(action: string, request: Record<string, unknown>): Promise<Reply> {
    const seq = ++this.seq;
    this.actions.set(seq, action);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(`did not answer within ${seconds(this.timeoutMs)} (stopped)`);
        this.child.kill('SIGKILL');
      }, this.timeoutMs);
      this.pending = { seq, action, resolve, reject, timer };
      this.lastAction = action;
      this.idle(false);
      this.child.stdin.write(`${JSON.stringify({ seq, ...request })}\n`);
    });
  }

  /** Ends the session: end of input, after which the command exits. */
  close(): Promise<void> {
    if (this.exited) return Promise.resolve();
    this.broken ??= 'the session was closed';
    const exited = new Promise<void>((resolve) => this.child.once('close', () => resolve()));
    // waited for: the runner's process must not end (its work done) before the command has
    this.idle(false);
    this.child.stdin.end();
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    return exited.finally(() => clearTimeout(killer));
  }

  private take(data: string): void {
    this.buffered += data;
    for (let end = this.buffered.indexOf('\n'); end >= 0; end = this.buffered.indexOf('\n')) {
      const line = this.buffered.slice(0, end).trim();
      this.buffered = this.buffered.slice(end + 1);
      if (line) this.line(line);
    }
  }

  private line(line: string): void {
    if (!this.helloSeen) {
      let hello = false;
      try {
        hello = validateProvisionLinesHello(JSON.parse(line));
      } catch {
        // reported below
      }
      if (hello) this.helloSeen = true;
      else this.fail(`wrote ${line.slice(0, 200)} before {"provision_lines":1}, the first line of lines mode`);
      return;
    }
    const pending = this.pending;
    if (!pending) {
      this.fail(`wrote a line no request was waiting for: ${line.slice(0, 200)}`);
      return;
    }
    let answered: ReturnType<typeof replyOfLine>;
    try {
      answered = replyOfLine(line, pending.action);
    } catch (err) {
      // garbage on stdout: what follows cannot be trusted to answer the next request
      this.fail((err as Error).message, false);
      return;
    }
    if (answered.seq !== pending.seq) {
      const other =
        answered.seq === undefined
          ? 'no seq'
          : `seq ${answered.seq} (${this.actions.get(answered.seq) ?? 'never sent'})`;
      this.fail(`answered with ${other}, not seq ${pending.seq}: ${line.slice(0, 200)}`);
      return;
    }
    this.settle();
    pending.resolve(answered.reply);
  }

  /**
   * The session cannot go on: it is stopped, and the waiting request (if any, else the next) fails with the reason;
   * `situate` false when the reason names the request already.
   */
  private fail(why: string, situate = true): void {
    if (this.broken) return;
    const pending = this.pending;
    const when = pending ? `while answering ${pending.action}` : `after its answer to ${this.lastAction}`;
    this.broken = situate ? `the provisioning command (lines mode) ${why}, ${when}` : why;
    if (!this.exited) this.child.kill('SIGKILL');
    if (!pending) {
      this.unreported = this.broken;
      return;
    }
    this.settle();
    pending.reject(new ProvisionError(this.broken));
  }

  private settle(): void {
    clearTimeout(this.pending!.timer);
    this.pending = undefined;
    this.idle(true);
  }

  /** An idle session does not keep the runner's process alive: it ends without waiting for the command. */
  private idle(idle: boolean): void {
    // A child's pipes are net.Sockets at run time, typed as plain streams.
    const handles = [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as unknown as Refable[];
    for (const handle of handles) {
      if (idle) handle.unref();
      else handle.ref();
    }
  }
}
