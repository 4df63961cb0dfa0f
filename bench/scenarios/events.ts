// Scenario 3: event acceptance with the event log on (file SQLite, group commits), closed loop for the most
// events/s and open loop at a fixed rate for latency; the bare relay's /echo as the baseline, and the Socket.IO
// relay (its acknowledgement is `accepted`; the event goes on to an agent that replies at once, as on the bridge).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventsConfig, EventsResult } from '../load/events.js';
import {
  provision,
  runGenerator,
  startBridge,
  startRelay,
  startSocketIoRelay,
  shutdown,
  type Server,
} from '../processes.js';
import { ratio, type Table, type Target } from '../report.js';
import type { Settings } from './settings.js';

const AGENTS = 4;

type Target3 = NonNullable<Settings['only']>;
type Results = { closed: EventsResult; open: EventsResult };

async function runTarget(target: Target3, s: Settings): Promise<Results> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  let server: Server | undefined;
  try {
    let base: Omit<EventsConfig, 'warmupS' | 'durationS' | 'window'>;
    if (target === 'bridge') {
      const bridge = await startBridge(dir, s.profileDir);
      server = bridge;
      const creds = await provision(bridge.admin, AGENTS, s.eventApps);
      base = {
        scenario: 'events',
        target,
        url: bridge.url,
        serverPid: bridge.pid,
        payloadBytes: s.payloadBytes,
        ...creds,
      };
    } else {
      server = target === 'socketio' ? await startSocketIoRelay() : await startRelay();
      const apps = Array.from({ length: s.eventApps }, (_, j) => ({ app_id: `app-${j}`, token: '' }));
      const agents = Array.from({ length: AGENTS }, (_, i) => ({ agent_id: `agent-${i}`, token: '' }));
      base = {
        scenario: 'events',
        target,
        url: server.url,
        serverPid: server.pid,
        payloadBytes: s.payloadBytes,
        apps,
        ...(target === 'socketio' ? { agents } : {}),
      };
    }
    console.error(`  ${target}: closed loop, ${s.warmupS + s.durationS} s...`);
    const closed = await runGenerator<EventsResult>({
      ...base,
      window: s.eventWindow,
      warmupS: s.warmupS,
      durationS: s.durationS,
    });
    console.error(`  ${target}: ${s.eventRate} events/s, ${s.warmupS + s.durationS} s...`);
    const open = await runGenerator<EventsResult>({
      ...base,
      window: 0,
      rate: s.eventRate,
      warmupS: s.warmupS,
      durationS: s.durationS,
    });
    if (server.child.exitCode !== null) throw new Error(`the ${target} exited during the run:\n${server.logs()}`);
    return { closed, open };
  } finally {
    await shutdown(server, dir);
  }
}

export async function eventAcceptance(s: Settings) {
  console.error(`Scenario 3: event acceptance, event log on`);
  const results: Partial<Record<Target3, Results>> = {};
  for (const t of s.only ? [s.only] : (['relay', 'socketio', 'bridge'] as const)) results[t] = await runTarget(t, s);
  const { bridge, relay, socketio } = results;
  const row = (label: string, f: (x: Results) => number | null, withRatio = true) => {
    const b = bridge ? f(bridge) : null;
    const r = relay ? f(relay) : null;
    const io = socketio ? f(socketio) : null;
    return [label, b, r, withRatio ? ratio(b, r) : null, io, withRatio ? ratio(b, io) : null];
  };
  const table: Table = {
    title: `Scenario 3: event -> accepted, ${s.eventApps} apps -> ${AGENTS} agents (each replies at once), payload ${s.payloadBytes} B, event log on; baseline: relay /echo; socket.io: the acknowledgement, the event relayed to the agent`,
    columns: ['', 'bridge', 'relay echo', 'bridge/relay', 'socket.io', 'bridge/socket.io'],
    rows: [
      row(`closed loop (${s.eventWindow}/app): accepted/s`, (x) => x.closed.accepted_per_s),
      row('closed loop: latency p50 (ms)', (x) => x.closed.latency_ms.p50),
      row('closed loop: latency p99 (ms)', (x) => x.closed.latency_ms.p99),
      row(`open loop ${s.eventRate}/s: accepted/s`, (x) => x.open.accepted_per_s),
      row(`open loop ${s.eventRate}/s: latency p50 (ms)`, (x) => x.open.latency_ms.p50),
      row(`open loop ${s.eventRate}/s: latency p99 (ms)`, (x) => x.open.latency_ms.p99),
      row(`open loop ${s.eventRate}/s: latency p99.9 (ms)`, (x) => x.open.latency_ms.p999),
      row('server CPU % (closed loop)', (x) => x.closed.server_cpu_pct, false),
      row('errors', (x) => x.closed.errors + x.open.errors, false),
    ],
  };
  const targets: Target[] = [
    {
      name: 'event throughput',
      goal: '>= 10k accepted events/s, event log on',
      measured: bridge ? `${bridge.closed.accepted_per_s}/s` : '-',
      met: bridge ? bridge.closed.accepted_per_s >= 10_000 : null,
    },
    {
      name: 'event latency',
      goal: `p99 <= 5 ms at ${s.eventRate} events/s`,
      measured: bridge ? `${bridge.open.latency_ms.p99} ms` : '-',
      met: bridge && s.eventRate === 2000 ? bridge.open.latency_ms.p99 <= 5 : null,
    },
  ];
  const errors = [bridge, relay, socketio].reduce((n, x) => n + (x ? x.closed.errors + x.open.errors : 0), 0);
  const json = {
    bridge: bridge ?? null,
    relay: relay ?? null,
    socketio: socketio ?? null,
    ratio_bridge_over_socketio: ratio(bridge?.closed.accepted_per_s, socketio?.closed.accepted_per_s),
  };
  return { json, table, targets, errors };
}
