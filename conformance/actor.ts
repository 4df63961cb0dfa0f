// One named connection of a scenario (`app1`, `agent1`, …): frames arrive into a queue, each checked against the
// generated validator of its direction, and every frame both ways goes into the scenario's transcript.
import WebSocket from 'ws';
import {
  describeErrors,
  validateOpenServiceToAgentMessage,
  validateOpenServiceToAppMessage,
  validateServiceToAgentMessage,
  validateServiceToAppMessage,
  type ClientKind,
  type ReportTranscriptLine,
  type Validator,
} from '../generated/index.js';
import { resumeFrameRule, type FrameRule } from './resume-frames.js';
import type { Ledger } from './ledger.js';
import { EXTENSION_FRAME_REQUIREMENTS as RES, FRAME_REQUIREMENTS, type Profile } from './scenario.js';

export type Carrier = 'header' | 'query' | 'both' | 'none';

/** One line of a scenario's transcript, as the reports show it (spec/conformance.yaml ReportTranscriptLine). */
export type TranscriptLine = ReportTranscriptLine;

export class Transcript {
  readonly lines: TranscriptLine[] = [];
  private readonly started = performance.now();

  add(actor: string, direction: TranscriptLine['direction'], text: string): void {
    this.lines.push({
      at_ms: Math.round(performance.now() - this.started),
      actor,
      direction,
      text: text.length > 2000 ? `${text.slice(0, 2000)}… (${text.length} chars)` : text,
    });
  }
}

/**
 * Nothing came where a frame was awaited, on a connection still open: `awaited` names the frame type the step waited
 * for (a pong, an accepted), which tells the runner whose rule the silence breaks (run.ts, barriers).
 */
export class NothingArrived extends Error {
  constructor(
    message: string,
    readonly actor: string,
    readonly endpoint: ClientKind,
    readonly awaited: string | undefined,
  ) {
    super(message);
  }
}

/** A frame rule and the requirements a frame that keeps it counts as checked for. */
interface JudgedRule {
  rule: FrameRule;
  judges: (frame: Record<string, unknown>) => string[];
  /** Not applied to a frame that already broke this requirement (the closed schema after the open one). */
  skipAfter?: string;
}

/** A schema every received frame must fit, as a rule. */
function schemaRule(requirement: string, validate: Validator<unknown>, what: string): JudgedRule {
  return {
    rule: (frame, text) =>
      validate(frame)
        ? undefined
        : { requirement, problem: `an invalid ${what} ${text.slice(0, 300)}: ${describeErrors(validate.errors)}` },
    judges: () => [requirement],
  };
}

/** The extension's rules of every frame, and which of them a frame is judged by (R1 off, R2 accepted, R3 tokens). */
function resumeRule(resumable: boolean, seen: Set<string>): JudgedRule {
  return {
    rule: resumeFrameRule(resumable, seen),
    judges: (frame) =>
      !resumable
        ? [RES.notOptedIn]
        : frame.type === 'accepted'
          ? [RES.resumeToken]
          : ['token', 'reply', 'error'].includes(String(frame.type))
            ? [RES.positions]
            : [],
  };
}

/**
 * What every received frame is checked against: the open schemas (the protocol), then in the bridge profile ours;
 * in the resume profile, on app connections, the extension's rules of every frame (resume-frames.ts).
 */
function frameRules(options: ConnectOptions): JudgedRule[] {
  const { endpoint, profile } = options;
  const open = (
    endpoint === 'app' ? validateOpenServiceToAppMessage : validateOpenServiceToAgentMessage
  ) as Validator<unknown>;
  const closed = (
    endpoint === 'app' ? validateServiceToAppMessage : validateServiceToAgentMessage
  ) as Validator<unknown>;
  return [
    schemaRule(FRAME_REQUIREMENTS.protocol, open, `${endpoint} frame`),
    ...(profile === 'bridge'
      ? [
          {
            ...schemaRule(
              FRAME_REQUIREMENTS.decision,
              closed,
              `${endpoint} frame by this implementation's closed schema`,
            ),
            skipAfter: FRAME_REQUIREMENTS.protocol,
          },
        ]
      : []),
    ...(profile === 'resume' && endpoint === 'app'
      ? [resumeRule(!!options.resume, options.resumeTokens ?? new Set())]
      : []),
  ];
}

/** A handshake the target refused at the HTTP level, instead of completing the upgrade. */
export interface HttpRefusal {
  status: number;
  body: string;
}

