// The overview (D8): each node samples its own numbers into a ring; the admin API shows every node's.
import type { OverviewNode } from '../../generated/index.js';
import type { ControlHandlers } from '../cluster/control-handlers.js';
import type { OverviewRing } from '../ops/overview-ring.js';
import { fromEveryNode, type Peers } from './peers.js';
import type { Service } from './services.js';

/** Started once the bridge exists: the first sample reads its gauges. */
export function overviewSampling(overview: OverviewRing): Service<{ cancel(): void }> {
  return { name: 'overview sampling', start: () => overview.start(), stop: (timer) => timer.cancel() };
}

export function overviewHandlers(overview: OverviewRing, nodeId: string): Pick<ControlHandlers, 'overview'> {
  return { overview: (change) => overview.node(nodeId, change.after) };
}

/** Every node's numbers now and its samples taken after `after`, naming the nodes that did not answer. */
export function everyNodesOverview(
  overview: OverviewRing,
  nodeId: string,
  peers: Peers,
): (after: number | undefined) => Promise<{ nodes: OverviewNode[]; missing_nodes: string[] }> {
  return (after) =>
    fromEveryNode(
      overview.node(nodeId, after),
      peers.gather({ op: 'overview', ...(after === undefined ? {} : { after }) }),
    );
}
