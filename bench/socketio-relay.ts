// A Socket.IO relay: what users who do not pick the bridge build instead (issue 32), the benchmark's third target.
// Written as a Socket.IO 4 user would write it, and not tuned against the bridge: a plain `Server` on an HTTP
// server, WebSocket only (no long-polling, so that the comparison is WebSocket to WebSocket) and no
// permessage-deflate (the bridge and the bare relay have none either); every other option is Socket.IO's default.
// No authentication, no validation, no event log.
//
//   agent  connects with `auth: { agent_id }` and joins the room `agent:<agent_id>`;
//   app    emits `event` ({ agent_id, thread_id, payload }) with an acknowledgement: the server names the event
//          (a random UUID), acknowledges it with { event_id } (the `accepted` the generator measures) and emits
//          `event` ({ event_id, thread_id, payload }) to the agent's room; with no agent in that room it
//          acknowledges { error } instead;
//   agent  emits `token` ({ event_id, token }) any number of times, then `reply` ({ event_id, content, done }):
//          the server forwards each, as it came, to the app that sent the event.
//
//   node --import tsx bench/socketio-relay.ts [--port P] [--host H]
//
// Prints `listening <port>` on stdout once it accepts connections (port 0 picks a free one). Stops on SIGTERM/SIGINT.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Server, type Socket } from 'socket.io';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});

interface Forwarded {
  event_id: string;
}

const server = createServer();
const io = new Server(server, { transports: ['websocket'], perMessageDeflate: false });

// Which app sent each event still open: a map from event id to the app's socket, rather than a room per app. The
// agent's `token` names only the event, so a room per app would need this map all the same (event id -> room) and
// would then send each fragment through the adapter's broadcast to a room of one; the socket is at hand when the
// event arrives, and a map lookup is all that forwarding needs. An event is forgotten at its reply, or when its
// app disconnects.
const appOf = new Map<string, Socket>();

io.on('connection', (socket) => {
  const agentId = (socket.handshake.auth as { agent_id?: unknown }).agent_id;
  if (typeof agentId === 'string') {
    void socket.join(`agent:${agentId}`);
    socket.on('token', (msg: Forwarded) => appOf.get(msg.event_id)?.emit('token', msg));
    socket.on('reply', (msg: Forwarded) => {
      appOf.get(msg.event_id)?.emit('reply', msg);
      appOf.delete(msg.event_id);
    });
    return;
  }
  socket.on(
    'event',
    (msg: { agent_id: string; thread_id: string; payload: unknown }, ack: (answer: object) => void) => {
      const room = `agent:${msg.agent_id}`;
      if (!io.sockets.adapter.rooms.has(room)) return ack({ error: 'agent offline' });
      const event_id = randomUUID();
      appOf.set(event_id, socket);
      ack({ event_id });
      io.to(room).emit('event', { event_id, thread_id: msg.thread_id, payload: msg.payload });
    },
  );
  socket.on('disconnect', () => {
    for (const [id, app] of appOf) if (app === socket) appOf.delete(id);
  });
});

server.listen(Number(values.port), values.host, () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`);
});

const stop = () => {
  io.disconnectSockets(true);
  void io.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
