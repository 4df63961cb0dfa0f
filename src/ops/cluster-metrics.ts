// Metrics of a node among several (O14): the link, the other nodes, what went through Redis and what crossing
// nodes lost. Read when scraped, like the bridge's own counters.
import { Gauge, type Registry } from 'prom-client';
import type { ClusterCounters } from '../cluster/cluster-engine.js';
import type { BusTraffic } from '../cluster/redis-bus.js';
import { countedByLabel } from './metrics.js';

export interface ClusterStats {
  linked(): boolean;
  peers(): number;
  traffic(): BusTraffic;
  counters(): ClusterCounters;
  rateLimitFallbacks(): number;
}

export function registerClusterMetrics(registry: Registry, stats: ClusterStats): void {
  new Gauge({
    name: 'bridge_cluster_linked',
    help: '1 while this node is linked to the others through Redis, 0 while it is cut off (it is then not ready).',
    registers: [registry],
    collect() {
      this.set(stats.linked() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'bridge_cluster_peers',
    help: 'Other nodes alive as this node sees them (their heartbeat has not expired).',
    registers: [registry],
    collect() {
      this.set(stats.peers());
    },
  });
  countedByLabel(
    registry,
    'bridge_cluster_bus_total',
    'What this node sent to the others through Redis: publishes (PUBLISH commands), messages (carried by them, several per publish in a burst), dropped (not sent: the link was down).',
    'what',
    () => ({ ...stats.traffic() }),
  );
  countedByLabel(
    registry,
    'bridge_cluster_lost_total',
    'What crossing nodes lost, by what: frames for an agent that had left this node, agent messages for an event whose node is gone, events ended because the link was cut (each also logged).',
    'what',
    () => {
      const { unknownMessages: _, ...lost } = stats.counters();
      return lost;
    },
  );
  countedByLabel(
    registry,
    'bridge_cluster_messages_unknown_total',
    'Messages from other nodes that this node does not know, by reason: version (another bus version), kind (a kind of a newer release), dropped; op (a control op of a newer release), answered as unknown (O16; logged a burst at a time).',
    'reason',
    () => ({ ...stats.counters().unknownMessages }),
  );
  countedByLabel(
    registry,
    'bridge_cluster_rate_limit_fallbacks_total',
    'Events whose rate limit this node decided alone because Redis did not answer.',
    'limiter',
    () => ({ node: stats.rateLimitFallbacks() }),
  );
}
