// The resource cases' own sockets, outside the transcript (a case opens hundreds): plain WebSocket clients, and raw
// TCP sockets for what no WebSocket client sends — an upgrade never finished, a frame never finished, a reader that
// stops reading. Hostile sockets come from another loopback address than the canary's where the target is on
// 127.0.0.1, so that a bound per remote address, which a bridge may well have, refuses them and not the canary.
import { randomBytes } from 'node:crypto';
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import WebSocket from 'ws';
import { LIMITS, type ClientKind } from '../../../generated/index.js';
import type { ResourceContext } from './types.js';

export interface Endpoint {
  host: string;
  port: number;
  /** '/v1/ws/app' */
  path: string;
  secure: boolean;
  /** The hostile sockets' source address, when the target is on 127.0.0.1. */
  localAddress?: string;
}

export function endpointOf(url: string, kind: ClientKind): Endpoint {
  const u = new URL(`${url.replace(/\/$/, '')}/ws/${kind}`);
  const secure = u.protocol === 'wss:';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return {
    host,
    port: Number(u.port || (secure ? 443 : 80)),
    path: u.pathname,
    secure,
    ...(host === '127.0.0.1' || host === 'localhost' ? { localAddress: '127.0.0.2' } : {}),
  };
}

const wsUrl = (e: Endpoint) =>
  `${e.secure ? 'wss' : 'ws'}://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}${e.path}`;

/** How a WebSocket client's attempt ended: open (and still open), refused with an HTTP status, closed, or failed. */
export type Outcome =
  | { kind: 'open'; ws: WebSocket }
  | { kind: 'http'; status: number }
  | { kind: 'closed'; code: number; reason: string; error?: string }
  | { kind: 'failed'; message: string };

/**
 * A WebSocket client with a token, from the hostile address. It settles once open and `settleMs` passed without a
 * close (a bridge may accept the upgrade and refuse at once with an error and a close), or on the refusal.
 */
export function openClient(
  e: Endpoint,
  token: string,
  options: { timeoutMs: number; settleMs: number },
): Promise<Outcome> {
  const ws = new WebSocket(wsUrl(e), {
    headers: { authorization: `Bearer ${token}` },
    handshakeTimeout: options.timeoutMs,
    perMessageDeflate: false,
    ...(e.localAddress ? { localAddress: e.localAddress } : {}),
  });
  let error: string | undefined;
  return new Promise((resolve) => {
    ws.on('message', (data) => {
      const text = data.toString();
      if (text.includes('"error"')) error ??= text.slice(0, 200);
    });
    ws.once('open', () =>
      setTimeout(() => ws.readyState === WebSocket.OPEN && resolve({ kind: 'open', ws }), options.settleMs),
    );
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ kind: 'http', status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.once('close', (code, reason) =>
      resolve({ kind: 'closed', code, reason: reason.toString(), ...(error ? { error } : {}) }),
    );
    ws.once('error', (err) => resolve({ kind: 'failed', message: err.message }));
  });
}

/** A raw TCP (or TLS) socket to the target, from the hostile address. */
export function openRaw(e: Endpoint, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const options = { host: e.host, port: e.port, ...(e.localAddress ? { localAddress: e.localAddress } : {}) };
    const socket: Socket = e.secure
      ? tlsConnect({ ...options, servername: e.host, rejectUnauthorized: false }, () => resolve(socket))
      : tcpConnect(options, () => resolve(socket));
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no connection within ${timeoutMs} ms`)));
    socket.once('error', reject);
    socket.once('connect', () => socket.setTimeout(0));
  });
}

/** An upgrade request with a token; without its last empty line when `finished` is false (the request never ends). */
export function upgradeRequest(e: Endpoint, token: string | undefined, finished: boolean): string {
  const lines = [
    `GET ${e.path} HTTP/1.1`,
    `Host: ${e.host}:${e.port}`,
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
    'Sec-WebSocket-Version: 13',
    ...(token ? [`Authorization: Bearer ${token}`] : []),
  ];
  return `${lines.join('\r\n')}\r\n${finished ? '\r\n' : ''}`;
}

/** Sends a whole upgrade request and reads the answer's status line and headers; the bytes after them stay unread. */
export function upgradeRaw(socket: Socket, e: Endpoint, token: string, timeoutMs: number): Promise<number> {
  socket.write(upgradeRequest(e, token, true));
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => done(new Error(`no answer to the upgrade within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      done(undefined, Number(/^HTTP\/1\.1 (\d+)/.exec(head.toString('latin1'))?.[1] ?? 0));
      const rest = head.subarray(end + 4);
      if (rest.length) socket.unshift(rest);
    };
    const onClose = () => done(new Error('the target closed the socket during the upgrade'));
    function done(err: Error | undefined, status = 0) {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      if (err) reject(err);
      else resolve(status);
    }
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

