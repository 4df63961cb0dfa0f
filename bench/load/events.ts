// Scenario 3: event acceptance. N apps send `event` frames (payload ~1 KB) to M agents; the bridge answers each
// with `accepted`, delivers it, and each agent replies at once, so every event is logged twice (received, then its
// outcome) as in production. Latency is `event` sent (or due, open loop) -> `accepted` received.
//   closed loop: K events awaiting their `accepted` per app socket, each answer lets the app send one more;
//   open loop: a fixed total rate, sent on a schedule round-robin over the apps.
// Baseline: bench/relay.ts's /echo, a bare ws server answering every frame with a fixed one without reading it.
import type { WebSocket } from 'ws';
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
import { ENDPOINT_PATHS } from '../../generated/index.js';

export interface EventsConfig extends TimedConfig {
  scenario: 'events';
  /** bridge: the agents answer, the apps send (one socket each); relay: one /echo socket per entry. */
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
  ws: WebSocket;
  pending: Fifo;
  sent: number;
}

export async function runEvents(cfg: EventsConfig): Promise<EventsResult> {
  const errors = new Errors();
  const latencies = new Latencies();
  const closedLoop = cfg.rate === undefined;
  const payloadJson = JSON.stringify({ text: 'x'.repeat(cfg.payloadBytes) });
  const agentIds = cfg.target === 'bridge' ? (cfg.agents ?? []).map((a) => a.agent_id) : ['echo'];
  if (!agentIds.length) throw new Error('bridge target: need at least one agent');
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
  const apps: AppSide[] = [];
  for (const [j, a] of cfg.apps.entries()) {
    const ws =
      cfg.target === 'bridge'
        ? await open(`${cfg.url}${ENDPOINT_PATHS.app}`, { authorization: `Bearer ${a.token}` })
        : await open(`${cfg.url}/echo`);
    const side: AppSide = { ws, pending: new Fifo(), sent: 0 };
    apps.push(side);
    ws.on('message', (data) => {
      const text = data.toString();
      const type = frameType(text);
      if (type === 'accepted') {
        const now = performance.now();
        const sentAt = side.pending.shift();
        if (sentAt === undefined) return errors.add(`app ${j}`, 'accepted without an event');
        if (measuring) {
          accepted++;
          latencies.add(now - sentAt);
        }
        if (closedLoop && !stopping) send(side, now);
      } else if (type === 'reply') replies++;
      else errors.add(`app ${j}`, text);
    });
    ws.on('close', (code) => !stopping && errors.add(`app ${j}`, `closed ${code}`));
  }

  function send(side: AppSide, dueAt: number): void {
    const k = side.sent++;
    side.pending.push(dueAt);
    side.ws.send(
      `{"type":"event","agent_id":${JSON.stringify(agentIds[k % agentIds.length])},"thread_id":"t-${k % 64}","payload":${payloadJson}}`,
    );
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
  for (const a of apps) a.ws.close();

  return {
    ...timedResult(cfg, cpu, latencies, errors),
    apps: apps.length,
    accepted,
    accepted_per_s: Math.round(accepted / cpu.measured_s),
    replies,
  };
}
