// The two WebSocket endpoints on the HTTP server: pure I/O. The handshake is always completed, even for a bad
// token, so that every client (browsers included) learns why from the core: one `error`, then a 4xxx close whose
// reason is the code.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import { LIMITS } from '../../generated/index.js';
import type { Bridge } from '../core/bridge.js';
import type { ClientKind } from '../core/directory.js';
import type { Logger } from '../shared/logger.js';
import type { Connection } from '../core/router.js';
import { writeBatcher } from './write-batch.js';

const ENDPOINTS: Record<string, ClientKind> = { '/v1/ws/app': 'app', '/v1/ws/agent': 'agent' };

/** Header first (it stays out of access logs), then `?token=`. */
function tokenOf(req: IncomingMessage, url: URL): string | undefined {
  const header = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return header?.[1] ?? url.searchParams.get('token') ?? undefined;
}

export interface WebSocketEndpoints {
  /** Refuses new upgrades (HTTP 503) from now on. */
  stopAccepting(): void;
  /** Stops accepting upgrades and drops every socket that is still open. */
  close(): void;
}

export interface EndpointDeps {
  bridge: Bridge;
  log: Logger;
  /** Unread bytes a connection may have queued before it is closed with SLOW_CONSUMER (W17). */
  sendBufferMaxBytes: number;
  /** The client's address for the per-address bound (L18) and logs: the forwarded one behind trusted proxies (O12). */
  addressOf(req: IncomingMessage): string | undefined;
}

export function attachWebSockets(server: Server, deps: EndpointDeps): WebSocketEndpoints {
  const { bridge, log, sendBufferMaxBytes, addressOf } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.frameMaxBytes, perMessageDeflate: false });
  const batch = writeBatcher();
  let nextId = 1;
  let accepting = true;

  function connect(ws: WebSocket, req: IncomingMessage, socket: Duplex, kind: ClientKind, url: URL): void {
    let overflowed = false;
    const address = addressOf(req);
    const conn: Connection = {
      id: nextId++,
      send: (frame) => {
        if (ws.readyState !== WebSocket.OPEN) return;
        // A client that does not read must not make the bridge buffer without limit (W17). The frame that would
        // cross the cap is not queued; the error frame that follows it is, once, and the close after it.
        if (!overflowed && ws.bufferedAmount + frame.length > sendBufferMaxBytes) {
          overflowed = true;
          log.warn({ conn: conn.id, endpoint: kind, buffered: ws.bufferedAmount }, 'slow consumer closed');
          bridge.refuse(conn, 'SLOW_CONSUMER', `More than ${sendBufferMaxBytes} bytes were waiting for this connection to read them; read faster or open fewer streams.`);
          return;
        }
        batch(socket);
        ws.send(frame);
      },
      close: (code, reason) => ws.close(code, reason),
    };
    ws.on('error', (err) => log.warn({ conn: conn.id, address, err: err.message }, 'websocket error'));
    ws.on('close', () => bridge.closed(conn));
    ws.on('message', (data: RawData, isBinary: boolean) => {
      try {
        bridge.receive(conn, isBinary ? '' : data.toString(), isBinary);
      } catch (err) {
        // A bug must cost at most this connection, never the process or another client's data.
        log.error({ conn: conn.id, err }, 'frame handling failed');
        bridge.refuse(conn, 'INTERNAL_ERROR', 'The bridge failed to handle a message; reconnect and retry.');
      }
    });
    bridge.connect(conn, { endpoint: kind, token: tokenOf(req, url), address });
  }

  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // Once 'upgrade' fires the socket is ours: a client that resets it while it is refused (404, 503) would
    // otherwise be an unhandled 'error' that ends the process.
    socket.on('error', (err) => log.debug({ err: err.message }, 'upgrade socket error'));
    const url = new URL(req.url ?? '/', 'http://bridge');
    const kind = ENDPOINTS[url.pathname];
    if (!accepting) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (!kind) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => connect(ws, req, socket, kind, url));
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
