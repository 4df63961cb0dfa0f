// The two WebSocket endpoints on the HTTP server: pure I/O. The handshake is always completed, even for a bad
// token, so that every client (browsers included) learns why from the core: one `error`, then a 4xxx close whose
// reason is the code.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import { LIMITS } from '../../generated/index.js';
import type { Bridge } from '../core/bridge.js';
import { endpointOf, type ConnectionFacts } from '../core/handshake.js';
import type { Logger } from '../shared/logger.js';
import type { Socket } from '../core/transport.js';
import { writeBatcher } from './write-batch.js';
import { PartialMessage } from './partial-message.js';

export interface WebSocketEndpoints {
  /** Refuses new upgrades (HTTP 503) from now on. */
  stopAccepting(): void;
  /** Stops accepting upgrades and drops every socket that is still open. */
  close(): void;
}

export interface EndpointDeps {
  bridge: Bridge;
  log: Logger;
  /** The client's address for the per-address bound (L18) and logs: the forwarded one behind trusted proxies (O12). */
  addressOf(req: IncomingMessage): string | undefined;
  /** Told when the core accepts a connection: it is no longer unauthenticated (L21). */
  authenticated?(socket: Duplex): void;
}

export function attachWebSockets(server: Server, deps: EndpointDeps): WebSocketEndpoints {
  const { bridge, log, addressOf } = deps;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: LIMITS.frameMaxBytes,
    perMessageDeflate: false,
    // ws's default waits 30 s for a client to answer the close, holding whatever its socket holds (L19).
    closeTimeout: LIMITS.closeHandshakeTimeoutMs,
  } as ConstructorParameters<typeof WebSocketServer>[0]); // closeTimeout is ws's (8.18+), not yet in @types/ws
  const batch = writeBatcher();
  let nextId = 1;
  let accepting = true;

  function connect(ws: WebSocket, req: IncomingMessage, raw: Duplex, url: URL): void {
    const socket: Socket = {
      id: nextId++,
      send: (frame) => {
        if (ws.readyState !== WebSocket.OPEN) return;
        batch(raw);
        ws.send(frame);
      },
      close: (code, reason) => ws.close(code, reason),
      bufferedBytes: () => ws.bufferedAmount,
      pause: () => ws.pause(),
      resume: () => ws.resume(),
      ping: (left) => {
        if (ws.readyState === WebSocket.OPEN) ws.ping(undefined, undefined, (err) => err || left());
      },
      terminate: () => ws.terminate(),
      // Two turns of the event loop: the rest of this turn's reads, then a poll for what arrived meanwhile.
      afterReads: (then) => void setImmediate(() => setImmediate(then)),
      accepted: () => deps.authenticated?.(raw),
    };
    const facts: ConnectionFacts = {
      path: url.pathname,
      authorization: req.headers.authorization,
      query: url.searchParams,
      address: addressOf(req),
      resumable: url.searchParams.get('resume') === '1',
      cancellable: url.searchParams.get('cancel') === '1',
    };
    ws.on('error', (err) => log.warn({ conn: socket.id, address: facts.address, err: err.message }, 'websocket error'));
    const handlers = bridge.connect(socket, facts);
    // The answer to the handshake (corked in onUpgrade) leaves when the core says the connection is ready.
    if (handlers.ready) void handlers.ready.finally(() => raw.uncork());
    else raw.uncork();
    ws.on('close', (code: number, reason: Buffer) => handlers.closed(code, reason.toString()));
    ws.on('message', (data: RawData, isBinary: boolean) => handlers.message(isBinary ? '' : data.toString(), isBinary));
    ws.on('pong', () => handlers.pong?.());
    // The same bytes ws reads, after it has: the core learns what a message under way holds, when that changes (L20).
    const partial = new PartialMessage();
    let reported = 0;
    raw.on('data', (chunk: Buffer) => {
      const { held, restarted } = partial.read(chunk);
      if (held === reported && !restarted) return;
      reported = held;
      handlers.partial?.(held, restarted);
    });
  }

  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // Once 'upgrade' fires the socket is ours: a client that resets it while it is refused (404, 503) would
    // otherwise be an unhandled 'error' that ends the process.
    socket.on('error', (err) => log.debug({ err: err.message }, 'upgrade socket error'));
    const url = new URL(req.url ?? '/', 'http://bridge');
    const kind = endpointOf(url.pathname);
    if (!accepting) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (!kind) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    // ws writes its 101 before it hands over the socket: corked, it stays here with what the core sends until
    // the core has made the connection ready (an agent's claim on several nodes, O14), then leaves at once.
    socket.cork();
    wss.handleUpgrade(req, socket, head, (ws) => connect(ws, req, socket, url));
  }

  server.on('upgrade', onUpgrade);
  return {
    stopAccepting() {
      accepting = false;
    },
    close() {
      server.off('upgrade', onUpgrade);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}
