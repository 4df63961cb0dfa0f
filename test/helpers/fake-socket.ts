// The fake bridge socket of the SDK unit tests (app client, connection), given through ConnectionOptions.createSocket.
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { CLOSE_CODES, type ErrorCode } from '../../generated/index.js';

/** Stands in for a `ws` WebSocket: the test plays the bridge by calling open, receive and drop. */
export class FakeSocket extends EventEmitter {
  readyState: number = WebSocket.CONNECTING;
  readonly sent: Record<string, any>[] = [];

  constructor(
    readonly url: string,
    readonly headers: Record<string, string>,
  ) {
    super();
  }

  // --- what BridgeConnection calls
  send(text: string): void {
    this.sent.push(JSON.parse(text));
  }
  close(code = 1000, reason = ''): void {
    this.drop(code, reason);
  }
  terminate(): void {
    this.drop(1006);
  }

  // --- what the test calls
  open(): void {
    this.readyState = WebSocket.OPEN;
    this.emit('open');
  }
  receive(message: unknown): void {
    this.emit('message', Buffer.from(JSON.stringify(message)), false);
  }
  drop(code = 1006, reason = ''): void {
    if (this.readyState === WebSocket.CLOSED) return;
    this.readyState = WebSocket.CLOSED;
    this.emit('close', code, Buffer.from(reason));
  }
  /** What a refused handshake looks like (W1): upgraded, one error without event_id, then the code's close. */
  refuse(code: Extract<ErrorCode, 'UNAUTHORIZED' | 'TOKEN_REVOKED' | 'FORBIDDEN'>, text: string): void {
    this.open();
    this.receive({ type: 'error', code, error: text });
    this.drop(CLOSE_CODES[code], code);
  }
  sentOfType(type: string): Record<string, any>[] {
    return this.sent.filter((m) => m.type === type);
  }
}
