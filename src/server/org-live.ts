// An organization's live picture (D8): its connections on this node, and on every node.
import { CONNECTIONS_LISTED_PER_APP } from '../admin/org-live.js';
import type { ControlHandlers } from '../cluster/control-handlers.js';
import type { Bridge } from '../core/bridge.js';
import { nodeConnections, type NodeConnections } from '../core/live-picture.js';
import { fromEveryNode, type Peers } from './peers.js';

/** This node's share of an organization's live picture, as it also answers the other nodes. */
function ownConnections(bridge: Bridge, nodeId: string, orgId: string): NodeConnections {
  return nodeConnections(nodeId, bridge.liveConnections(orgId), CONNECTIONS_LISTED_PER_APP);
}

export function orgLiveHandlers(bridge: Bridge, nodeId: string): Pick<ControlHandlers, 'org-live'> {
  return { 'org-live': (change) => ownConnections(bridge, nodeId, change.org_id) };
}

export function everyNodesConnections(bridge: Bridge, nodeId: string, peers: Peers) {
  return (orgId: string) =>
    fromEveryNode(ownConnections(bridge, nodeId, orgId), peers.gather({ op: 'org-live', org_id: orgId }));
}
