// The generator's side of bench/socketio-relay.ts: socket.io-client sockets, WebSocket only, carrying the same
// content as the ws targets' frames (event payload, fragment text with its due time first) as Socket.IO events.
import type { Socket as TcpSocket } from 'node:net';
import { io, type Socket } from 'socket.io-client';
import type { WebSocket } from 'ws';
import type { TimedConfig } from './common.js';
import type { Hooks, Stream } from './stream.js';

/**
 * A client connected to `url` (`ws://host:port`); `auth` is its handshake (an agent names itself). WebSocket only,
 * as the relay; the client offers permessage-deflate by default and the relay declines it. Each client its own
 * connection (forceNew: no multiplexing of apps and agents over one), and no reconnection: a socket that drops
 * during a run is an error, not something to hide.
 */
export function connectSocketIo(url: string, auth: Record<string, string> = {}): Promise<Socket> {
  const socket = io(url, { transports: ['websocket'], auth, forceNew: true, reconnection: false });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', reject);
  });
}

/** The ws WebSocket under a connected socket.io-client socket (engine.io-client uses ws in Node). */
const wsOf = (socket: Socket) => (socket.io.engine.transport as unknown as { ws: WebSocket }).ws;

/** Counts a disconnection while the run goes on as an error. */
export function watchDisconnect(socket: Socket, who: string, hooks: Pick<Hooks, 'errors' | 'stopping'>): void {
  socket.on('disconnect', (reason) => !hooks.stopping() && hooks.errors.add(who, `disconnected: ${reason}`));
}

interface Forwarded {
  event_id: string;
}

/**
 * The relay on several nodes (its --redis-url) names the app's socket in the event (`app`) and routes the agent's
 * frames back by it, so the agent's `token` and `reply` carry it then; on one node the event has none and the
 * frames are as they were.
 */
type ToApp = Forwarded & { app?: string };

/**
 * Scenarios 1 and 2 on the Socket.IO relay: one socket per agent and per app, as on the bridge. The agent learns
 * each event's id from the `event` it receives (streams found by thread id), and the app's socket id with it when
 * the relay runs on several nodes (`appUrl` and `agentUrl`: the apps' and the agents' node); the app finds the
 * stream of a `token` by the event id (same process, and the agent has it before its first fragment leaves).
 *
 * Corking: the agent's TCP socket is corked per event-loop turn, as for the ws targets (runStreaming does it, on
 * `agentTcp`), so the generator writes a turn's fragments in a few writes whatever the target. Socket.IO's client
 * sends the first packet of a turn at once and buffers the rest until the next tick, one ws frame each; all of it
 * is written within the turn, before the uncork. Not corking would make this target's generator pay a write per
 * fragment that the others do not, and the server's figures would be the generator's.
 */
export async function socketIoStreams(
  cfg: Pick<TimedConfig, 'url' | 'agents'> & { m: number; n: number; appUrl?: string; agentUrl?: string },
  hooks: Hooks,
): Promise<Stream[]> {
  const { errors, startStream, onToken, onReply, retryStart } = hooks;
  const agentIds = Array.from({ length: cfg.m }, (_, i) => cfg.agents?.[i]?.agent_id ?? `agent-${i}`);
  const agents = await Promise.all(agentIds.map((agent_id) => connectSocketIo(cfg.agentUrl ?? cfg.url, { agent_id })));
  const apps = await Promise.all(Array.from({ length: cfg.n }, () => connectSocketIo(cfg.appUrl ?? cfg.url)));
  const streams: Stream[] = [];
  const byThread = new Map<string, Stream & { app?: string }>();
  const byEvent = new Map<string, Stream>();
  for (let i = 0; i < cfg.m; i++) {
    for (let j = 0; j < cfg.n; j++) {
      const agent = agents[i]!;
      const app = apps[j]!;
      const s: Stream & { app?: string } = {
        threadId: `bench-${i}-${j}`,
        agentId: agentIds[i]!,
        inFlight: 0,
        started: false,
        sent: 0,
        next: 0,
        agentTcp: (wsOf(agent) as unknown as { _socket: TcpSocket })._socket,
        sendEvent: (text) =>
          app.emit(
            'event',
            { agent_id: s.agentId, thread_id: s.threadId, payload: { text } },
            // Refused because no node has its agent yet: sent again and counted, as on the bridge.
            (ack: { event_id?: string; error?: string }) =>
              ack.error && !(ack.error === 'agent offline' && retryStart(s)) && errors.add(`app ${j}`, ack.error),
          ),
        sendToken: (text) =>
          agent.emit(
            'token',
            s.app === undefined
              ? { event_id: s.eventId, token: text }
              : { event_id: s.eventId, app: s.app, token: text },
          ),
        sendReply: () =>
          agent.emit(
            'reply',
            s.app === undefined
              ? { event_id: s.eventId, content: 'done', done: true }
              : { event_id: s.eventId, app: s.app, content: 'done', done: true },
          ),
        close: () => {
          app.disconnect();
          agent.disconnect();
        },
      };
      streams.push(s);
      byThread.set(s.threadId, s);
    }
  }
  agents.forEach((agent, i) => {
    watchDisconnect(agent, `agent ${i}`, hooks);
    agent.on('event', (msg: ToApp & { thread_id: string }) => {
      const s = byThread.get(msg.thread_id);
      if (!s) return errors.add(`agent ${i}`, `unexpected event ${JSON.stringify(msg).slice(0, 200)}`);
      s.eventId = msg.event_id;
      s.app = msg.app;
      byEvent.set(msg.event_id, s);
      startStream(s);
    });
  });
  apps.forEach((app, j) => {
    watchDisconnect(app, `app ${j}`, hooks);
    // The frame bytes, for the table's mean: the WebSocket messages' lengths as they arrive, handed to the next
    // token delivered (Socket.IO decodes a message and dispatches its event a tick later).
    let bytes = 0;
    wsOf(app).on('message', (data: Buffer) => (bytes += data.length));
    app.on('token', (msg: Forwarded & { token: string }) => {
      const s = byEvent.get(msg.event_id);
      if (!s) return errors.add(`app ${j}`, `token of unknown stream ${JSON.stringify(msg).slice(0, 200)}`);
      onToken(s, msg.token, bytes);
      bytes = 0;
    });
    app.on('reply', () => onReply());
  });
  return streams;
}
