// Scenario 4: idle connections. This process opens `count` app connections (bridge: spread over the given app
// tokens; relay: unpaired /app sockets), pings each every 30 s as the SDKs do, and prints `CONNECTED <n>` when all
// are open. It then holds them for `holdS` seconds; with `soak`, it also sends light traffic meanwhile: events at
// `eventsPerS` from its connections to one agent (its socket in this process) that streams 5 fragments and replies.
// run.ts reads the server's RSS from outside while this runs.
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebSocket } from 'ws';
import { Errors, open } from './common.js';
import { ENDPOINT_PATHS } from '../../generated/index.js';

export interface IdleConfig {
  scenario: 'idle';
  target: 'bridge' | 'relay';
  url: string;
  count: number;
  /** Connections opened at once. */
  concurrency: number;
  holdS: number;
  apps?: { app_id: string; token: string }[];
  /**
   * Light traffic while holding: only in the bridge run, only in one generator process. Its 20 threads over the
   * apps make a few hundred sessions in the first minute and no more, so that what grows later is not data kept
   * on purpose.
   */
  soak?: { agent: { agent_id: string; token: string }; eventsPerS: number };
  pingIntervalMs: number;
}

export interface IdleResult {
  target: IdleConfig['target'];
  connections: number;
  connect_s: number;
  pings: number;
  pongs: number;
  events: number;
  replies: number;
  fragments: number;
  errors: number;
  error_samples: string[];
}

export async function runIdle(cfg: IdleConfig): Promise<IdleResult> {
  const errors = new Errors();
  const sockets: WebSocket[] = [];
  let stopping = false;
  let pongs = 0;
  let replies = 0;
  let fragments = 0;
  const t0 = performance.now();
  const url = (i: number) =>
    cfg.target === 'bridge' ? `${cfg.url}${ENDPOINT_PATHS.app}` : `${cfg.url}/app?key=idle-${process.pid}-${i}`;
  const headers = (i: number): Record<string, string> =>
    cfg.target === 'bridge' ? { authorization: `Bearer ${cfg.apps![i % cfg.apps!.length]!.token}` } : {};
  for (let next = 0; next < cfg.count;) {
    const batch = [];
    for (let k = 0; k < cfg.concurrency && next < cfg.count; k++, next++) batch.push(open(url(next), headers(next)));
    for (const ws of await Promise.all(batch)) {
      sockets.push(ws);
      ws.on('message', (data) => {
        const type = (JSON.parse(data.toString()) as { type: string }).type;
        if (type === 'pong') pongs++;
        else if (type === 'token') fragments++;
        else if (type === 'reply') replies++;
        else if (type !== 'accepted') errors.add('app', data.toString());
      });
      ws.on('close', (code) => !stopping && errors.add('app', `closed ${code}`));
      ws.on('error', () => {});
    }
  }
  const connectS = (performance.now() - t0) / 1000;
  console.log(`CONNECTED ${sockets.length}`);

  // Pings spread evenly over the interval, in small batches.
  let pings = 0;
  let cursor = 0;
  const tickMs = 100;
  const perTick = Math.max(1, Math.ceil((sockets.length * tickMs) / cfg.pingIntervalMs));
  const pinger =
    cfg.target === 'bridge'
      ? setInterval(() => {
          for (let k = 0; k < perTick; k++, cursor = (cursor + 1) % sockets.length) {
            sockets[cursor]!.send('{"type":"ping"}');
            pings++;
          }
        }, tickMs)
      : undefined;

  let events = 0;
  let eventTimer: NodeJS.Timeout | undefined;
  if (cfg.soak && cfg.target === 'bridge') {
    const agent = await open(`${cfg.url}${ENDPOINT_PATHS.agent}`, { authorization: `Bearer ${cfg.soak.agent.token}` });
    agent.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { type: string; event_id?: string };
      if (msg.type !== 'event') return void (msg.type !== 'pong' && errors.add('agent', data.toString()));
      for (const word of ['light', 'traffic', 'keeps', 'the', 'bridge'])
        agent.send(JSON.stringify({ type: 'token', event_id: msg.event_id, token: `${word} ` }));
      agent.send(JSON.stringify({ type: 'reply', event_id: msg.event_id, content: '', done: true }));
    });
    setInterval(() => agent.send('{"type":"ping"}'), cfg.pingIntervalMs).unref();
    const payload = { text: 'x'.repeat(1000) };
    eventTimer = setInterval(() => {
      const ws = sockets[Math.floor(Math.random() * sockets.length)]!;
      ws.send(
        JSON.stringify({
          type: 'event',
          agent_id: cfg.soak!.agent.agent_id,
          thread_id: `soak-${events++ % 20}`,
          payload,
        }),
      );
    }, 1000 / cfg.soak.eventsPerS);
  }

  await sleep(cfg.holdS * 1000);
  stopping = true;
  if (pinger) clearInterval(pinger);
  if (eventTimer) clearInterval(eventTimer);
  for (const ws of sockets) ws.terminate();
  return {
    target: cfg.target,
    connections: sockets.length,
    connect_s: Number(connectS.toFixed(2)),
    pings,
    pongs,
    events,
    replies,
    fragments,
    errors: errors.count,
    error_samples: errors.samples,
  };
}
