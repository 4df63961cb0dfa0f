// What an organization's live picture (D8) takes from each node: its connections of the organization's apps and
// agents, each app's cut to the oldest few with the count of them all, so that a node's answer stays small however
// many instances an app runs.
import type { ClientKind } from '../../generated/index.js';

/** One live connection of an app or agent, as the admin API's live picture shows it. */
export interface LiveClient {
  /** Its id across the bridge (`ConnectionId`, H8). */
  connection_id: string;
  kind: ClientKind;
  /** Its app_id or agent_id. */
  id: string;
  /** When its handshake completed (epoch ms, the bridge's clock). */
  connected_at: number;
  /** When its last `ping` arrived; null before the first. */
  last_ping_at: number | null;
}

/** A connection an operator closed (H8), as the core that held it tells it. */
export interface ClosedClient extends LiveClient {
  org_id: string;
}

/** The same, as its node answers the others: with the node's id. */
export interface ClosedOnNode extends ClosedClient {
  node_id: string;
}

/** One node's connections of an organization. */
export interface NodeConnections {
  node_id: string;
  /** Every agent's connection, and each app's oldest `perApp`. */
  clients: LiveClient[];
  /** Each app's connection count on this node (all of them, listed or not). */
  instances: Record<string, number>;
}

/** A node's connections (oldest first) as it reports them: at most `perApp` of each app listed, all counted. */
export function nodeConnections(nodeId: string, live: readonly LiveClient[], perApp: number): NodeConnections {
  const instances: Record<string, number> = {};
  const clients: LiveClient[] = [];
  for (const client of live) {
    if (client.kind === 'app') {
      const seen = (instances[client.id] = (instances[client.id] ?? 0) + 1);
      if (seen > perApp) continue;
    }
    clients.push(client);
  }
  return { node_id: nodeId, clients, instances };
}
