// A queueing WebSocket test client (after graphql-ws's): every frame the bridge sends is checked against the
// generated validator of its direction, and a test reads frames in order with waitForMessage/waitForClose.
import WebSocket from 'ws';
import {
  describeErrors,
  ENDPOINT_PATHS,
  validateServiceToAgentMessage,
  validateServiceToAppMessage,
  type ClientKind,
  type ServiceToAgentMessage,
  type ServiceToAppMessage,
  type Validator,
} from '../../generated/index.js';

export type Carrier = 'header' | 'query' | 'both' | 'none';

interface Waiter<T> {
  resolve(value: T): void;
  reject(err: Error): void;
}

export class TestClient<Incoming extends { type: string }> {
  private readonly queue: Incoming[] = [];
  private readonly waiters: Waiter<Incoming>[] = [];
  private closeInfo: { code: number; reason: string } | undefined;
  private readonly closeWaiters: Waiter<{ code: number; reason: string }>[] = [];
  private invalid: Error | undefined;

  private constructor(
    readonly ws: WebSocket,
    private readonly validate: Validator<Incoming>,
  ) {
    ws.on('message', (data, isBinary) => this.onFrame(data.toString(), isBinary));
    ws.on('close', (code, reason) => {
      this.closeInfo = { code, reason: reason.toString() };
      for (const w of this.closeWaiters.splice(0)) w.resolve(this.closeInfo);
      for (const w of this.waiters.splice(0))
        w.reject(new Error(`connection closed (${code} ${reason}) while waiting for a message`));
    });
  }

  static async connect<K extends ClientKind>(
    baseUrl: string,
    kind: K,
    token: string | undefined,
    carrier: Carrier = 'header',
    headerToken = token,
    /**
     * More of ws's options: `ca` for a bridge with a test certificate, headers a proxy would add; and `resume`,
     * to open the connection with ?resume=1 (resumable streams, R1); `cancel`, with ?cancel=1 (S1).
     */
    { resume, cancel, ...options }: WebSocket.ClientOptions & { resume?: boolean; cancel?: boolean } = {},
  ): Promise<TestClient<K extends 'app' ? ServiceToAppMessage : ServiceToAgentMessage>> {
    const url = new URL(ENDPOINT_PATHS[kind], baseUrl.replace(/^http/, 'ws'));
    if (token && (carrier === 'query' || carrier === 'both')) url.searchParams.set('token', token);
    if (resume) url.searchParams.set('resume', '1');
    if (cancel) url.searchParams.set('cancel', '1');
    const headers: Record<string, string> = { ...options.headers };
    if (headerToken && (carrier === 'header' || carrier === 'both')) headers.authorization = `Bearer ${headerToken}`;
    const ws = new WebSocket(url, Object.keys(headers).length ? { ...options, headers } : options);
    const validate = (kind === 'app' ? validateServiceToAppMessage : validateServiceToAgentMessage) as Validator<any>;
    const client = new TestClient(ws, validate);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return client as any;
  }

  private onFrame(text: string, isBinary: boolean): void {
    let message: unknown;
    try {
      if (isBinary) throw new Error('binary frame');
      message = JSON.parse(text);
    } catch (err) {
      this.invalid = new Error(`the bridge sent a frame that is not JSON text: ${text.slice(0, 200)}`);
    }
    if (!this.invalid && !this.validate(message)) {
      this.invalid = new Error(
        `the bridge sent an invalid frame ${text.slice(0, 300)}: ${describeErrors(this.validate.errors)}`,
      );
    }
    if (this.invalid) {
      for (const w of this.waiters.splice(0)) w.reject(this.invalid);
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(message as Incoming);
    else this.queue.push(message as Incoming);
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  sendBinary(bytes: Buffer): void {
    this.ws.send(bytes, { binary: true });
  }

  /** The next frame, in order. */
  waitForMessage(timeoutMs = 2000): Promise<Incoming> {
    if (this.invalid) return Promise.reject(this.invalid);
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.closeInfo)
      return Promise.reject(new Error(`connection is closed (${this.closeInfo.code} ${this.closeInfo.reason})`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new Error(`no message within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter: Waiter<Incoming> = {
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** The next frame, which must have this type; narrowed. */
  async expect<T extends Incoming['type']>(type: T, timeoutMs?: number): Promise<Extract<Incoming, { type: T }>> {
    const message = await this.waitForMessage(timeoutMs);
    if (message.type !== type) throw new Error(`expected a ${type} message, got ${JSON.stringify(message)}`);
    return message as Extract<Incoming, { type: T }>;
  }

  /** Proves nothing else is queued: the bridge answers in order, so the next frame after a ping is its pong. */
  async expectNothingBeforePong(): Promise<void> {
    this.send({ type: 'ping' });
    const next = await this.waitForMessage();
    if (next.type !== 'pong') throw new Error(`expected nothing but the pong, got ${JSON.stringify(next)}`);
  }

  waitForClose(timeoutMs = 2000): Promise<{ code: number; reason: string }> {
    if (this.closeInfo) return Promise.resolve(this.closeInfo);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not closed within ${timeoutMs} ms`)), timeoutMs);
      this.closeWaiters.push({
        resolve: (info) => {
          clearTimeout(timer);
          resolve(info);
        },
        reject,
      });
    });
  }

  get isClosed(): boolean {
    return this.closeInfo !== undefined;
  }

  close(code?: number, reason?: string): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING)
      this.ws.close(code, reason);
  }
}

export type AppClient = TestClient<ServiceToAppMessage>;
export type AgentClient = TestClient<ServiceToAgentMessage>;
