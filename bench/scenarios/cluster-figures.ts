// The cluster scenario's runs (what each measured) and the figures the tables read from them
// (./cluster-tables.ts, ./cluster-hop.ts).
import type { StreamingResult } from '../load/streaming.js';
import type { Difference } from './cluster-counters.js';

/** 'socket.io, two nodes': the Socket.IO peer, two relays over @socket.io/redis-adapter (./cluster-socketio.ts). */
export type Setup = 'two nodes' | 'one node, PostgreSQL' | 'one node, SQLite' | 'socket.io, two nodes';
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

/** A run by what it was; `open`: the open-loop one. */
export const find = (runs: ClusterRun[], setup: Setup, placement: Placement, open: boolean) =>
  runs.find((r) => r.setup === setup && r.placement === placement && (r.rate !== null) === open);

/** The worse of the generators' figures (two generators' percentiles cannot be merged). */
export const worst = (r: ClusterRun | undefined, f: (g: StreamingResult) => number) =>
  r ? Math.max(...r.generators.map(f)) : null;
export const sum = (r: ClusterRun | undefined, f: (g: StreamingResult) => number) =>
  r ? r.generators.reduce((a, g) => a + f(g), 0) : null;
export const minus = (a: number | null, b: number | null) =>
  a === null || b === null ? null : Number((a - b).toFixed(3));
export const nodesCpu = (r: ClusterRun | undefined) => r?.window?.node_cpu_pct.map((x) => x ?? '-').join(' / ') ?? null;
/** Fragments that did not arrive once and in order: never drained, skipped over, or out of order. */
export const misdelivered = (r: ClusterRun) =>
  r.generators.reduce(
    (a, g) => a + (g.order ? g.order.skipped + g.order.out_of_order + Math.max(0, g.order.sent - g.order.received) : 0),
    0,
  );
export const errorsOf = (...rs: (ClusterRun | undefined)[]) =>
  rs.reduce((a, r) => a + (sum(r, (g) => g.errors) ?? 0), 0);
/**
 * CPU microseconds the nodes (all of them) spent per fragment delivered in the measured window: unlike fragments/s,
 * it hardly moves when other work on a shared machine takes CPU away.
 */
export const nodeUsPerFragment = (r: ClusterRun | undefined) => {
  const delivered = sum(r, (g) => g.fragments);
  return r?.window && delivered ? Number(((r.window.node_cpu_s / delivered) * 1e6).toFixed(2)) : null;
};
export const redisUsPerFragment = (r: ClusterRun | undefined) => {
  const delivered = sum(r, (g) => g.fragments);
  const cpu = r?.window?.redis_cpu_s;
  return typeof cpu === 'number' && delivered ? Number(((cpu / delivered) * 1e6).toFixed(2)) : null;
};
/** Redis PUBLISH commands (the whole server's) per fragment delivered, over the measured window. */
export const redisPublishesPerFragment = (r: ClusterRun | undefined) => {
  const delivered = sum(r, (g) => g.fragments);
  const publishes = r?.window?.redis_publishes;
  return typeof publishes === 'number' && delivered ? Number((publishes / delivered).toFixed(3)) : null;
};
/** Two figures in one cell, `a / b`; null when neither is known. */
export const both = (a: number | string | null, b: number | string | null) =>
  a === null && b === null ? null : `${a ?? '-'} / ${b ?? '-'}`;
/** Each generator's CPU over its own measured window, added up. */
export const generatorCpuPct = (r: ClusterRun) => r.generators.reduce((a, g) => a + g.generator_cpu_pct, 0);

export function label(r: ClusterRun): string {
  const load = r.rate === null ? 'closed loop' : `${r.rate}/s`;
  const where = {
    same: 'app and agent on one node',
    cross: 'app and agent on different nodes',
    halves: 'half the streams per generator',
  }[r.placement];
  return `${r.setup}, ${where}, ${load}`;
}

/** A latency percentile of a run: its worse generator's. */
export const percentile = (r: ClusterRun | undefined, q: 'p50' | 'p99' | 'p999') => worst(r, (g) => g.latency_ms[q]);
