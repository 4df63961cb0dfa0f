// The engine seam: where live connections are and how frames reach them, behind one contract that every engine
// implements whole. An event lives on the node of the app that sent it (its home): the app's connection, the
// event's timers and its kept text are there. What crosses nodes is the event toward its agent's node (`toAgent`),
// the agent's messages back toward the event's home (`toEventHome`), a resume toward the event's home and its
// frames back (the resume relay); presence (which node holds an agent, which apps are connected) and the per-app
// rate limit's buckets are shared state. One node runs `MemoryEngine`; several run the cluster engine over a bus
// (cluster/cluster-engine.ts). No member is optional: the core never asks which engine it has.
import type { AgentEventMessage, ResumeRequest } from '../../generated/index.js';
import type { EventRateLimit } from './rate-limit.js';

/** One live WebSocket connection, as the core sees it: it can be written to and closed. */
export interface Connection {
  readonly id: number;
  send(frame: string): void;
  close(code: number, reason: string): void;
}

// An agent's message about one of its events, and a resume handed to the event's home node (R8): the shapes the
// bus between nodes carries them in (spec/asyncapi.yaml, channel `bus`).
export type { AgentEventMessage, ResumeRequest };

/** The event a frame to an agent carries, so that its delivery can be told, with its trace context (W3C). */
export interface EventToAgent {
  eventId: string;
  traceparent: string | undefined;
}

/** What the engine tells the core: what the other nodes did (on one node: nothing, ever), and deliveries. */
export interface EngineListener {
  /** An event was handed to its agent's connection on this node (sent here or by its home node). */
  eventDelivered(agentId: string, event: EventToAgent): void;
  /** An agent connected to another node sent this about an event held here. */
  agentMessage(agentId: string, message: AgentEventMessage): void;
  /** The agent's connection ended, or its node is gone (false), or it is connected again somewhere (true). */
  agentPresence(agentId: string, online: boolean): void;
  /** A newer connection of the agent on another node replaces `conn`, its connection here. */
  agentReplaced(agentId: string, conn: Connection): void;
  /** The link to these agents' nodes was cut: messages about their events held here may be lost in the gap. */
  agentsCutOff(agentIds: string[]): void;
  /**
   * An event held here, sent to its agent's node, never reached the agent: it had left that node, or the node went
   * away before saying the event reached it (O21).
   */
  eventUndelivered(agentId: string, eventId: string): void;
  /** A connection `connId` of node `from` resumes an event held here (R8): answered with `answerResume`. */
  resumeRequest(from: string, request: ResumeRequest, connId: number): void;
  /** Frames of an event held on another node for connection `connId` here, which resumed it: the answer first. */
  framesForApp(from: string, connId: number, eventId: string, frames: string[]): void;
  /** Connection `connId` of node `from`, which resumed an event held here, no longer takes its frames. */
  resumerGone(from: string, connId: number, eventId: string): void;
  /** Connection `connId` of node `from`, which resumed an event held here, cancels it (S5). */
  cancelRequest(from: string, connId: number, eventId: string, appId: string): void;
  /** An event of the agent whose connection `conn` is on this node was cancelled: told to it if it opted in (S4). */
  cancelForAgent(conn: Connection, eventId: string): void;
  /**
   * Node `node` is gone, or (undefined) this node's link to every other is cut: nothing more comes from there for
   * the events this node's connections resumed from it, nor an answer to their cancels (R8, S5).
   */
  homesGone(node: string | undefined): void;
}

/** Which agent and app connections are live, here and on the other nodes. */
export interface Presence {
  /** Makes `conn` the agent's connection; returns the connection of this node it replaces, if any. */
  attachAgent(agentId: string, conn: Connection): Connection | undefined;
  /** Forgets `conn` if it is still the agent's connection anywhere; returns whether it was. */
  detachAgent(agentId: string, conn: Connection): boolean;
  /** Whether the agent is connected anywhere, as this node's picture has it (it may lag another node's news). */
  isAgentOnline(agentId: string): boolean;
  /**
   * Whether the agent is connected anywhere, for an event about to go to it: at once when this node's picture is
   * the truth (one node, or the agent connected here), after asking the shared record when it may lag. An agent
   * just attached here counts once every node would find it (on several nodes, once the shared record has its
   * claim: false when the record did not take it); its handshake is answered then.
   */
  locateAgent(agentId: string): boolean | Promise<boolean>;
  /** This node's first connection of the app opened (true), or its last one closed (false). */
  appPresence(appId: string, online: boolean): void;
  /** Whether the app has a live connection on any node. */
  isAppOnline(appId: string): boolean;
}