export interface ConnectOptions {
  name: string;
  wsBase: string;
  /** Named in the transcript when the bridge is several nodes. */
  node?: string | undefined;
  endpoint: ClientKind;
  token: string | undefined;
  carrier: Carrier;
  /** With carrier `both`: the token for `?token=` (the header carries `token`). */
  queryToken?: string | undefined;
  transcript: Transcript;
  timeoutMs: number;
  profile: Profile;
  /** Opens the app connection with `?resume=1` (the resume extension, R1). */
  resume?: boolean | undefined;
  /** Opens the agent connection with `?cancel=1` (the cancel extension, S1). */
  cancel?: boolean | undefined;
  /** The resume tokens the scenario's connections received so far (R2: one per event). */
  resumeTokens?: Set<string> | undefined;
  /** Where a frame that breaks a frame rule is recorded (the scenario goes on), and the rules that held. */
  ledger: Ledger;
}

export class Actor {
  private readonly queue: Record<string, unknown>[] = [];
  /** performance.now() when each queued frame arrived: steps compare arrivals on different connections. */
  private readonly arrivals = new WeakMap<object, number>();
  /** The frame rules each received frame broke (recorded in the ledger already). */
  private readonly brokenFrames = new WeakMap<object, string[]>();
  private waiting: ((frame: Record<string, unknown> | undefined) => void) | undefined;
  /** A frame that could not be queued (not JSON text): a step waiting for it then waits in vain, because of it. */
  unreadable = false;
  /** The suite itself is closing the connection (the scenario's end, a drop): its close is not the target's. */
  private closingBySuite = false;
  closeInfo: { code: number; reason: string } | undefined;
  private closeWaiter: (() => void) | undefined;

  private constructor(
    readonly name: string,
    readonly endpoint: ClientKind,
    private readonly ws: WebSocket,
    private readonly transcript: Transcript,
    rules: JudgedRule[],
    ledger: Ledger,
  ) {
    ws.on('message', (data, isBinary) => {
      const at = performance.now();
      const text = data.toString();
      transcript.add(name, 'received', isBinary ? `(binary, ${text.length} bytes)` : text);
      let frame: Record<string, unknown>;
      try {
        if (isBinary) throw new Error('binary frame');
        frame = JSON.parse(text) as Record<string, unknown>;
      } catch {
        this.unreadable = true;
        ledger.frameProblem(
          FRAME_REQUIREMENTS.protocol,
          name,
          `${name} received a frame that is not JSON text: ${text.slice(0, 200)}`,
        );
        return this.wake(undefined);
      }
      // Every rule sees every frame, in order: the extension's remember positions and tokens. A broken rule is
      // recorded and the frame still goes to the steps, which judge what they check of it.
      const broke: string[] = [];
      for (const { rule, judges, skipAfter } of rules) {
        // A frame that is no message of the protocol is not judged again by our closed schema: one defect, one blame.
        if (skipAfter && broke.includes(skipAfter)) continue;
        const broken = rule(frame, text);
        if (broken) {
          broke.push(broken.requirement);
          ledger.frameProblem(broken.requirement, name, `${name} received ${broken.problem}`);
        } else ledger.checked(judges(frame));
      }
      if (broke.length) this.brokenFrames.set(frame, broke);
      this.arrivals.set(frame, at);
      this.queue.push(frame);
      this.wake(undefined);
    });
    ws.on('close', (code, reason) => {
      this.closeInfo = { code, reason: reason.toString() };
      if (!this.closingBySuite) transcript.add(name, 'closed', `${code} ${reason.toString()}`);
      this.wake(undefined);
      this.closeWaiter?.();
    });
    ws.on('error', (err) => transcript.add(name, 'note', `socket error: ${err.message}`));
  }

  /** Opens the connection; a refused upgrade rejects with what the target answered. */
  static async connect(options: ConnectOptions): Promise<Actor> {
    const attempt = await Actor.attempt(options);
    if ('status' in attempt)
      throw new Error(
        `${options.name}: the upgrade was answered with HTTP ${attempt.status} ${attempt.body.slice(0, 200)}`,
      );
    return attempt;
  }

