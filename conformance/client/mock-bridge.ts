// The client role's stand-in for the bridge: a WebSocket server on 127.0.0.1, port 0, serving `/v1/ws/app` and
// `/v1/ws/agent`. It accepts only the token it was given (Authorization: Bearer or ?token=) and refuses others as
// the real bridge does (one `error` frame, then a close whose code is the error's close code and whose reason is
// the code, W1). Every frame a client sends is validated against the generated schema of its direction and
// recorded with its time; pings are answered with pongs. Scenarios script the rest through `send` and `waitFor`.
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  CLOSE_CODES,
  ENDPOINT_PATHS,
  LIMITS,
  describeErrors,
  type ClientKind,
  type ErrorCode,
  validateAgentToServiceMessage,
  validateAppToServiceMessage,
} from '../../generated/index.js';
import type { Transcript } from '../actor.js';

/** One handshake the client attempted. */
export interface Attempt {
  at: number;
  path: string;
  carrier: 'header' | 'query' | 'both' | 'none';
  outcome: 'accepted' | 'refused-http' | 'unauthorized' | 'token-revoked' | 'forbidden' | 'not-found';
  /** The handshake asked for the cancel extension (`?cancel=1`, S1). */
  cancel: boolean;
}

/** One frame the client sent. */
export interface ReceivedFrame {
  at: number;
  connection: number;
  text: string;
  frame: Record<string, unknown> | undefined;
  /** The schema error, when the frame is not a valid message of the client's direction. */
  invalid?: string;
}

export interface MockBridgeEvents {
  attempt: [attempt: Attempt];
  connection: [id: number];
  frame: [frame: ReceivedFrame];
  disconnect: [info: { connection: number; code: number; reason: string; at: number }];
}

type Refusal = Extract<ErrorCode, 'UNAUTHORIZED' | 'TOKEN_REVOKED' | 'FORBIDDEN'>;
const OUTCOMES: Record<Refusal, Attempt['outcome']> = {
  UNAUTHORIZED: 'unauthorized',
  TOKEN_REVOKED: 'token-revoked',
  FORBIDDEN: 'forbidden',
};
const REFUSALS: Record<Refusal, string> = {
  UNAUTHORIZED: 'Missing or invalid token.',
  TOKEN_REVOKED: "This token's app or agent was deactivated.",
  FORBIDDEN: 'This token is not for {path}.',
};

