// The cluster scenario's tables, JSON and target from its runs (bench/scenarios/cluster.ts); the hop's, with the
// Socket.IO peer beside it, in ./cluster-hop.ts.
import { ratio, type Table, type Target } from '../report.js';
import {
  errorsOf,
  find,
  generatorCpuPct,
  label,
  misdelivered,
  nodesCpu,
  nodeUsPerFragment,
  sum,
  worst,
  type ClusterRun,
} from './cluster-figures.js';
import { hopTable } from './cluster-hop.js';
import type { Settings } from './settings.js';

export function skippedTable(why: string): Table {
  return { title: 'Cluster: not run', columns: ['why'], rows: [[why]] };
}

/** `socketIoError`: why the Socket.IO peer's runs stopped, if they did. */
export function clusterTables(s: Settings, runs: ClusterRun[], socketIoError: string | null = null) {
  const cores = runs[0]?.counters.machine.cores ?? 0;
  const hop = hopTable(s, runs, socketIoError);
  const clustered = runs.filter((r) => r.setup === 'two nodes');
  const redis: Table = {
    title:
      'Cluster 2: Redis traffic per fragment forwarded (bridge_cluster_bus_total of both nodes, before and after each run, warm-up and drain included; ' +
      'fragments: bridge_tokens_forwarded_total; messages also carry presence, the event to the agent and its reply). Sent / received: by the generator, whole run. ' +
      "Refused at start: events refused AGENT_OFFLINE because the apps' node had not heard yet that their agent had just connected to the other node (sent again).",
    columns: [
      'run',
      'forwarded',
      'sent / received',
      'PUBLISH',
      'messages',
      'PUBLISH / fragment',
      'messages / fragment',
      'fragments / PUBLISH',
      'dropped',
      'lost (cluster)',
      'lost or out of order (generator)',
      'refused at start',
    ],
    rows: clustered.map((r) => {
      const c = r.counters;
      return [
        label(r),
        c.tokens_forwarded,
        `${sum(r, (g) => g.order?.sent ?? 0)} / ${sum(r, (g) => g.order?.received ?? 0)}`,
        c.publishes,
        c.messages,
        c.publishes_per_fragment,
        c.messages_per_fragment,
        c.publishes ? Number((c.tokens_forwarded / c.publishes).toFixed(1)) : null,
        c.dropped,
        c.lost,
        misdelivered(r),
        sum(r, (g) => g.start_retries),
      ];
    }),
  };

  const one = find(runs, 'one node, PostgreSQL', 'halves', false);
  const sqlite = find(runs, 'one node, SQLite', 'halves', false);
  const two = find(runs, 'two nodes', 'halves', false);
  const column = (f: (r: ClusterRun) => number | string | null) => [one, sqlite, two].map((r) => (r ? f(r) : null));
  const versus: Table = {
    title:
      `Cluster 3: two nodes vs one on this machine. Closed loop, two generators of ${Math.ceil(s.m / 2)} + ${Math.floor(s.m / 2)} agents x ${s.n} apps each (${s.m * s.n} streams), ` +
      `against one node, or one node each (app and agent on the same node). On ${cores} cores the two generators, the nodes, Redis and PostgreSQL all share the CPUs: ` +
      `a second node here adds no CPU, only a second process to schedule, so this says what splitting costs on one machine, not what a second machine would give.`,
    columns: ['', 'one node, PostgreSQL', 'one node, SQLite', 'two nodes', 'two / one (PostgreSQL)'],
    rows: [
      ['fragments/s delivered', ...column((r) => r.fragments_per_s), ratio(two?.fragments_per_s, one?.fragments_per_s)],
      [
        'latency p50 (ms, worse generator)',
        ...column((r) => worst(r, (g) => g.latency_ms.p50)),
        ratio(
          worst(two, (g) => g.latency_ms.p50),
          worst(one, (g) => g.latency_ms.p50),
        ),
      ],
      [
        'latency p99 (ms, worse generator)',
        ...column((r) => worst(r, (g) => g.latency_ms.p99)),
        ratio(
          worst(two, (g) => g.latency_ms.p99),
          worst(one, (g) => g.latency_ms.p99),
        ),
      ],
      ['node CPU % (each)', ...column((r) => nodesCpu(r)), null],
      [
        'nodes CPU per fragment (µs, all nodes)',
        ...column(nodeUsPerFragment),
        ratio(nodeUsPerFragment(two), nodeUsPerFragment(one)),
      ],
      ['generators CPU % (both)', ...column(generatorCpuPct), null],
      ['errors', ...column((r) => sum(r, (g) => g.errors)), null],
    ],
  };

  const machine: Table = {
    title:
      `Cluster 4: the machine over each run's measured window, CPU in % of one core (${cores} cores: ${cores * 100}% is all of it). The machine may be shared: ` +
      `"others" is what neither the nodes, the generators nor Redis used (PostgreSQL, other people's work); Redis's is the whole server's; "stolen" is CPU a virtual ` +
      `machine's hypervisor gave to other guests. "Others" is approximate: the kernel keeps the machine's and each process's counters apart and they need not agree (it came out at -12 on a 2-vCPU virtual machine).`,
    columns: [
      'run',
      'seconds',
      'load average before -> after',
      'machine busy %',
      'nodes %',
      'generators %',
      'Redis %',
      'others %',
      'stolen %',
    ],
    rows: runs.map((r) => {
      const w = r.window;
      if (!w) return [label(r), null, null, null, null, null, null, null, null];
      const nodes = w.node_cpu_pct.reduce<number>((a, x) => a + (x ?? 0), 0);
      const gens = generatorCpuPct(r);
      const others =
        w.machine.busy_pct === null ? null : w.machine.busy_pct - nodes - gens - (w.machine.redis_cpu_pct ?? 0);
      return [
        label(r),
        w.wall_s,
        `${w.machine.load1_before} -> ${w.machine.load1_after}`,
        w.machine.busy_pct,
        nodes,
        gens,
        w.machine.redis_cpu_pct,
        others,
        w.machine.steal_pct,
      ];
    }),
  };

  // The generator's sequence numbers decide: a PUBLISH whose answer comes after the bus's command timeout is counted
  // dropped by its node although Redis delivered it (seen under heavy load), so the nodes' counters are only shown.
  const bad = runs.reduce((a, r) => a + misdelivered(r), 0);
  const sent = runs.reduce((a, r) => a + (sum(r, (g) => g.order?.sent ?? 0) ?? 0), 0);
  const dropped = runs.reduce((a, r) => a + r.counters.dropped, 0);
  const lost = runs.reduce((a, r) => a + r.counters.lost, 0);
  const nodesSay =
    dropped || lost
      ? `; the nodes counted ${dropped} messages dropped and ${lost} lost (bridge_cluster_bus_total, bridge_cluster_lost_total)`
      : '';
  const target: Target = {
    name: 'crossing nodes',
    goal: "every fragment delivered once and in order (the generator's sequence numbers)",
    measured: `${bad ? `${bad} of ${sent} fragments lost or out of order` : `all ${sent} in order`}${nodesSay}`,
    met: runs.length ? bad === 0 : null,
  };
  const json = {
    ...hop.json,
    two_vs_one: {
      one_node_postgres: one?.fragments_per_s ?? null,
      one_node_sqlite: sqlite?.fragments_per_s ?? null,
      two_nodes: two?.fragments_per_s ?? null,
      ratio_two_over_one_postgres: ratio(two?.fragments_per_s, one?.fragments_per_s),
    },
    runs,
  };
  // A fragment lost or reordered is one of its generator's errors.
  const errors = errorsOf(...runs);
  return { json, tables: [hop.table, redis, versus, machine], targets: [target], errors };
}