/**
 * A client's frame (masked, RFC 6455 §5.2), FIN set. `announced` is the payload length its header claims, which may
 * exceed what `payload` holds: the rest is never sent (a frame left unfinished).
 */
export function clientFrame(opcode: number, payload: Buffer, announced = payload.length): Buffer {
  const mask = randomBytes(4);
  const lengthBytes = announced < 126 ? 0 : announced < 65536 ? 2 : 8;
  const head = Buffer.alloc(2 + lengthBytes + 4);
  head[0] = 0x80 | opcode;
  head[1] = 0x80 | (lengthBytes === 0 ? announced : lengthBytes === 2 ? 126 : 127);
  if (lengthBytes === 2) head.writeUInt16BE(announced, 2);
  if (lengthBytes === 8) head.writeBigUInt64BE(BigInt(announced), 2);
  mask.copy(head, 2 + lengthBytes);
  const masked = Buffer.from(payload);
  for (let i = 0; i < masked.length; i++) masked[i]! ^= mask[i % 4]!;
  return Buffer.concat([head, masked]);
}

/** A close frame's code and reason, as one line. */
function closeOf(payload: Buffer): string {
  if (payload.length < 2) return 'close (no code)';
  return `close ${payload.readUInt16BE(0)} ${payload.subarray(2).toString('utf8')}`.trim();
}

/** The close frame that ends what a server sent, if its last frame is one (a close frame's payload is < 126 bytes). */
export function closeAtEnd(bytes: Buffer): string | undefined {
  for (let i = Math.max(0, bytes.length - 127); i + 2 <= bytes.length; i++) {
    const length = bytes[i + 1]!;
    if (bytes[i] === 0x88 && length < 126 && i + 2 + length === bytes.length) return closeOf(bytes.subarray(i + 2));
  }
  return undefined;
}

/**
 * A client of the target pair, from the canary's address (it is the victim of the load, not its source), outside the
 * transcript (it sends and receives thousands of frames), ended when the case ends.
 */
export function targetClient(ctx: ResourceContext, kind: ClientKind, query = ''): WebSocket {
  ctx.budget.connect();
  const ws = new WebSocket(`${ctx.url.replace(/\/$/, '')}/ws/${kind}${query}`, {
    headers: { authorization: `Bearer ${kind === 'app' ? ctx.target.appToken : ctx.target.agentToken}` },
    handshakeTimeout: ctx.timeoutMs,
    perMessageDeflate: false,
    maxPayload: 64 * LIMITS.frameMaxBytes, // an answer past the protocol's frame limit is read, to be reported
  });
  ctx.hold(() => ws.terminate());
  return ws;
}

/** Resolves with `link` once its client is open (how it closes is kept on it), or why the upgrade failed. */
export function opened<T extends { closed?: string }>(ws: WebSocket, link: T, who: string): Promise<T> {
  ws.on('close', (code, reason) => (link.closed = `close ${code} ${reason.toString()}`.trim()));
  ws.on('error', () => {});
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(link));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`${who}'s upgrade got HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}
