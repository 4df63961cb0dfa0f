// One named connection of a scenario (`app1`, `agent1`, …): frames arrive into a queue, each checked against the
// generated validator of its direction, and every frame both ways goes into the scenario's transcript.
import WebSocket from 'ws';
import {
  describeErrors,
  validateServiceToAgentMessage,
  validateServiceToAppMessage,
  type Validator,
} from '../generated/index.js';

export type Endpoint = 'app' | 'agent';
export type Carrier = 'header' | 'query' | 'both' | 'none';

export interface TranscriptLine {
  at_ms: number;
  actor: string;
  direction: 'sent' | 'received' | 'closed' | 'note';
  text: string;
}

export class Transcript {
  readonly lines: TranscriptLine[] = [];
  private readonly started = performance.now();

  add(actor: string, direction: TranscriptLine['direction'], text: string): void {
    this.lines.push({ at_ms: Math.round(performance.now() - this.started), actor, direction, text: text.length > 2000 ? `${text.slice(0, 2000)}… (${text.length} chars)` : text });
  }
}

export class ProtocolViolation extends Error {}

export class Actor {
  private readonly queue: Record<string, unknown>[] = [];
  private waiting: ((frame: Record<string, unknown> | undefined) => void) | undefined;
  private violation: ProtocolViolation | undefined;
  closeInfo: { code: number; reason: string } | undefined;
  private closeWaiter: (() => void) | undefined;

  private constructor(
    readonly name: string,
    readonly endpoint: Endpoint,
    private readonly ws: WebSocket,
    private readonly transcript: Transcript,
  ) {
    const validate = (endpoint === 'app' ? validateServiceToAppMessage : validateServiceToAgentMessage) as Validator<unknown>;
    ws.on('message', (data, isBinary) => {
      const text = data.toString();
      transcript.add(name, 'received', isBinary ? `(binary, ${text.length} bytes)` : text);
      let frame: unknown;
      try {
        if (isBinary) throw new Error('binary frame');
        frame = JSON.parse(text);
      } catch {
        this.violation ??= new ProtocolViolation(`${name} received a frame that is not JSON text: ${text.slice(0, 200)}`);
      }
      if (!this.violation && !validate(frame)) {
        this.violation = new ProtocolViolation(`${name} received an invalid ${endpoint} frame ${text.slice(0, 300)}: ${describeErrors(validate.errors)}`);
      }
      if (this.violation) return this.wake(undefined);
      this.queue.push(frame as Record<string, unknown>);
      this.wake(undefined);
    });
    ws.on('close', (code, reason) => {
      this.closeInfo = { code, reason: reason.toString() };
      transcript.add(name, 'closed', `${code} ${reason.toString()}`);
      this.wake(undefined);
      this.closeWaiter?.();
    });
    ws.on('error', (err) => transcript.add(name, 'note', `socket error: ${err.message}`));
  }

  static async connect(options: {
    name: string;
    wsBase: string;
    endpoint: Endpoint;
    token: string | undefined;
    carrier: Carrier;
    /** With carrier `both`: the token for `?token=` (the header carries `token`). */
    queryToken?: string | undefined;
    transcript: Transcript;
    timeoutMs: number;
  }): Promise<Actor> {
    const url = new URL(`${options.wsBase.replace(/\/$/, '')}/ws/${options.endpoint}`);
    const queryToken = options.carrier === 'both' ? (options.queryToken ?? options.token) : options.carrier === 'query' ? options.token : undefined;
    if (queryToken) url.searchParams.set('token', queryToken);
    const headers = options.token && (options.carrier === 'header' || options.carrier === 'both') ? { authorization: `Bearer ${options.token}` } : undefined;
    const ws = new WebSocket(url, { headers, handshakeTimeout: options.timeoutMs, perMessageDeflate: false });
    const actor = new Actor(options.name, options.endpoint, ws, options.transcript);
    options.transcript.add(options.name, 'note', `connect ${options.endpoint} (${options.carrier})`);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`${options.name}: the upgrade was answered with HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });
    return actor;
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

  /** The next frame in order, or an error naming what happened instead. */
  async next(timeoutMs: number): Promise<Record<string, unknown>> {
    for (;;) {
      if (this.violation) throw this.violation;
      const frame = this.queue.shift();
      if (frame) return frame;
      if (this.closeInfo) throw new Error(`${this.name}: connection closed (${this.closeInfo.code} ${this.closeInfo.reason}) while a frame was expected`);
      const arrived = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        this.waiting = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      if (!arrived) throw new Error(`${this.name}: no frame within ${timeoutMs} ms`);
    }
  }

  /** Removes the first queued frame of a type (heartbeat pongs while the clock moves), keeping the others in order. */
  async take(type: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.violation) throw this.violation;
      const i = this.queue.findIndex((f) => f.type === type);
      if (i >= 0) {
        this.queue.splice(i, 1);
        return;
      }
      if (this.closeInfo) return;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.name}: no ${type} within ${timeoutMs} ms`);
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

  /** Frames received and not yet consumed. */
  get pending(): number {
    return this.queue.length;
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000);
  }

  terminate(): void {
    this.ws.terminate();
  }
}
