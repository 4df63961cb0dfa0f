// Disconnecting one connection (H8): whichever node's admin API is asked, the node that holds the connection closes
// it. This node looks first; only when it holds none of that id are the others asked.
import type { ControlHandlers } from '../cluster/control-handlers.js';
import type { Bridge } from '../core/bridge.js';
import type { ClosedOnNode } from '../core/live-picture.js';
import type { Peers } from './peers.js';

/** The connection closed, if a node held it, and the nodes that did not answer within 1 s (several nodes, O14). */
export interface Disconnected {
  closed: ClosedOnNode | undefined;
  missing_nodes: string[];
}

function closeHere(bridge: Bridge, nodeId: string, connectionId: string): ClosedOnNode | undefined {
  const closed = bridge.disconnect(connectionId);
  return closed && { ...closed, node_id: nodeId };
}

export function disconnectHandlers(bridge: Bridge, nodeId: string): Pick<ControlHandlers, 'disconnect'> {
  return { disconnect: (change) => closeHere(bridge, nodeId, change.connection_id) };
}

export function disconnectOnAnyNode(bridge: Bridge, nodeId: string, peers: Peers) {
  return async (connectionId: string): Promise<Disconnected> => {
    const here = closeHere(bridge, nodeId, connectionId);
    if (here) return { closed: here, missing_nodes: [] };
    // An id is one connection's, so at most one node answers with it.
    const { answers, missing } = await peers.gather({ op: 'disconnect', connection_id: connectionId });
    return { closed: answers.find((a) => a !== undefined), missing_nodes: missing };
  };
}
