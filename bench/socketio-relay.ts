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
// Several nodes (--redis-url): the documented @socket.io/redis-adapter over ioredis (`createAdapter(pubClient,
// subClient)`, default options but the channels' prefix, --redis-key). The app's socket and the agent's room may be
// on different nodes, so the event the agent gets also names the app's socket (`app`: its socket.id, the room every
// socket is in) and the agent's `token` and `reply` carry it back ({ event_id, app, … }); the server forwards them
// with `io.to(app)`, which the adapter carries to the app's node. Whether the agent is online is asked of every node
// (`io.in(room).fetchSockets()`), once per event.
//
//   node --import tsx bench/socketio-relay.ts [--port P] [--host H] [--redis-url URL [--redis-key PREFIX]]
//
// Prints `listening <port>` on stdout once it accepts connections (port 0 picks a free one). Stops on SIGTERM/SIGINT.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createAdapter } from '@socket.io/redis-adapter';
import { Redis } from 'ioredis';
import { Server, type Socket } from 'socket.io';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    'redis-url': { type: 'string' },
    // The prefix of the adapter's pub/sub channels (its only option given): channels are not per Redis database
    // number, so a run's own prefix keeps its nodes apart from any other Socket.IO server on the same Redis.
    'redis-key': { type: 'string', default: 'socket.io' },
  },
});

interface Forwarded {
  event_id: string;
}

// The adapter as its README shows it with ioredis: a client to publish and its duplicate to subscribe. It keeps no
// keys in Redis (pub/sub only).
const pubClient = values['redis-url'] ? new Redis(values['redis-url']) : undefined;
const subClient = pubClient?.duplicate();
const server = createServer();
const io = new Server(server, {
  transports: ['websocket'],
  perMessageDeflate: false,
  ...(pubClient && subClient ? { adapter: createAdapter(pubClient, subClient, { key: values['redis-key'] }) } : {}),
});

// One node: which app sent each event still open, a map from event id to the app's socket, rather than a room per
// app. The agent's `token` names only the event, so a room per app would need this map all the same (event id ->
// room) and would then send each fragment through the adapter's broadcast to a room of one; the socket is at hand
// when the event arrives, and a map lookup is all that forwarding needs. An event is forgotten at its reply, or
// when its app disconnects.
const appOf = new Map<string, Socket>();

function oneNode(socket: Socket): void {
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
}

// Several nodes: the agent's `token` arrives at the agent's node, the app's socket may be on another, and the map
// above is only the app's node's. The app's socket id travels with the event and comes back with each fragment,
// and the server emits to it as to a room (every socket is in the room of its own id): `io.to(socketId).emit` is
// Socket.IO's documented "private message", and the adapter carries it to whichever node holds that socket. A
// shared map (event id -> socket id in Redis) would cost a round trip per fragment; a room per event (the app's
// socket joining `event:<id>`) would leave the agent's frames as on one node but needs a join per event and a
// cluster-wide socketsLeave at each reply, where the socket's own room needs no bookkeeping at all. The adapter
// publishes every `io.to(…).emit` to Redis, the app's socket on this node or not (it cannot know where the socket
// is): with the app and the agent on one node, each fragment still goes through Redis once, for nothing.
interface ToApp extends Forwarded {
  app: string;
}

function severalNodes(socket: Socket): void {
  const agentId = (socket.handshake.auth as { agent_id?: unknown }).agent_id;
  if (typeof agentId === 'string') {
    void socket.join(`agent:${agentId}`);
    socket.on('token', (msg: ToApp) => io.to(msg.app).emit('token', msg));
    socket.on('reply', (msg: ToApp) => io.to(msg.app).emit('reply', msg));
    return;
  }
  socket.on(
    'event',
    (msg: { agent_id: string; thread_id: string; payload: unknown }, ack: (answer: object) => void) => {
      const room = `agent:${msg.agent_id}`;
      // `io.sockets.adapter.rooms` is this node's rooms only: every node is asked (a PUBSUB NUMSUB, a request
      // published and each other node's answer, before the event is acknowledged: once per event, not per fragment).
      io.in(room)
        .fetchSockets()
        .then(
          (agents) => {
            if (!agents.length) return ack({ error: 'agent offline' });
            const event_id = randomUUID();
            ack({ event_id });
            io.to(room).emit('event', { event_id, app: socket.id, thread_id: msg.thread_id, payload: msg.payload });
          },
          (err: Error) => ack({ error: `agent lookup failed: ${err.message}` }),
        );
    },
  );
}

io.on('connection', pubClient ? severalNodes : oneNode);

// With the adapter, listening (and so `listening <port>`) waits until both Redis clients answer: the subscriber's
// PING is queued behind the adapter's subscriptions, so no broadcast from another node is missed after it.
void Promise.all([pubClient?.ping(), subClient?.ping()]).then(() =>
  server.listen(Number(values.port), values.host, () => {
    console.log(`listening ${(server.address() as AddressInfo).port}`);
  }),
);

const stop = () => {
  io.disconnectSockets(true);
  void io.close(() => {
    pubClient?.disconnect();
    subClient?.disconnect();
    process.exit(0);
  });
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
