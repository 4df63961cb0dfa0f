// Scenario 3: event acceptance. N apps send `event` frames (payload ~1 KB) to M agents; the bridge answers each
// with `accepted`, delivers it, and each agent replies at once, so every event is logged twice (received, then its
// outcome) as in production. Latency is `event` sent (or due, open loop) -> `accepted` received.
//   closed loop: K events awaiting their `accepted` per app socket, each answer lets the app send one more;
//   open loop: a fixed total rate, sent on a schedule round-robin over the apps.
// Baseline: bench/relay.ts's /echo, a bare ws server answering every frame with a fixed one without reading it.
// The Socket.IO peer (bench/socketio-relay.ts): the app emits `event` with an acknowledgement (its `accepted`), the
// relay emits it to the agent's room and the agent replies at once, as on the bridge.
import {
  drain,
  Errors,
  frameEventId,
  frameType,
  Latencies,
  measure,
  open,
  pace,
  timedResult,
  type TimedConfig,
  type TimedResult,
} from './common.js';
import { connectSocketIo, watchDisconnect } from './socketio.js';
import { ENDPOINT_PATHS } from '../../generated/index.js';

export interface EventsConfig extends TimedConfig {
  scenario: 'events';
  /** bridge, socketio: the agents answer, the apps send (one socket each); relay: one /echo socket per entry. */
  apps: { app_id: string; token: string }[];
}

export interface EventsResult extends TimedResult {
  apps: number;
  accepted: number;
  accepted_per_s: number;
  replies: number;
}

/** Times of the sends still waiting for their answer; the bridge answers an app's events in order (W7). */
class Fifo {
  private items: number[] = [];
  private head = 0;
  push(x: number): void {
    this.items.push(x);
  }
  shift(): number | undefined {
    if (this.head === this.items.length) return undefined;
    const x = this.items[this.head++]!;
    if (this.head > 4096) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return x;
  }
  get size(): number {
    return this.items.length - this.head;
  }
}

interface AppSide {
  /** Sends one event (the payload is the run's). */
  send(agentId: string, threadId: string): void;
  close(): void;
  pending: Fifo;
  sent: number;
}

export async function runEvents(cfg: EventsConfig): Promise<EventsResult> {
  const errors = new Errors();
  const latencies = new Latencies();
  const closedLoop = cfg.rate === undefined;
  const payload = { text: 'x'.repeat(cfg.payloadBytes) };
  const payloadJson = JSON.stringify(payload);
  const agentIds = cfg.target === 'relay' ? ['echo'] : (cfg.agents ?? []).map((a) => a.agent_id);
  if (!agentIds.length) throw new Error(`${cfg.target} target: need at least one agent`);
  let measuring = false;
  let stopping = false;
  let accepted = 0;
  let replies = 0;

  if (cfg.target === 'bridge') {
    for (const [i, a] of (cfg.agents ?? []).entries()) {
      const ws = await open(`${cfg.url}${ENDPOINT_PATHS.agent}`, { authorization: `Bearer ${a.token}` });
      ws.on('message', (data) => {
        const text = data.toString();
        const type = frameType(text);
        if (type === 'event') ws.send(`{"type":"reply","event_id":"${frameEventId(text)}","content":"ok","done":true}`);
        else if (type === 'error') errors.add(`agent ${i}`, text);
      });
      ws.on('close', (code) => !stopping && errors.add(`agent ${i}`, `closed ${code}`));
    }
  }
  const hooks = { errors, stopping: () => stopping };
  if (cfg.target === 'socketio') {
    for (const [i, agentId] of agentIds.entries()) {
      const agent = await connectSocketIo(cfg.url, { agent_id: agentId });
      // On several nodes the event names the app's socket and the reply carries it back (bench/socketio-relay.ts).
      agent.on('event', (msg: { event_id: string; app?: string }) =>
        agent.emit(
          'reply',
          msg.app === undefined
            ? { event_id: msg.event_id, content: 'ok', done: true }
            : { event_id: msg.event_id, app: msg.app, content: 'ok', done: true },
        ),
      );
      watchDisconnect(agent, `agent ${i}`, hooks);
    }
  }
  const apps: AppSide[] = [];
  for (const [j, a] of cfg.apps.entries()) {
    const pending = new Fifo();
    const onAccepted = () => {
      const now = performance.now();
      const sentAt = pending.shift();
      if (sentAt === undefined) return errors.add(`app ${j}`, 'accepted without an event');
      if (measuring) {
        accepted++;
        latencies.add(now - sentAt);
      }
      if (closedLoop && !stopping) send(side, now);
    };
    let side: AppSide;
    if (cfg.target === 'socketio') {
      const app = await connectSocketIo(cfg.url);
      // The acknowledgement is the `accepted`; an error in it (no agent in the room) answers the event all the same.
      const ack = (answer: { error?: string }) => {
        if (answer.error) errors.add(`app ${j}`, answer.error);
        onAccepted();
      };
      side = {
        send: (agentId, threadId) => app.emit('event', { agent_id: agentId, thread_id: threadId, payload }, ack),
        close: () => app.disconnect(),
        pending,
        sent: 0,
      };
      app.on('reply', () => replies++);
      watchDisconnect(app, `app ${j}`, hooks);
    } else {
      const ws =
        cfg.target === 'bridge'
          ? await open(`${cfg.url}${ENDPOINT_PATHS.app}`, { authorization: `Bearer ${a.token}` })
          : await open(`${cfg.url}/echo`);
      side = {
        send: (agentId, threadId) =>
          ws.send(
            `{"type":"event","agent_id":${JSON.stringify(agentId)},"thread_id":"${threadId}","payload":${payloadJson}}`,
          ),
        close: () => ws.close(),
        pending,
        sent: 0,
      };
      ws.on('message', (data) => {
        const text = data.toString();
        const type = frameType(text);
        if (type === 'accepted') onAccepted();
        else if (type === 'reply') replies++;
        else errors.add(`app ${j}`, text);
      });
      ws.on('close', (code) => !stopping && errors.add(`app ${j}`, `closed ${code}`));
    }
    apps.push(side);
  }

  function send(side: AppSide, dueAt: number): void {
    const k = side.sent++;
    side.pending.push(dueAt);
    side.send(agentIds[k % agentIds.length]!, `t-${k % 64}`);
  }

  let stopPacer = () => {};
  if (closedLoop) {
    for (const side of apps) for (let i = 0; i < cfg.window; i++) send(side, performance.now());
  } else {
    stopPacer = pace(cfg.rate!, (k, dueAt) => send(apps[k % apps.length]!, dueAt));
  }

  const cpu = await measure(cfg, (on) => (measuring = on));
  stopping = true;
  stopPacer();
  const unanswered = await drain(() => apps.reduce((n, a) => n + a.pending.size, 0));
  if (unanswered) errors.add('drain', `${unanswered} events never accepted`);
  for (const a of apps) a.close();

  return {
    ...timedResult(cfg, cpu, latencies, errors),
    apps: apps.length,
    accepted,
    accepted_per_s: Math.round(accepted / cpu.measured_s),
    replies,
  };
}