/** How frames reach an agent's connection and an event's home. */
export interface Delivery {
  /** Appended to the ids of events made here, so that an agent's node can tell their home; '' on one node. */
  readonly eventIdSuffix: string;
  /**
   * Delivers a frame to the agent's connection, wherever it is; false when the agent is not connected. An event's
   * frame names the event: its delivery is told to the listener by the node that hands it to the connection, and
   * its home hears if it reaches no agent on the way (`eventUndelivered`).
   */
  toAgent(agentId: string, frame: string, event?: EventToAgent): boolean;
  /** Hands an agent's message to the node its event lives on; false when that is this node or no live node. */
  toEventHome(agentId: string, message: AgentEventMessage): boolean;
  /**
   * An event of the agent was cancelled (S4, S5): the node its connection is on hears of it (`cancelForAgent`),
   * whichever node that is; nothing when it is connected nowhere.
   */
  cancelToAgent(agentId: string, eventId: string): void;
}

/** Resumes of an event from a connection on another node than the event's home (R8). */
export interface ResumeRelay {
  /**
   * Hands a resume to the event's home when that is another node; its answer and the event's later frames come
   * back through `framesForApp` for `connId`. Undefined when the event's home is this node; `up` false when the
   * home node is known to be gone (nothing was sent).
   */
  toResumeHome(request: ResumeRequest, connId: number): { home: string; up: boolean } | undefined;
  /** The answer to a resume `node` handed here: the frames to send its connection now (none: taken over). */
  answerResume(node: string, connId: number, eventId: string, frames: string[]): void;
  /** The connection of another node that resumed an event held here: what is sent to it goes to that node. */
  remoteApp(node: string, connId: number, eventId: string): Connection;
  /** Tells the event's home that connection `connId` here no longer takes the event's frames. */
  resumerGone(home: string, connId: number, eventId: string): void;
  /**
   * Hands the cancel of connection `connId` here, which resumed the event, to the event's home (S5): its answer
   * comes back through `framesForApp`. False when the home is known to be gone (nothing was sent).
   */
  cancelAtHome(home: string, connId: number, eventId: string, appId: string): boolean;
}

/** The per-app event rate limit (§7.1, L10), its buckets kept where every node of the bridge draws on them. */
export interface SharedRateLimits {
  /** `shiftMs`: added to the shared buckets' own time (the test clock's advance; 0 in production). */
  eventRateLimit(perSecond: number, burst: number, shiftMs?: () => number): EventRateLimit;
  /**
   * An app's event to `agentId`, what it needs of the shared state: a token of the app's bucket in `limit` (made by
   * `eventRateLimit`), and how to locate the agent once the checks between the two have passed (W7), as
   * `locateAgent` would. On several nodes one Redis round trip answers both (O20): a promise whenever there is one.
   */
  takeForEvent(limit: EventRateLimit, appId: string, agentId: string, now: number): Taken | Promise<Taken>;
}

/** A token taken for an event: `wait` 0 when admitted (else the seconds until one is available), and its agent. */
export interface Taken {
  wait: number;
  /** Whether the agent is connected anywhere; asked only once the event passed the checks after the rate limit. */
  locate(): boolean | Promise<boolean>;
}

/** The token and then the agent, each asked apart (what an engine does when one answer has no round trip). */
export function takeThenLocate(
  limit: EventRateLimit,
  appId: string,
  now: number,
  locate: () => boolean | Promise<boolean>,
): Taken | Promise<Taken> {
  const wait = limit.take(appId, now);
  return typeof wait === 'number' ? { wait, locate } : wait.then((seconds) => ({ wait: seconds, locate }));
}

export interface Engine extends Presence, Delivery, ResumeRelay, SharedRateLimits {
  /** Where the engine tells the core what the other nodes did: set once, by the core. */
  listen(listener: EngineListener): void;
}
