// One run of the cluster scenario (bench/scenarios/cluster.ts, and the Socket.IO peer's in ./cluster-socketio.ts):
// the generators' config for a placement, and the run itself with the counters read around it.
import type { Redis } from 'ioredis';
import type { StreamingConfig, StreamingResult } from '../load/streaming.js';
import { runGenerator, type Credentials, type Server } from '../processes.js';
import { difference, read, type NodeCounters, type Reading } from './cluster-counters.js';
import type { ClusterRun, Placement, Setup } from './cluster-figures.js';
import type { Settings } from './settings.js';

/**
 * A streaming generator with its apps on `appNode` and its agents on `agentNode`; `creds` for the bridge, the
 * counts alone for the Socket.IO relay (its agents name themselves).
 */
export function generator(
  s: Settings,
  rate: number | undefined,
  appNode: Server,
  agentNode: Server,
  creds: Credentials | { m: number; n: number },
  target: 'bridge' | 'socketio' = 'bridge',
): StreamingConfig {
  return {
    scenario: 'streaming',
    target,
    url: appNode.url,
    appUrl: appNode.url,
    agentUrl: agentNode.url,
    serverPid: appNode.pid, // the events' node: where each fragment ends up
    ...('agents' in creds ? { m: creds.agents.length, n: creds.apps.length, ...creds } : creds),
    window: s.window,
    payloadBytes: s.payloadBytes,
    warmupS: s.warmupS,
    durationS: s.durationS,
    sequence: true,
    ...(rate === undefined ? {} : { rate }),
  };
}

/** `counters`: how each node's counters are read (the bridge's /metrics by default). */
export async function measureRun(
  s: Settings,
  setup: Setup,
  placement: Placement,
  rate: number | undefined,
  nodes: Server[],
  redis: Redis,
  configs: StreamingConfig[],
  counters?: (server: Server) => Promise<NodeCounters>,
): Promise<ClusterRun> {
  console.error(
    `  ${setup}, ${placement}: ${rate === undefined ? 'closed loop' : `${rate} fragments/s`}, ${s.warmupS + s.durationS} s...`,
  );
  const reading = () => read(nodes, redis, counters);
  const before = await reading();
  const window: Partial<Record<'start' | 'end', Promise<Reading>>> = {};
  const onLine = (line: string) => {
    if (line === 'MEASURING') window.start = reading();
    if (line === 'MEASURED') window.end = reading();
  };
  const generators = await Promise.all(
    configs.map((c, i) => runGenerator<StreamingResult>(c, i === 0 ? onLine : undefined)),
  );
  const after = await reading();
  for (const node of nodes)
    if (node.child.exitCode !== null) throw new Error(`a node exited during the run:\n${node.logs()}`);
  return {
    setup,
    placement,
    rate: rate ?? null,
    generators,
    fragments_per_s: generators.reduce((a, g) => a + g.fragments_per_s, 0),
    counters: difference(before, after),
    window: window.start && window.end ? difference(await window.start, await window.end) : null,
  };
}
