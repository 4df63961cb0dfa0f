// Scenarios 1 (closed loop) and 2 (open loop at fixed rates): token streaming agent -> app, the bridge against the
// bare relay and the Socket.IO relay, the same generator for all.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StreamingConfig, StreamingResult } from '../load/streaming.js';
import {
  provision,
  runGenerator,
  runtimeDelta,
  runtimeOf,
  startBridge,
  startRelay,
  startSocketIoRelay,
  shutdown,
  type Credentials,
  type Server,
} from '../processes.js';
import { ratio, type Table, type Target } from '../report.js';
import type { Settings } from './settings.js';

type Run = (rate: number | undefined, warmupS: number, durationS: number) => Promise<StreamingResult>;

type Kind = 'bridge' | 'relay' | 'relay-batched' | 'socketio';

async function withTarget<T>(kind: Kind, s: Settings, body: (run: Run) => Promise<T>): Promise<T> {
  const target: StreamingConfig['target'] = kind === 'relay-batched' ? 'relay' : kind;
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  let server: Server | undefined;
  let creds: Credentials | undefined;
  try {
    if (target === 'bridge') {
      const bridge = await startBridge(dir, s.profileDir);
      server = bridge;
      creds = await provision(bridge.admin, s.m, s.n);
    } else if (target === 'socketio') {
      server = await startSocketIoRelay();
    } else {
      server = await startRelay(kind === 'relay-batched');
    }
    const base = {
      scenario: 'streaming' as const,
      target,
      url: server.url,
      serverPid: server.pid,
      m: s.m,
      n: s.n,
      window: s.window,
      payloadBytes: s.payloadBytes,
      ...creds,
    };
    const run: Run = async (rate, warmupS, durationS) => {
      console.error(
        `  ${kind}: ${rate === undefined ? 'closed loop' : `${rate} fragments/s`}, ${warmupS + durationS} s...`,
      );
      const cfg: StreamingConfig = { ...base, warmupS, durationS, ...(rate === undefined ? {} : { rate }) };
      const before = target === 'bridge' ? await runtimeOf(server!) : null;
      const result = await runGenerator<StreamingResult>(cfg);
      if (before) result.bridge_gc = runtimeDelta(before, await runtimeOf(server!));
      if (server!.child.exitCode !== null) throw new Error(`the ${kind} exited during the run:\n${server!.logs()}`);
      return result;
    };
    return await body(run);
  } finally {
    await shutdown(server, dir);
  }
}

type Only = NonNullable<Settings['only']>;
const targets = (s: Settings): Only[] => (s.only ? [s.only] : ['relay', 'socketio', 'bridge']);

export async function closedLoop(s: Settings) {
  console.error(`Scenario 1: token streaming, closed loop`);
  const results: Partial<Record<Kind, StreamingResult>> = {};
  const kinds: Kind[] = s.only ? [s.only] : ['relay', 'relay-batched', 'socketio', 'bridge'];
  for (const k of kinds) results[k] = await withTarget(k, s, (run) => run(undefined, s.warmupS, s.durationS));
  const { bridge, relay, socketio } = results;
  const batched = results['relay-batched'];
  const r = ratio(bridge?.fragments_per_s, relay?.fragments_per_s);
  const cell = (x: StreamingResult | undefined, f: (x: StreamingResult) => number | null) => (x ? f(x) : null);
  const row = (label: string, f: (x: StreamingResult) => number | null, withRatio = false) => [
    label,
    cell(bridge, f),
    cell(relay, f),
    withRatio ? ratio(cell(bridge, f), cell(relay, f)) : null,
    cell(batched, f),
    withRatio ? ratio(cell(bridge, f), cell(batched, f)) : null,
    cell(socketio, f),
    withRatio ? ratio(cell(bridge, f), cell(socketio, f)) : null,
  ];
  const table: Table = {
    title: `Scenario 1: token streaming agent -> app, closed loop. ${s.m} agents x ${s.n} apps = ${s.m * s.n} streams, ${s.window} in flight each, ${s.durationS} s after ${s.warmupS} s warm-up`,
    columns: [
      '',
      'bridge',
      'relay',
      'bridge/relay',
      'relay, batched writes',
      'bridge/batched',
      'socket.io',
      'bridge/socket.io',
    ],
    rows: [
      row('fragments/s delivered', (x) => x.fragments_per_s, true),
      row('latency p50 (ms)', (x) => x.latency_ms.p50, true),
      row('latency p99 (ms)', (x) => x.latency_ms.p99, true),
      row('latency p99.9 (ms)', (x) => x.latency_ms.p999, true),
      row('frame bytes at the app (mean)', (x) => x.fragment_bytes_mean),
      row('server CPU % (of one core)', (x) => x.server_cpu_pct),
      row('generator CPU %', (x) => x.generator_cpu_pct),
      row('errors', (x) => x.errors),
    ],
  };
  const target: Target = {
    name: 'token streaming',
    goal: '>= 0.8x the bare relay',
    measured: r === null ? '-' : `${r}x`,
    met: r === null ? null : r >= 0.8,
  };
  const json = {
    bridge: bridge ?? null,
    relay: relay ?? null,
    relay_batched: batched ?? null,
    socketio: socketio ?? null,
    ratio_bridge_over_relay: r,
    ratio_bridge_over_batched_relay: ratio(bridge?.fragments_per_s, batched?.fragments_per_s),
    ratio_bridge_over_socketio: ratio(bridge?.fragments_per_s, socketio?.fragments_per_s),
  };
  return {
    json,
    table,
    targets: [target],
    errors: [bridge, relay, batched, socketio].reduce((n, x) => n + (x?.errors ?? 0), 0),
  };
}