  /** Opens the connection, or tells how the target refused the upgrade (its HTTP status and body). */
  static async attempt(options: ConnectOptions): Promise<Actor | HttpRefusal> {
    const url = new URL(`${options.wsBase.replace(/\/$/, '')}/ws/${options.endpoint}`);
    const queryToken =
      options.carrier === 'both'
        ? (options.queryToken ?? options.token)
        : options.carrier === 'query'
          ? options.token
          : undefined;
    if (queryToken) url.searchParams.set('token', queryToken);
    if (options.resume) url.searchParams.set('resume', '1');
    if (options.cancel) url.searchParams.set('cancel', '1');
    const headers =
      options.token && (options.carrier === 'header' || options.carrier === 'both')
        ? { authorization: `Bearer ${options.token}` }
        : undefined;
    const ws = new WebSocket(url, { headers, handshakeTimeout: options.timeoutMs, perMessageDeflate: false });
    const actor = new Actor(
      options.name,
      options.endpoint,
      ws,
      options.transcript,
      frameRules(options),
      options.ledger,
    );
    options.transcript.add(
      options.name,
      'note',
      `connect ${options.endpoint} (${options.carrier})${options.resume ? ' resumable' : ''}${options.node ? ` on ${options.node}` : ''}`,
    );
    return new Promise<Actor | HttpRefusal>((resolve, reject) => {
      ws.once('open', () => resolve(actor));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => {
          options.transcript.add(options.name, 'note', `upgrade refused: HTTP ${res.statusCode} ${body.slice(0, 300)}`);
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.once('error', reject);
    });
  }

  private nothing(message: string, awaited: string | undefined): NothingArrived {
    return new NothingArrived(message, this.name, this.endpoint, awaited);
  }

  private wake(frame: Record<string, unknown> | undefined): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.(frame);
  }

  send(frame: unknown): void {
    const text = typeof frame === 'string' ? frame : JSON.stringify(frame);
    this.transcript.add(this.name, 'sent', text);
    this.ws.send(text);
  }

  /** Sends a binary frame (robustness mode's hostile input); the transcript shows its size and first bytes. */
  sendBinary(data: Buffer): void {
    this.transcript.add(this.name, 'sent', `(binary, ${data.length} bytes) ${data.subarray(0, 32).toString('hex')}`);
    this.ws.send(data, { binary: true });
  }

  /** The next frame in order, or an error naming what happened instead; `awaited`: the type the step waits for. */
  async next(timeoutMs: number, awaited?: string): Promise<Record<string, unknown>> {
    for (;;) {
      const frame = this.queue.shift();
      if (frame) return frame;
      if (this.closeInfo)
        throw new Error(
          `${this.name}: connection closed (${this.closeInfo.code} ${this.closeInfo.reason}) while a frame was expected`,
        );
      const arrived = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        this.waiting = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      if (!arrived) throw this.nothing(`${this.name}: no frame within ${timeoutMs} ms`, awaited);
    }
  }

  /** When a frame `next` returned arrived (performance.now(), as `mark` records it). */
  arrivedAt(frame: Record<string, unknown>): number | undefined {
    return this.arrivals.get(frame);
  }

  /** Removes the first queued frame of a type (heartbeat pongs while the clock moves), keeping the others in order. */
  async take(type: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.queue.findIndex((f) => f.type === type);
      if (i >= 0) {
        this.queue.splice(i, 1);
        return;
      }
      if (this.closeInfo) return;
      const left = deadline - Date.now();
      if (left <= 0) throw this.nothing(`${this.name}: no ${type} within ${timeoutMs} ms`, type);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  async closed(timeoutMs: number): Promise<{ code: number; reason: string }> {
    if (!this.closeInfo) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${this.name}: not closed within ${timeoutMs} ms`)), timeoutMs);
        this.closeWaiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.closeInfo!;
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** The frame rules a received frame broke (none: an empty list). */
  broke(frame: object): string[] {
    return this.brokenFrames.get(frame) ?? [];
  }

  /** Whether a frame of this type was received and not yet consumed (an agent holding its event). */
  holds(type: string): boolean {
    return this.queue.some((f) => f.type === type);
  }

  /** Frames received and not yet consumed. */
  get pending(): number {
    return this.queue.length;
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000);
  }

  /** Ends the connection; the transcript says why instead of showing the suite's 1006 as the target's close. */
  terminate(why = 'end of the scenario'): void {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    this.closingBySuite = true;
    this.transcript.add(this.name, 'note', `closed by the suite (${why})`);
    this.ws.terminate();
  }

  /** Cuts the connection as a dead network does: the socket is destroyed, the target gets no close frame. */
  drop(): void {
    this.transcript.add(this.name, 'note', 'connection dropped (socket destroyed, no close frame)');
    this.closingBySuite = true;
    this.ws.terminate();
  }
}
