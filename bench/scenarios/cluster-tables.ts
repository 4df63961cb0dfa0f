// The cluster scenario's runs (what each measured) and its tables, JSON and target from them (bench/scenarios/cluster.ts).
import type { StreamingResult } from '../load/streaming.js';
import { ratio, type Table, type Target } from '../report.js';
import type { Difference } from './cluster-counters.js';
import type { Settings } from './settings.js';

export type Setup = 'two nodes' | 'one node, PostgreSQL' | 'one node, SQLite';
/** same: apps and agents on the first node; cross: apps on the first, agents on the second; halves: one generator per node, each on its own. */
export type Placement = 'same' | 'cross' | 'halves';

export interface ClusterRun {
  setup: Setup;
  placement: Placement;
  rate: number | null;
  /** One per generator (halves: two). */
  generators: StreamingResult[];
  /** Delivered per second, all generators added. */
  fragments_per_s: number;
  /** From before the generators start to after they exit: what went through Redis, fragments forwarded. */
  counters: Difference;
  /** The first generator's measured window (after its warm-up): CPU of the nodes, the machine and Redis. */
  window: Difference | null;
}

export function skippedTable(why: string): Table {
  return { title: 'Cluster: not run', columns: ['why'], rows: [[why]] };
}

/** A run by what it was; `open`: the open-loop one. */
const find = (runs: ClusterRun[], setup: Setup, placement: Placement, open: boolean) =>
  runs.find((r) => r.setup === setup && r.placement === placement && (r.rate !== null) === open);

/** The worse of the generators' figures (two generators' percentiles cannot be merged). */
const worst = (r: ClusterRun | undefined, f: (g: StreamingResult) => number) =>
  r ? Math.max(...r.generators.map(f)) : null;
const sum = (r: ClusterRun | undefined, f: (g: StreamingResult) => number) =>
  r ? r.generators.reduce((a, g) => a + f(g), 0) : null;
const minus = (a: number | null, b: number | null) => (a === null || b === null ? null : Number((a - b).toFixed(3)));
const nodesCpu = (r: ClusterRun | undefined) => r?.window?.node_cpu_pct.map((x) => x ?? '-').join(' / ') ?? null;
/** Fragments that did not arrive once and in order: never drained, skipped over, or out of order. */
const misdelivered = (r: ClusterRun) =>
  r.generators.reduce(
    (a, g) => a + (g.order ? g.order.skipped + g.order.out_of_order + Math.max(0, g.order.sent - g.order.received) : 0),
    0,
  );
const errorsOf = (...rs: (ClusterRun | undefined)[]) => rs.reduce((a, r) => a + (sum(r, (g) => g.errors) ?? 0), 0);
/**
 * CPU microseconds the nodes (all of them) spent per fragment delivered in the measured window: unlike fragments/s,
 * it hardly moves when other work on a shared machine takes CPU away.
 */
const nodeUsPerFragment = (r: ClusterRun | undefined) => {
  const delivered = sum(r, (g) => g.fragments);
  return r?.window && delivered ? Number(((r.window.node_cpu_s / delivered) * 1e6).toFixed(2)) : null;
};
const redisUsPerFragment = (r: ClusterRun | undefined) => {
  const delivered = sum(r, (g) => g.fragments);
  const cpu = r?.window?.redis_cpu_s;
  return typeof cpu === 'number' && delivered ? Number(((cpu / delivered) * 1e6).toFixed(2)) : null;
};
/** Each generator's CPU over its own measured window, added up. */
const generatorCpuPct = (r: ClusterRun) => r.generators.reduce((a, g) => a + g.generator_cpu_pct, 0);

function label(r: ClusterRun): string {
  const load = r.rate === null ? 'closed loop' : `${r.rate}/s`;
  const where = {
    same: 'app and agent on one node',
    cross: 'app and agent on different nodes',
    halves: 'half the streams per generator',
  }[r.placement];
  return `${r.setup}, ${where}, ${load}`;
}

