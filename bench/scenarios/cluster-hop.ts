// Cluster 1, the hop: the two-node bridge with the app and the agent on one node vs on different nodes, beside the
// Socket.IO peer on two nodes (./cluster-socketio.ts) under the same load; its table and its part of the JSON.
import { ratio, type Table } from '../report.js';
import {
  both,
  errorsOf,
  find,
  generatorCpuPct,
  minus,
  nodesCpu,
  nodeUsPerFragment,
  percentile as p,
  redisPublishesPerFragment,
  redisUsPerFragment,
  type ClusterRun,
  type Setup,
} from './cluster-figures.js';
import type { Settings } from './settings.js';

/** `socketIoError`: why the Socket.IO peer's runs stopped, if they did. */
export function hopTable(s: Settings, runs: ClusterRun[], socketIoError: string | null) {
  const placements = (setup: Setup, open: boolean) => ({
    same: find(runs, setup, 'same', open),
    cross: find(runs, setup, 'cross', open),
  });
  const closed = placements('two nodes', false);
  const open = placements('two nodes', true);
  const io = { closed: placements('socket.io, two nodes', false), open: placements('socket.io, two nodes', true) };
  type Figure = (r: ClusterRun | undefined) => number | string | null;
  const num = (x: number | string | null) => (typeof x === 'number' ? x : null);
  /**
   * A row of the hop table: the same node, different nodes, and their ratio where one means something; then the
   * Socket.IO peer's same / different nodes and bridge / socket.io for each (`peer`: null, no Socket.IO cells).
   */
  const pair = (
    name: string,
    f: Figure,
    withRatio: boolean,
    same: ClusterRun | undefined,
    cross: ClusterRun | undefined,
    peer: { same?: ClusterRun; cross?: ClusterRun; ratio: boolean } | null = null,
  ) => {
    const [a, b] = [f(same), f(cross)];
    const [c, d] = peer ? [f(peer.same), f(peer.cross)] : [null, null];
    return [
      name,
      a,
      b,
      withRatio && typeof a === 'number' && typeof b === 'number' ? ratio(b, a) : null,
      both(c, d),
      peer?.ratio ? both(ratio(num(a), num(c)), ratio(num(b), num(d))) : null,
    ];
  };
  const peerOf = (loop: 'closed' | 'open', withRatio = true) => ({ ...io[loop], ratio: withRatio });
  const added = (q: 'p50' | 'p99', at: { same?: ClusterRun; cross?: ClusterRun }) =>
    minus(p(at.cross, q), p(at.same, q));
  const fps: Figure = (r) => r?.fragments_per_s ?? null;
  const genCpu: Figure = (r) => (r ? generatorCpuPct(r) : null);
  const rate = `${s.clusterRate}/s`;
  const peerSays = socketIoError
    ? ` The Socket.IO peer stopped: ${socketIoError}.`
    : ' Socket.IO: two bench/socketio-relay.ts nodes over @socket.io/redis-adapter on the same Redis, the same load and placements (its CPU per fragment: both relays); ' +
      'bridge / socket.io above 1 favours the bridge for fragments/s, below 1 for latency and CPU.';
  const hop: Table = {
    title:
      `Cluster 1: the hop. Token streaming on a two-node bridge (PostgreSQL, Redis), app and agent on one node vs on different nodes ` +
      `(same processes, database and Redis). ${s.m} agents x ${s.n} apps = ${s.m * s.n} streams, ${s.window} in flight each (closed loop) or ${s.clusterRate} fragments/s in all (open loop), ` +
      `${s.durationS} s after ${s.warmupS} s warm-up. Node CPU: the apps' node / the agents' (idle when both are on the first).${peerSays}`,
    columns: [
      '',
      'same node',
      'different nodes',
      'different / same',
      'socket.io: same / different',
      'bridge / socket.io: same / different',
    ],
    rows: [
      pair('closed loop: fragments/s delivered', fps, true, closed.same, closed.cross, peerOf('closed')),
      pair('closed loop: latency p50 (ms)', (r) => p(r, 'p50'), true, closed.same, closed.cross, peerOf('closed')),
      pair('closed loop: latency p99 (ms)', (r) => p(r, 'p99'), true, closed.same, closed.cross, peerOf('closed')),
      pair('closed loop: node CPU % (of one core, measured window)', nodesCpu, false, closed.same, closed.cross),
      pair(
        'closed loop: nodes CPU per fragment (µs, all nodes)',
        nodeUsPerFragment,
        true,
        closed.same,
        closed.cross,
        peerOf('closed'),
      ),
      pair(
        'closed loop: Redis CPU per fragment (µs, the whole server)',
        redisUsPerFragment,
        false,
        closed.same,
        closed.cross,
        peerOf('closed', false),
      ),
      pair(
        'closed loop: Redis PUBLISH per fragment (the whole server)',
        redisPublishesPerFragment,
        false,
        closed.same,
        closed.cross,
        peerOf('closed', false),
      ),
      pair(`open loop ${rate}: delivered/s`, fps, true, open.same, open.cross, peerOf('open')),
      pair(`open loop ${rate}: latency p50 (ms)`, (r) => p(r, 'p50'), true, open.same, open.cross, peerOf('open')),
      pair(`open loop ${rate}: latency p99 (ms)`, (r) => p(r, 'p99'), true, open.same, open.cross, peerOf('open')),
      pair(`open loop ${rate}: latency p99.9 (ms)`, (r) => p(r, 'p999'), true, open.same, open.cross, peerOf('open')),
      [
        'open loop: p50 / p99 the hop adds (ms)',
        null,
        both(added('p50', open), added('p99', open)),
        null,
        both(added('p50', io.open), added('p99', io.open)),
        null,
      ],
      pair(`open loop ${rate}: node CPU %`, nodesCpu, false, open.same, open.cross),
      pair(
        `open loop ${rate}: nodes CPU per fragment (µs)`,
        nodeUsPerFragment,
        true,
        open.same,
        open.cross,
        peerOf('open'),
      ),
      pair('closed loop: generator CPU %', genCpu, false, closed.same, closed.cross, peerOf('closed', false)),
      pair(`open loop ${rate}: generator CPU %`, genCpu, false, open.same, open.cross, peerOf('open', false)),
      [
        'errors (closed + open)',
        errorsOf(closed.same, open.same),
        errorsOf(closed.cross, open.cross),
        null,
        both(errorsOf(io.closed.same, io.open.same), errorsOf(io.closed.cross, io.open.cross)),
        null,
      ],
    ],
  };

  type Runs = { same?: ClusterRun; cross?: ClusterRun };
  const placed = (f: (r: ClusterRun | undefined) => number | null, at: Runs) => ({
    same_node: f(at.same),
    different_nodes: f(at.cross),
  });
  const percentiles = (r: ClusterRun | undefined) => ({ p50: p(r, 'p50'), p99: p(r, 'p99'), p999: p(r, 'p999') });
  const hopJson = (c: Runs, o: Runs) => ({
    closed: {
      ...placed((r) => r?.fragments_per_s ?? null, c),
      ratio: ratio(c.cross?.fragments_per_s, c.same?.fragments_per_s),
      node_cpu_us_per_fragment: placed(nodeUsPerFragment, c),
      redis_publishes_per_fragment: placed(redisPublishesPerFragment, c),
    },
    open: {
      rate: s.clusterRate,
      same_node: percentiles(o.same),
      different_nodes: percentiles(o.cross),
      added_p50_ms: added('p50', o),
      added_p99_ms: added('p99', o),
      redis_publishes_per_fragment: placed(redisPublishesPerFragment, o),
    },
  });
  const over = (f: (r: ClusterRun | undefined) => number | null, b: Runs, i: Runs) => ({
    same_node: ratio(f(b.same), f(i.same)),
    different_nodes: ratio(f(b.cross), f(i.cross)),
  });
  const json = {
    hop: hopJson(closed, open),
    // The Socket.IO peer on two nodes, the same figures; bridge / socket.io per placement.
    socketio: {
      error: socketIoError,
      ...hopJson(io.closed, io.open),
      bridge_over_socketio: {
        closed_fragments_per_s: over((r) => r?.fragments_per_s ?? null, closed, io.closed),
        closed_node_cpu_us_per_fragment: over(nodeUsPerFragment, closed, io.closed),
        open_p99: over((r) => p(r, 'p99'), open, io.open),
      },
    },
  };
  return { table: hop, json };
}