/** Total GC time and the number of pauses the bridge had during a run, e.g. `412 (1830)`. */
function gcCell(r: StreamingResult | null): string | null {
  if (!r?.bridge_gc) return null;
  const ms = Object.values(r.bridge_gc.gc_seconds).reduce((a, b) => a + b, 0) * 1000;
  const count = Object.values(r.bridge_gc.gc_count).reduce((a, b) => a + b, 0);
  return `${Math.round(ms)} (${count})`;
}

export async function openLoop(s: Settings) {
  console.error(`Scenario 2: token streaming, open loop at ${s.rates.join(', ')} fragments/s`);
  const results: Record<Only, StreamingResult[]> = { bridge: [], relay: [], socketio: [] };
  for (const t of targets(s)) {
    await withTarget(t, s, async (run) => {
      for (const rate of s.rates) results[t].push(await run(rate, s.warmupS, s.durationS));
    });
  }
  const rows = s.rates.map((rate, i) => {
    const b = results.bridge[i];
    const r = results.relay[i];
    const io = results.socketio[i];
    const added = b && r ? Number((b.latency_ms.p99 - r.latency_ms.p99).toFixed(3)) : null;
    return {
      rate,
      bridge: b ?? null,
      relay: r ?? null,
      socketio: io ?? null,
      added_p99_ms: added,
      ratio_bridge_over_socketio: ratio(b?.latency_ms.p99, io?.latency_ms.p99),
    };
  });
  const table: Table = {
    title: `Scenario 2: token streaming, open loop (latency from each fragment's due time), ${s.m * s.n} streams, ${s.durationS} s per rate`,
    columns: [
      'rate (fragments/s)',
      'bridge delivered/s',
      'relay delivered/s',
      'socket.io delivered/s',
      'bridge p50',
      'relay p50',
      'socket.io p50',
      'bridge p99',
      'relay p99',
      'socket.io p99',
      'bridge p99.9',
      'relay p99.9',
      'socket.io p99.9',
      'added p99 (ms)',
      'bridge/socket.io p99',
      'bridge GC (ms, pauses)',
    ],
    rows: rows.map((x) => [
      x.rate,
      x.bridge?.fragments_per_s ?? null,
      x.relay?.fragments_per_s ?? null,
      x.socketio?.fragments_per_s ?? null,
      x.bridge?.latency_ms.p50 ?? null,
      x.relay?.latency_ms.p50 ?? null,
      x.socketio?.latency_ms.p50 ?? null,
      x.bridge?.latency_ms.p99 ?? null,
      x.relay?.latency_ms.p99 ?? null,
      x.socketio?.latency_ms.p99 ?? null,
      x.bridge?.latency_ms.p999 ?? null,
      x.relay?.latency_ms.p999 ?? null,
      x.socketio?.latency_ms.p999 ?? null,
      x.added_p99_ms,
      x.ratio_bridge_over_socketio,
      gcCell(x.bridge),
    ]),
  };
  const at10k = rows.find((x) => x.rate === 10_000);
  const target: Target = {
    name: 'added latency',
    goal: 'p99 <= 2 ms over the relay at 10k fragments/s',
    measured: at10k?.added_p99_ms === null || !at10k ? '- (rate not run)' : `${at10k.added_p99_ms} ms`,
    met: at10k && at10k.added_p99_ms !== null ? at10k.added_p99_ms <= 2 : null,
  };
  const errors = [...results.bridge, ...results.relay, ...results.socketio].reduce((n, x) => n + x.errors, 0);
  return { json: rows, table, targets: [target], errors };
}
