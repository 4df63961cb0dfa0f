// The link between the nodes of one bridge: messages to one node or to all, and which nodes are alive. Redis
// carries it in production (redis-bus.ts); tests put several nodes in one process on a memory hub (memory-bus.ts).
// Delivery is at most once and in order from one node to another; what is lost in a gap is the engine's to
// account for (cluster-engine.ts), never the bus's to hide. What crosses it is in the spec (asyncapi.yaml's internal
// `bus` channel, O16): a handler only ever gets a message of this node's version and of a kind it knows.
import type { BusMessage } from '../../generated/index.js';
import type { UnknownMessages } from './unknown-messages.js';

export type { BusMessage };

export interface Bus {
  /** This node's id: short, letters and digits (it ends the ids of the events that live here). */
  readonly nodeId: string;
  /** To one node. */
  send(node: string, message: BusMessage): void;
  /** To every other node. */
  broadcast(message: BusMessage): void;
  /** Every message for this node that it can read, with the node it came from (the others are counted, O16). */
  subscribe(handler: (from: string, message: BusMessage) => void): void;
  /** Messages of another version, kind or control op that this node heard: counted, logged, dropped (O16). */
  readonly unknownMessages: UnknownMessages;
  /** Whether `node` is alive as far as this node knows (its heartbeat has not expired). */
  isNodeUp(node: string): boolean;
  /** The other nodes alive as far as this node knows. */
  peers(): string[];
  /** Told about a node whose heartbeat expired (killed, cut off): what it held is gone. */
  onNodeDown(handler: (node: string) => void): void;
  /**
   * Told when this node's link was cut and is back: messages both ways may have been lost in the gap, so what
   * depended on them is ended and the presence picture is rebuilt.
   */
  onLinkRestored(handler: () => void): void;
  /** Told when this node's link is cut (until restored, nothing reaches the other nodes). */
  onLinkLost(handler: () => void): void;
  /** Whether the link to the other nodes is up right now (for /readyz). */
  isLinked(): boolean;
  /**
   * The record of which node holds each agent, where a node whose picture lacks an agent can ask. `claim` goes
   * out at once and settles once the record has it (every node that asks from then on finds it), or rejects when
   * it cannot (the link is down, or the record did not answer in time); `release` only removes its own claim.
   */
  claimAgent(agentId: string, holder: string): Promise<void>;
  releaseAgent(agentId: string, holder: string): void;
  /** The holder last claimed for the agent and not released (`node:stamp`), or undefined. */
  lookupAgent(agentId: string): Promise<string | undefined>;
}
