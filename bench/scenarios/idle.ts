// Scenario 4: idle connections. Many app connections held open (pinging every 30 s), the server's RSS per
// connection, then a soak of light traffic and the RSS and heap again: growth is a leak. The relay holding the
// same number of bare sockets is the baseline of what a connection costs at all.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { procRssKb } from '../load/common.js';
import type { IdleConfig, IdleResult } from '../load/idle.js';
import {
  openFilesLimit,
  provision,
  runGenerator,
  runtimeOf,
  startBridge,
  startRelay,
  shutdown,
  type Server,
} from '../processes.js';
import { ratio, type Table, type Target } from '../report.js';
import type { Settings } from './settings.js';

/** File descriptors a process keeps for itself beyond its sockets (database, listeners, stdio). */
const FD_MARGIN = 200;

interface Sample {
  at_s: number;
  rss_kb: number | null;
  heap_used_kb: number | null;
}

interface IdleRun {
  connections: number;
  generators: number;
  rss_before_kb: number | null;
  rss_connected_kb: number | null;
  kb_per_connection: number | null;
  connect_s: number;
  soak: Sample[];
  generator_results: IdleResult[];
}

async function runTarget(target: 'bridge' | 'relay', s: Settings, count: number): Promise<IdleRun> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  let server: Server | undefined;
  const settleS = s.quick ? 1 : 5;
  const soakS = target === 'bridge' ? s.soakS : 0;
  const sampleEveryS = s.quick ? 1 : 30;
  try {
    let apps: IdleConfig['apps'];
    let soak: IdleConfig['soak'];
    if (target === 'bridge') {
      // Every idle connection comes from this machine's one address and one app's tokens: the per-address and
      // per-app bounds of L18 would refuse all but 1000 of them, and the total bound is the open-files cap's here.
      const bridge = await startBridge(dir, s.profileDir, {
        MAX_CONNECTIONS: '10000000',
        MAX_CONNECTIONS_PER_ADDRESS: '0',
        MAX_CONNECTIONS_PER_APP: '10000000',
      });
      server = bridge;
      const creds = await provision(bridge.admin, 1, 10);
      apps = creds.apps;
      soak = { agent: creds.agents[0]!, eventsPerS: s.soakEventsPerS };
    } else {
      server = await startRelay();
    }
    await sleep(1000);
    const rssBefore = procRssKb(server.pid);
    const perGenerator = openFilesLimit() - FD_MARGIN;
    const generators = Math.ceil(count / perGenerator);
    console.error(`  ${target}: ${count} connections from ${generators} generator(s), hold ${settleS + soakS} s...`);
    let connected = 0;
    let allConnected!: () => void;
    const whenConnected = new Promise<void>((resolve) => (allConnected = resolve));
    const t0 = performance.now();
    const runs = Array.from({ length: generators }, (_, g) => {
      const mine = Math.min(perGenerator, count - g * perGenerator);
      const cfg: IdleConfig = {
        scenario: 'idle',
        target,
        url: server!.url,
        count: mine,
        // Under the bridge's 100 unauthenticated connections per address (L21): the generators all connect from
        // 127.0.0.1, and a handshake counts until the bridge has accepted it, a moment after the client sees it open.
        concurrency: 50,
        holdS: settleS + soakS + 3,
        pingIntervalMs: 30_000,
        ...(apps ? { apps } : {}),
        ...(soak && g === 0 ? { soak } : {}),
      };
      return runGenerator<IdleResult>(cfg, (line) => {
        if (line.startsWith('CONNECTED ') && ++connected === generators) allConnected();
      });
    });
    await Promise.race([whenConnected, Promise.all(runs)]);
    const connectS = (performance.now() - t0) / 1000;
    await sleep(settleS * 1000);
    const rssConnected = procRssKb(server.pid);
    const samples: Sample[] = [];
    const soakStart = performance.now();
    if (soakS > 0) {
      for (;;) {
        samples.push({
          at_s: Math.round((performance.now() - soakStart) / 1000),
          rss_kb: procRssKb(server.pid),
          heap_used_kb: (await runtimeOf(server))?.heap_used_kb ?? null,
        });
        const left = soakS * 1000 - (performance.now() - soakStart);
        if (left <= 0) break;
        await sleep(Math.min(left, sampleEveryS * 1000));
      }
    }
    const results = await Promise.all(runs);
    if (server.child.exitCode !== null) throw new Error(`the ${target} exited during the run:\n${server.logs()}`);
    return {
      connections: results.reduce((n, r) => n + r.connections, 0),
      generators,
      rss_before_kb: rssBefore,
      rss_connected_kb: rssConnected,
      kb_per_connection:
        rssBefore !== null && rssConnected !== null ? Number(((rssConnected - rssBefore) / count).toFixed(2)) : null,
      connect_s: Number(connectS.toFixed(1)),
      soak: samples,
      generator_results: results,
    };
  } finally {
    await shutdown(server, dir);
  }
}

