// WebSocket by hand, for the attacks a WebSocket library will not make: a client that never reads (ws resumes its
// socket on its own), a frame left unfinished, an upgrade request left half-written.
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/** A TCP connection to `url`'s host and port from `localAddress`; resolves once connected. */
export function rawConnect(url: string, localAddress: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** The start of an upgrade request: every header line but the blank line that ends it. */
export function upgradeHead(url: string, path: string, token?: string): string {
  const { host } = new URL(url);
  const lines = [
    `GET ${path} HTTP/1.1`,
    `Host: ${host}`,
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
    'Sec-WebSocket-Version: 13',
  ];
  if (token) lines.push(`Authorization: Bearer ${token}`);
  return `${lines.map((l) => `${l}\r\n`).join('')}`;
}

/**
 * A WebSocket handshake done by hand: resolves with the socket once the bridge answered 101 (what it sent after the
 * answer is dropped), rejects with `http <status>` or the socket's error.
 */
export async function rawUpgrade(
  url: string,
  path: string,
  token: string,
  localAddress: string,
  timeoutMs = 10_000,
): Promise<Socket> {
  const socket = await rawConnect(url, localAddress);
  return new Promise((resolve, reject) => {
    let head = '';
    const settle = () => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', fail);
      socket.off('close', closed);
    };
    const fail = (err: Error) => {
      settle();
      socket.destroy();
      reject(err);
    };
    const closed = () => fail(new Error('closed before the answer'));
    const timer = setTimeout(() => fail(new Error('timeout')), timeoutMs);
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const status = /^HTTP\/1\.1 (\d+)/.exec(head)?.[1];
      if (status !== '101') return fail(new Error(`http ${status ?? '?'}`));
      settle();
      resolve(socket);
    };
    socket.on('data', onData);
    socket.once('error', fail);
    socket.once('close', closed);
    socket.write(`${upgradeHead(url, path, token)}\r\n`);
  });
}

/**
 * A client's text frame (FIN, opcode 1, masked as a client must): with the all-zero masking key, which leaves the
 * payload as it is, so one large frame can be made once and sent on many sockets.
 */
export function clientFrame(payload: Buffer): Buffer {
  const n = payload.length;
  const lengthBytes = n < 126 ? 0 : n < 65_536 ? 2 : 8;
  const head = Buffer.alloc(2 + lengthBytes + 4); // the 4 bytes of the masking key stay 0
  head[0] = 0x81;
  if (lengthBytes === 0) head[1] = 0x80 | n;
  else if (lengthBytes === 2) {
    head[1] = 0x80 | 126;
    head.writeUInt16BE(n, 2);
  } else {
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}
