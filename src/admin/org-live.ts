// An organization's live picture (D8): its apps and agents from the directory, their connections as every node
// reported them, and each agent's last minute from the event log, put together as GET …/live answers.
import {
  FIELD_BOUNDS,
  type AgentLastMinute,
  type LiveConnection,
  type OrganizationLive,
} from '../../generated/index.js';
import type { Directory } from '../core/directory.js';
import type { LiveClient, NodeConnections } from '../core/live-picture.js';
import { iso } from '../shared/time.js';
import { problem } from './problem.js';

/** An app's connections listed in the picture (`instances` counts them all). */
export const CONNECTIONS_LISTED_PER_APP = FIELD_BOUNDS.AppLive.connections.maxItems;

/** "The last minute" of an agent's events. */
export const LAST_MINUTE_MS = 60_000;

/** A connection and the node holding it. */
interface Placed {
  node_id: string;
  client: LiveClient;
}

/** NOT_FOUND unless the organization exists. */
export function requireOrganization(directory: Directory, orgId: string): void {
  if (!directory.orgs.has(orgId)) throw problem('NOT_FOUND', 'organization', { org_id: orgId });
}

export function organizationLive(
  directory: Directory,
  orgId: string,
  nodes: readonly NodeConnections[],
  lastMinute: ReadonlyMap<string, AgentLastMinute>,
  missingNodes: readonly string[],
): OrganizationLive {
  const byOwner = new Map<string, Placed[]>();
  const instances = new Map<string, number>();
  for (const node of nodes) {
    for (const client of node.clients) {
      const key = `${client.kind}:${client.id}`;
      let placed = byOwner.get(key);
      if (!placed) byOwner.set(key, (placed = []));
      placed.push({ node_id: node.node_id, client });
    }
    for (const [appId, count] of Object.entries(node.instances))
      instances.set(appId, (instances.get(appId) ?? 0) + count);
  }
  const view = ({ node_id, client }: Placed): LiveConnection => ({
    // A node of an older release names no connection (O16): it cannot be closed by id.
    connection_id: (client.connection_id as string | undefined) ?? null,
    node_id,
    connected_at: iso(client.connected_at),
    last_ping_at: client.last_ping_at === null ? null : iso(client.last_ping_at),
  });
  const oldestFirst = (list: Placed[]) => list.sort((a, b) => a.client.connected_at - b.client.connected_at);
  const byId =
    <T>(key: (t: T) => string) =>
    (a: T, b: T) =>
      key(a).localeCompare(key(b));
  const apps = [...directory.apps.values()].filter((a) => a.org_id === orgId).sort(byId((a) => a.app_id));
  const agents = [...directory.agents.values()].filter((a) => a.org_id === orgId).sort(byId((a) => a.agent_id));
  return {
    org_id: orgId,
    apps: apps.map(({ app_id }) => ({
      app_id,
      instances: instances.get(app_id) ?? 0,
      connections: oldestFirst(byOwner.get(`app:${app_id}`) ?? [])
        .slice(0, CONNECTIONS_LISTED_PER_APP)
        .map(view),
    })),
    agents: agents.map(({ agent_id }) => {
      // Two only for the moment a newer connection on another node replaces the older (L8): the newer is the one.
      const newest = oldestFirst(byOwner.get(`agent:${agent_id}`) ?? []).at(-1);
      return {
        agent_id,
        connection: newest ? view(newest) : null,
        last_minute: lastMinute.get(agent_id) ?? { events: 0, errors: 0 },
      };
    }),
    missing_nodes: [...missingNodes].sort(),
  };
}
