// A bridge node among several (REDIS_URL, O14): its link to the others, its engine, and the changes it applies
// when another node's admin API makes them. The composition root (src/server/cluster-link.ts) joins and wires it in.
import { LIMITS } from '../../generated/index.js';
import type { Logger } from '../shared/logger.js';
import { shownUrl } from '../shared/shown-url.js';
import { ClusterControl, type ControlAnswer, type ControlOp, type Gathered } from './control.js';
import { applyChange, type ControlHandlers } from './control-handlers.js';
import { ClusterEngine } from './cluster-engine.js';
import { NodeIdInUseError, RedisBus } from './redis-bus.js';
import { RedisRateLimiter } from './redis-rate-limit.js';

export class ClusterLinkError extends Error {}

export interface ClusterNode {
  bus: RedisBus;
  engine: ClusterEngine;
  /** Starts hearing the other nodes' changes and questions: once the bridge they act on exists. */
  handleChanges(handlers: ControlHandlers): void;
  /** Tells every live node a change, or asks them; resolves with their answers (waiting at most 1 s). */
  ask<O extends ControlOp>(change: O): Promise<ControlAnswer<O>[]>;
  /** As `ask`, also naming the nodes that did not answer within 1 s. */
  gather<O extends ControlOp>(change: O): Promise<Gathered<ControlAnswer<O>>>;
  close(): Promise<void>;
}

export async function joinCluster(options: {
  redisUrl: string;
  /** Of every key and channel (REDIS_PREFIX): bridges that share a Redis, each with its own, never hear each other. */
  prefix: string;
  nodeId: string | undefined;
  log: Logger;
}): Promise<ClusterNode> {
  const { log } = options;
  let bus: RedisBus;
  try {
    bus = await RedisBus.connect({
      url: options.redisUrl,
      prefix: options.prefix,
      nodeId: options.nodeId,
      heartbeatMs: LIMITS.nodeHeartbeatMs,
      expiryMs: LIMITS.nodeExpiryMs,
      log,
    });
  } catch (err) {
    if (err instanceof NodeIdInUseError) throw new ClusterLinkError(err.message);
    throw new ClusterLinkError(
      `cannot reach Redis at ${shownUrl(options.redisUrl)} (REDIS_URL): ${(err as Error).message}`,
    );
  }
  const engine = new ClusterEngine(
    bus,
    log,
    (perSecond, burst, shiftMs) => new RedisRateLimiter(bus.commands, perSecond, burst, log, bus.prefix, shiftMs),
  );
  let control: ClusterControl | undefined;
  return {
    bus,
    engine,
    handleChanges(handlers) {
      control = new ClusterControl(bus, (change) => applyChange(handlers, change), log);
    },
    ask: (change) => control?.ask(change) ?? Promise.resolve([]),
    gather: (change) => control?.gather(change) ?? Promise.resolve({ answers: [], missing: [] }),
    close: () => bus.close(),
  };
}

export type { ControlOp };
