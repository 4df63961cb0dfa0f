// Where live connections are and how frames reach them. An event lives on the node of the app that sent it (its
// home): the app's connection, the event's timers and its kept text are there. What crosses nodes is the event
// toward its agent's node (`toAgent`) and the agent's messages back toward the event's home (`toEventHome`);
// presence (which node holds an agent, which apps are connected) is the router's. A single node is `LocalRouter`;
// several nodes put a router over a bus between them, and the core does not change.
import type { AgentErrorMessage, AgentReplyMessage, AgentTokenMessage } from '../../generated/index.js';

/** One live WebSocket connection, as the core sees it: it can be written to and closed. */
export interface Connection {
  readonly id: number;
  send(frame: string): void;
  close(code: number, reason: string): void;
}

/** An agent's message about one of its events: what is handed to the event's home when that is another node. */
export type AgentEventMessage = AgentTokenMessage | AgentReplyMessage | AgentErrorMessage;

/** A resume handed to the event's home node (R8): the app's request, and the app it came from. */
export interface ResumeRequest {
  event_id: string;
  resume_token: string;
  after_seq: number;
  app_id: string;
}

/** What the router tells the core about the other nodes. */
export interface RouterListener {
  /** An agent connected to another node sent this about an event held here. */
  agentMessage(agentId: string, message: AgentEventMessage): void;
  /** The agent's connection ended, or its node is gone (false), or it is connected again somewhere (true). */
  agentPresence(agentId: string, online: boolean): void;
  /** A newer connection of the agent on another node replaces `conn`, its connection here. */
  agentReplaced(agentId: string, conn: Connection): void;
  /** The link to these agents' nodes was cut: messages about their events held here may be lost in the gap. */
  agentsCutOff(agentIds: string[]): void;
  /** A connection `connId` of node `from` resumes an event held here (R8): answered with `answerResume`. */
  resumeRequest?(from: string, request: ResumeRequest, connId: number): void;
  /** Frames of an event held on another node for connection `connId` here, which resumed it: the answer first. */
  framesForApp?(from: string, connId: number, eventId: string, frames: string[]): void;
  /** Connection `connId` of node `from`, which resumed an event held here, no longer takes its frames. */
  resumerGone?(from: string, connId: number, eventId: string): void;
}

export interface Router {
  /** Appended to the ids of events made here, so that an agent's node can tell their home; '' on one node. */
  readonly eventIdSuffix: string;
  listen(listener: RouterListener): void;
  /** Makes `conn` the agent's connection; returns the connection of this node it replaces, if any. */
  attachAgent(agentId: string, conn: Connection): Connection | undefined;
  /** Forgets `conn` if it is still the agent's connection anywhere; returns whether it was. */
  detachAgent(agentId: string, conn: Connection): boolean;
  isAgentOnline(agentId: string): boolean;
  /**
   * Whether the agent is connected anywhere, asked of the record where this node's picture may lag (several
   * nodes: an agent that connected to, or left, another node a moment ago); undefined when `isAgentOnline` is
   * the truth (one node, or the agent connected to this one).
   */
  locateAgent?(agentId: string): Promise<boolean> | undefined;
  /** Delivers a frame to the agent's connection, wherever it is; false when the agent is not connected. */
  toAgent(agentId: string, frame: string): boolean;
  /** Hands an agent's message to the node its event lives on; false when that is no other live node. */
  toEventHome(agentId: string, message: AgentEventMessage): boolean;
  /** This node's first connection of the app opened (true), or its last one closed (false). */
  appPresence(appId: string, online: boolean): void;
  /** Whether the app has a live connection on any node. */
  isAppOnline(appId: string): boolean;
  /**
   * Hands a resume to the event's home when that is another node (R8); its answer and the event's later frames
   * come back through `framesForApp` for `connId`. Undefined when the event's home is this node (or the only one);
   * `up` false when the home node is known to be gone (nothing was sent).
   */
  toResumeHome?(request: ResumeRequest, connId: number): { home: string; up: boolean } | undefined;
  /** The answer to a resume `node` handed here: the frames to send its connection now (none: taken over). */
  answerResume?(node: string, connId: number, eventId: string, frames: string[]): void;
  /** The connection of another node that resumed an event held here: what is sent to it goes to that node. */
  remoteApp?(node: string, connId: number, eventId: string): Connection;
  /** Tells the event's home that connection `connId` here no longer takes the event's frames. */
  resumerGone?(home: string, connId: number, eventId: string): void;
}

/** The single-node router: the agents' connections in a map, every event at home. */
export class LocalRouter implements Router {
  readonly eventIdSuffix = '';
  private readonly agents = new Map<string, Connection>();
  private readonly apps = new Set<string>();

  listen(): void {} // no other node to hear from

  attachAgent(agentId: string, conn: Connection): Connection | undefined {
    const previous = this.agents.get(agentId);
    this.agents.set(agentId, conn);
    return previous === conn ? undefined : previous;
  }

  detachAgent(agentId: string, conn: Connection): boolean {
    if (this.agents.get(agentId) !== conn) return false;
    this.agents.delete(agentId);
    return true;
  }

  isAgentOnline(agentId: string): boolean {
    return this.agents.has(agentId);
  }

  toAgent(agentId: string, frame: string): boolean {
    const conn = this.agents.get(agentId);
    if (!conn) return false;
    conn.send(frame);
    return true;
  }

  toEventHome(): boolean {
    return false;
  }

  appPresence(appId: string, online: boolean): void {
    if (online) this.apps.add(appId);
    else this.apps.delete(appId);
  }

  isAppOnline(appId: string): boolean {
    return this.apps.has(appId);
  }
}