export function clusterTables(s: Settings, runs: ClusterRun[]) {
  const closed = { same: find(runs, 'two nodes', 'same', false), cross: find(runs, 'two nodes', 'cross', false) };
  const open = { same: find(runs, 'two nodes', 'same', true), cross: find(runs, 'two nodes', 'cross', true) };
  const cores = runs[0]?.counters.machine.cores ?? 0;
  const p = (r: ClusterRun | undefined, q: 'p50' | 'p99' | 'p999') => worst(r, (g) => g.latency_ms[q]);
  /** A row of the hop table: the same node, different nodes, and their ratio where one means something. */
  const pair = (
    name: string,
    f: (r: ClusterRun | undefined) => number | string | null,
    withRatio: boolean,
    same: ClusterRun | undefined,
    cross: ClusterRun | undefined,
  ) => {
    const [a, b] = [f(same), f(cross)];
    return [name, a, b, withRatio && typeof a === 'number' && typeof b === 'number' ? ratio(b, a) : null];
  };
  const hop: Table = {
    title:
      `Cluster 1: the hop. Token streaming on a two-node bridge (PostgreSQL, Redis), app and agent on one node vs on different nodes ` +
      `(same processes, database and Redis). ${s.m} agents x ${s.n} apps = ${s.m * s.n} streams, ${s.window} in flight each (closed loop) or ${s.clusterRate} fragments/s in all (open loop), ` +
      `${s.durationS} s after ${s.warmupS} s warm-up. Node CPU: the apps' node / the agents' (idle when both are on the first).`,
    columns: ['', 'same node', 'different nodes', 'different / same'],
    rows: [
      pair('closed loop: fragments/s delivered', (r) => r?.fragments_per_s ?? null, true, closed.same, closed.cross),
      pair('closed loop: latency p50 (ms)', (r) => p(r, 'p50'), true, closed.same, closed.cross),
      pair('closed loop: latency p99 (ms)', (r) => p(r, 'p99'), true, closed.same, closed.cross),
      pair('closed loop: node CPU % (of one core, measured window)', nodesCpu, false, closed.same, closed.cross),
      pair('closed loop: nodes CPU per fragment (µs, all nodes)', nodeUsPerFragment, true, closed.same, closed.cross),
      pair(
        'closed loop: Redis CPU per fragment (µs, the whole server)',
        redisUsPerFragment,
        false,
        closed.same,
        closed.cross,
      ),
      pair(`open loop ${s.clusterRate}/s: delivered/s`, (r) => r?.fragments_per_s ?? null, true, open.same, open.cross),
      pair(`open loop ${s.clusterRate}/s: latency p50 (ms)`, (r) => p(r, 'p50'), true, open.same, open.cross),
      pair(`open loop ${s.clusterRate}/s: latency p99 (ms)`, (r) => p(r, 'p99'), true, open.same, open.cross),
      pair(`open loop ${s.clusterRate}/s: latency p99.9 (ms)`, (r) => p(r, 'p999'), true, open.same, open.cross),
      [
        'open loop: p50 / p99 the hop adds (ms)',
        null,
        `${minus(p(open.cross, 'p50'), p(open.same, 'p50'))} / ${minus(p(open.cross, 'p99'), p(open.same, 'p99'))}`,
        null,
      ],
      pair(`open loop ${s.clusterRate}/s: node CPU %`, nodesCpu, false, open.same, open.cross),
      pair(`open loop ${s.clusterRate}/s: nodes CPU per fragment (µs)`, nodeUsPerFragment, true, open.same, open.cross),
      pair('closed loop: generator CPU %', (r) => (r ? generatorCpuPct(r) : null), false, closed.same, closed.cross),
      pair(
        `open loop ${s.clusterRate}/s: generator CPU %`,
        (r) => (r ? generatorCpuPct(r) : null),
        false,
        open.same,
        open.cross,
      ),
      ['errors (closed + open)', errorsOf(closed.same, open.same), errorsOf(closed.cross, open.cross), null],
    ],
  };

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
    hop: {
      closed: {
        same_node: closed.same?.fragments_per_s ?? null,
        different_nodes: closed.cross?.fragments_per_s ?? null,
        ratio: ratio(closed.cross?.fragments_per_s, closed.same?.fragments_per_s),
        node_cpu_us_per_fragment: {
          same_node: nodeUsPerFragment(closed.same),
          different_nodes: nodeUsPerFragment(closed.cross),
        },
      },
      open: {
        rate: s.clusterRate,
        same_node: { p50: p(open.same, 'p50'), p99: p(open.same, 'p99'), p999: p(open.same, 'p999') },
        different_nodes: { p50: p(open.cross, 'p50'), p99: p(open.cross, 'p99'), p999: p(open.cross, 'p999') },
        added_p50_ms: minus(p(open.cross, 'p50'), p(open.same, 'p50')),
        added_p99_ms: minus(p(open.cross, 'p99'), p(open.same, 'p99')),
      },
    },
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
  return { json, tables: [hop, redis, versus, machine], targets: [target], errors };
}
