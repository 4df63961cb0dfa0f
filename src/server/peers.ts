// The other nodes of the bridge as the admin API asks them (REDIS_URL, O14): none on a bridge of one node, where
// every listing is this node's alone and every change is done once this node has made it.
import type { ClusterNode } from '../cluster/node.js';

export type Peers = Pick<ClusterNode, 'ask' | 'gather'>;

export const NO_PEERS: Peers = {
  ask: () => Promise.resolve([]),
  gather: () => Promise.resolve({ answers: [], missing: [] }),
};

/** This node's answer and every other node's, naming the nodes that did not answer. */
export async function fromEveryNode<T>(
  own: T,
  others: Promise<{ answers: T[]; missing: string[] }>,
): Promise<{ nodes: T[]; missing_nodes: string[] }> {
  const { answers, missing } = await others;
  return { nodes: [own, ...answers], missing_nodes: missing };
}