export class MockBridge extends EventEmitter<MockBridgeEvents> {
  readonly attempts: Attempt[] = [];
  readonly frames: ReceivedFrame[] = [];
  readonly disconnects: { connection: number; code: number; reason: string; at: number }[] = [];
  /** The next this many handshakes are refused at the HTTP level (503) before any upgrade: the bridge looks down. */
  refuseNext = 0;
  /** Every handshake is refused as if the token had been revoked: UNAUTHORIZED the first time, then TOKEN_REVOKED. */
  refuseToken = false;
  /** Pings on these connections get no pong: the bridge looks dead to the client. */
  readonly silent = new Set<number>();
  /** When each authenticated connection opened (ms since the mock started). */
  readonly openedAt = new Map<number, number>();
  /** The authenticated connections whose handshake opted in to the cancel extension (`?cancel=1`, S1). */
  readonly cancelOptIn = new Set<number>();
  private readonly started = performance.now();
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.frameMaxBytes });
  private readonly sockets = new Map<number, WebSocket>();
  private nextId = 0;
  private current: number | undefined;

  private constructor(
    private readonly server: Server,
    readonly role: ClientKind,
    readonly token: string,
    private readonly transcript: Transcript,
  ) {
    super();
    server.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket, head));
  }

  static async start(options: { role: ClientKind; token: string; transcript: Transcript }): Promise<MockBridge> {
    const server = createServer((_req, res) => res.writeHead(404).end());
    const mock = new MockBridge(server, options.role, options.token, options.transcript);
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
    return mock;
  }

  /** The base URL a client is given (BRIDGE_URL): `ws://127.0.0.1:PORT/v1`. */
  get url(): string {
    const address = this.server.address();
    if (!address || typeof address === 'string') throw new Error('the mock bridge is not listening');
    return `ws://127.0.0.1:${address.port}/v1`;
  }

  /** Milliseconds since the mock started. */
  now(): number {
    return Math.round(performance.now() - this.started);
  }

  /** The id of the newest authenticated connection still open. */
  get connection(): number | undefined {
    return this.current;
  }

  isOpen(id: number | undefined = this.current): boolean {
    return id !== undefined && this.sockets.has(id);
  }

  /** Sends a frame on a connection (default: the newest one). Returns false when it is not open. */
  send(frame: Record<string, unknown>, id: number | undefined = this.current): boolean {
    const ws = id === undefined ? undefined : this.sockets.get(id);
    if (!ws) return false;
    const text = JSON.stringify(frame);
    this.transcript.add('mock', 'sent', text);
    ws.send(text);
    return true;
  }

  closeConnection(code: number, reason: string, id: number | undefined = this.current): void {
    const ws = id === undefined ? undefined : this.sockets.get(id);
    ws?.close(code, reason);
  }

  /** A line in the transcript from the suite. */
  note(text: string): void {
    this.transcript.add('mock', 'note', text);
  }

  /** Drops the TCP connection without a close frame, as a crashed bridge or a broken network does. */
  dropConnection(id: number | undefined = this.current): void {
    const ws = id === undefined ? undefined : this.sockets.get(id);
    ws?.terminate();
  }

  /** How many authenticated connections are open now. */
  get openConnections(): number {
    return this.sockets.size;
  }

  async stop(): Promise<void> {
    for (const ws of this.sockets.values()) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // A client that resets the connection while it is refused must not crash the run (ECONNRESET on the socket).
    socket.on('error', () => {});
    const url = new URL(req.url ?? '/', 'http://mock');
    const header = req.headers.authorization;
    const headerToken = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
    const queryToken = url.searchParams.get('token') ?? undefined;
    const carrier: Attempt['carrier'] =
      headerToken !== undefined
        ? queryToken !== undefined
          ? 'both'
          : 'header'
        : queryToken !== undefined
          ? 'query'
          : 'none';
    const cancel = url.searchParams.get('cancel') === '1';
    const attempt: Attempt = { at: this.now(), path: url.pathname, carrier, outcome: 'accepted', cancel };
    const record = () => {
      this.attempts.push(attempt);
      this.transcript.add(
        'client',
        'note',
        `handshake ${attempt.path}${cancel ? '?cancel=1' : ''} (token in ${carrier}): ${attempt.outcome}`,
      );
      this.emit('attempt', attempt);
    };
    if (!Object.values<string>(ENDPOINT_PATHS).includes(url.pathname)) {
      attempt.outcome = 'not-found';
      record();
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (this.refuseNext > 0) {
      this.refuseNext--;
      attempt.outcome = 'refused-http';
      record();
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    // The header wins when both are present (W12).
    const token = headerToken ?? queryToken;
    const revoked =
      this.refuseToken && token === this.token
        ? this.attempts.some((a) => a.outcome === 'unauthorized')
          ? 'TOKEN_REVOKED'
          : 'UNAUTHORIZED'
        : undefined;
    const refusal: Refusal | undefined =
      token !== this.token ? 'UNAUTHORIZED' : url.pathname !== ENDPOINT_PATHS[this.role] ? 'FORBIDDEN' : revoked;
    if (refusal) attempt.outcome = OUTCOMES[refusal];
    record();
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      if (refusal) {
        const frame = { type: 'error', code: refusal, error: REFUSALS[refusal].replace('{path}', url.pathname) };
        this.transcript.add('mock', 'sent', JSON.stringify(frame));
        ws.send(JSON.stringify(frame));
        ws.close(CLOSE_CODES[refusal], refusal);
        return;
      }
      this.accept(ws, cancel);
    });
  }

  private accept(ws: WebSocket, cancel: boolean): void {
    const id = ++this.nextId;
    this.sockets.set(id, ws);
    this.openedAt.set(id, this.now());
    if (cancel) this.cancelOptIn.add(id);
    this.current = id;
    this.transcript.add('client', 'note', `connection ${id} open`);
    const validate = this.role === 'app' ? validateAppToServiceMessage : validateAgentToServiceMessage;
    ws.on('message', (data, isBinary) => {
      const text = isBinary ? `<binary ${(data as Buffer).length} bytes>` : data.toString();
      this.transcript.add('client', 'received', text);
      let frame: Record<string, unknown> | undefined;
      let invalid: string | undefined;
      try {
        const parsed: unknown = isBinary ? undefined : JSON.parse(text);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) frame = parsed as Record<string, unknown>;
      } catch {
        invalid = 'not valid JSON';
      }
      if (!invalid && (!frame || !validate(frame)))
        invalid = frame ? describeErrors(validate.errors) : 'not a JSON object';
      const received: ReceivedFrame = { at: this.now(), connection: id, text, frame, ...(invalid ? { invalid } : {}) };
      this.frames.push(received);
      this.emit('frame', received);
      if (!invalid && frame?.type === 'ping' && !this.silent.has(id)) this.send({ type: 'pong' }, id);
    });
    ws.on('close', (code, reason) => {
      this.sockets.delete(id);
      if (this.current === id) this.current = undefined;
      const info = { connection: id, code, reason: reason.toString(), at: this.now() };
      this.disconnects.push(info);
      this.transcript.add('client', 'closed', `connection ${id}: ${code} ${info.reason}`);
      this.emit('disconnect', info);
    });
    ws.on('error', () => {});
    this.emit('connection', id);
  }
}
