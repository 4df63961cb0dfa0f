// A bare WebSocket relay: the baseline the bridge is measured against. It pairs an "app" socket and an "agent"
// socket by a pairing key in the URL (`/app?key=K`, `/agent?key=K`) and forwards every frame of one to the other
// as it arrived: no parsing, no validation, no authentication, no event log. Frames that arrive before the other
// side connects are queued. `/echo` answers every frame with one fixed frame, unread: the baseline of a request and
// its acknowledgement.
//
//   node --import tsx bench/relay.ts [--port P] [--host H] [--batch]
//
// --batch: frames for one socket within one event-loop turn leave in one write, as the bridge sends them
// (src/ws/write-batch.ts); without it, one write per frame, as ws does by default.
//
// Prints `listening <port>` on stdout once it accepts connections (port 0 picks a free one). Stops on SIGTERM/SIGINT.
import { createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { writeBatcher } from '../src/ws/write-batch.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    batch: { type: 'boolean', default: false },
  },
});
const batch = values.batch ? writeBatcher() : undefined;
const sockets = new WeakMap<WebSocket, Duplex>();
function forward(ws: WebSocket, data: RawData | string, isBinary = false): void {
  const socket = sockets.get(ws);
  if (batch && socket) batch(socket);
  ws.send(data, { binary: isBinary });
}

interface Side {
  ws?: WebSocket;
  queue: { data: RawData; isBinary: boolean }[];
}
interface Pair {
  app: Side;
  agent: Side;
}
const pairs = new Map<string, Pair>();

const server = createServer((_req, res) => {
  res.writeHead(404).end();
});
const wss = new WebSocketServer({ server, perMessageDeflate: false });

const ACK = '{"type":"accepted"}';

wss.on('connection', (ws, req) => {
  sockets.set(ws, req.socket);
  const url = new URL(req.url ?? '/', 'http://relay');
  if (url.pathname === '/echo') {
    ws.on('message', () => forward(ws, ACK));
    ws.on('error', () => {});
    return;
  }
  const role = url.pathname === '/app' ? 'app' : url.pathname === '/agent' ? 'agent' : undefined;
  const key = url.searchParams.get('key');
  if (!role || !key) return ws.close(4400, 'use /app?key=K, /agent?key=K or /echo');
  let pair = pairs.get(key);
  if (!pair) pairs.set(key, (pair = { app: { queue: [] }, agent: { queue: [] } }));
  const mine = pair[role];
  const other = pair[role === 'app' ? 'agent' : 'app'];
  if (mine.ws) return ws.close(4409, 'key already in use');
  mine.ws = ws;
  // What the other side sent before this one came: deliver it now.
  for (const { data, isBinary } of other.queue) forward(ws, data, isBinary);
  other.queue.length = 0;
  ws.on('message', (data, isBinary) => {
    const peer = other.ws;
    if (peer) forward(peer, data, isBinary);
    else mine.queue.push({ data, isBinary });
  });
  ws.on('close', () => {
    mine.ws = undefined;
    other.ws?.close(1000, 'peer closed');
    if (!pair.app.ws && !pair.agent.ws) pairs.delete(key);
  });
  ws.on('error', () => {});
});

server.listen(Number(values.port), values.host, () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`);
});

const stop = () => {
  for (const client of wss.clients) client.terminate();
  wss.close();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