export async function idleConnections(s: Settings) {
  const limit = openFilesLimit() - FD_MARGIN;
  const count = Math.min(s.idleConnections, limit);
  const capped =
    count < s.idleConnections
      ? ` (capped from ${s.idleConnections}: this machine's open-files limit is ${limit + FD_MARGIN})`
      : '';
  console.error(`Scenario 4: ${count} idle connections${capped}, soak ${s.soakS} s`);
  const results: Partial<Record<'bridge' | 'relay', IdleRun>> = {};
  // No Socket.IO peer here: `--only socketio` runs neither target.
  for (const t of ['relay', 'bridge'] as const) if (!s.only || s.only === t) results[t] = await runTarget(t, s, count);
  const { bridge, relay } = results;
  const first = bridge?.soak[0];
  const last = bridge?.soak[bridge.soak.length - 1];
  const growth = (f: (x: Sample) => number | null) =>
    first && last && f(first) !== null && f(last) !== null ? f(last)! - f(first)! : null;
  const rssGrowthKb = growth((x) => x.rss_kb);
  const heapGrowthKb = growth((x) => x.heap_used_kb);
  // A sample's heap holds garbage not yet collected (the samples saw-tooth by tens of MiB), so the leak signal is
  // the floor: the least heap seen in the last third of the soak against the least in the first third.
  const floor = (part: Sample[]) => Math.min(...part.map((x) => x.heap_used_kb ?? Infinity));
  const third = Math.floor((bridge?.soak.length ?? 0) / 3);
  const heapFloorGrowthKb =
    bridge && third > 0 ? floor(bridge.soak.slice(-third)) - floor(bridge.soak.slice(0, third)) : null;
  const sum = (f: (r: IdleResult) => number) => bridge?.generator_results.reduce((n, r) => n + f(r), 0) ?? null;
  const table: Table = {
    title: `Scenario 4: ${count} idle app connections${capped}; then ${s.soakS} s of light traffic (pings every 30 s, ${s.soakEventsPerS} events/s streaming 5 fragments each)`,
    columns: ['', 'bridge', 'relay', 'bridge/relay'],
    rows: [
      ['server RSS before (MiB)', mib(bridge?.rss_before_kb), mib(relay?.rss_before_kb), null],
      ['server RSS connected (MiB)', mib(bridge?.rss_connected_kb), mib(relay?.rss_connected_kb), null],
      [
        'RSS per connection (KB)',
        bridge?.kb_per_connection ?? null,
        relay?.kb_per_connection ?? null,
        ratio(bridge?.kb_per_connection, relay?.kb_per_connection, 2),
      ],
      ['time to connect all (s)', bridge?.connect_s ?? null, relay?.connect_s ?? null, null],
      [
        'soak: RSS start -> end (MiB)',
        first && last ? `${mib(first.rss_kb)} -> ${mib(last.rss_kb)}` : null,
        null,
        null,
      ],
      [
        'soak: heap used start -> end (MiB)',
        first && last ? `${mib(first.heap_used_kb)} -> ${mib(last.heap_used_kb)}` : null,
        null,
        null,
      ],
      [
        'soak: heap floor, last third - first third (MiB)',
        heapFloorGrowthKb === null ? null : signed(heapFloorGrowthKb / 1024),
        null,
        null,
      ],
      ['soak: events sent / replies', bridge ? `${sum((r) => r.events)} / ${sum((r) => r.replies)}` : null, null, null],
      ['soak: pings / pongs', bridge ? `${sum((r) => r.pings)} / ${sum((r) => r.pongs)}` : null, null, null],
      ['errors', sum((r) => r.errors), relay?.generator_results.reduce((n, r) => n + r.errors, 0) ?? null, null],
    ],
  };
  const targets: Target[] = [
    {
      name: 'idle memory',
      goal: '<= 20 KB RSS per idle app connection at 20k connections',
      measured: bridge?.kb_per_connection != null ? `${bridge.kb_per_connection} KB at ${count}` : '-',
      met: bridge?.kb_per_connection != null ? bridge.kb_per_connection <= 20 : null,
    },
    {
      name: 'soak',
      goal: `no growth over ${s.soakS} s of light traffic`,
      measured:
        heapFloorGrowthKb === null
          ? '-'
          : `heap floor ${signed(heapFloorGrowthKb / 1024)} MiB (RSS ${signed((rssGrowthKb ?? 0) / 1024)} MiB first to last sample)`,
      met: heapFloorGrowthKb === null ? null : heapFloorGrowthKb <= 5 * 1024,
    },
  ];
  const errors = [bridge, relay].reduce((n, x) => n + (x?.generator_results.reduce((m, r) => m + r.errors, 0) ?? 0), 0);
  return {
    json: {
      count,
      capped_by_open_files_limit: count < s.idleConnections,
      bridge: bridge ?? null,
      relay: relay ?? null,
      rss_growth_kb: rssGrowthKb,
      heap_growth_kb: heapGrowthKb,
      heap_floor_growth_kb: heapFloorGrowthKb,
    },
    table,
    targets,
    errors,
  };
}

const mib = (kb: number | null | undefined) =>
  kb === null || kb === undefined ? null : Number((kb / 1024).toFixed(1));
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;
