// This node's link to the others (REDIS_URL, O14): joined before anything that routes through it, closed after the
// event log's last commit and after the bridge closed its connections, so the other nodes heard each agent leave.
import type { Config } from '../config.js';
import type { ControlHandlers } from '../cluster/control-handlers.js';
import { joinCluster, type ClusterNode } from '../cluster/node.js';
import { newNodeId } from '../cluster/redis-bus.js';
import type { Logger } from '../shared/logger.js';
import { registerClusterMetrics } from '../ops/cluster-metrics.js';
import type { Metrics } from '../ops/metrics.js';
import type { ChosenEngine } from './engine.js';
import type { Service } from './services.js';

export function clusterLink(
  config: Pick<Config, 'redisUrl' | 'redisPrefix' | 'nodeId'> & { redisUrl: string },
  log: Logger,
): Service<ClusterNode> {
  const { redisUrl, redisPrefix, nodeId } = config;
  return {
    name: 'cluster link',
    start: () => joinCluster({ redisUrl, prefix: redisPrefix, nodeId, log }),
    stop: (cluster) => cluster.close(),
  };
}

/** The overview and the live picture name each node: a bridge of one node has an id too (its NODE_ID, or made up). */
export function nodeIdOf(cluster: ClusterNode | undefined, config: Config): string {
  return cluster?.bus.nodeId ?? config.nodeId ?? newNodeId();
}

/** Once every handler's part exists: the node hears the others, and catches up on what it may have missed. */
export function clusterControl(cluster: ClusterNode, handlers: ControlHandlers): Service {
  return {
    name: 'cluster control',
    async start() {
      cluster.handleChanges(handlers);
      // A change another node made between this node's first read of the registrations and now was not heard.
      await handlers.directory({ op: 'directory' });
    },
  };
}

export function countClusterTraffic(metrics: Metrics, cluster: ClusterNode, chosen: ChosenEngine): void {
  const { bus, engine } = cluster;
  registerClusterMetrics(metrics.registry, {
    linked: () => bus.isLinked(),
    peers: () => bus.peers().length,
    traffic: () => bus.traffic,
    counters: () => engine.counters,
    rateLimitFallbacks: chosen.rateLimitFallbacks,
  });
}
